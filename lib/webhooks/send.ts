// One signed POST to a webhook receiver (docs/webhooks.md "Delivery"): connected to the address resolveTarget
// judged, never following a redirect (a 3xx is a failure), bounded by a timeout, the answer's body read only far
// enough to free the connection.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { VERSION } from '../version';
import { signatureHeader } from './signature';
import { type ResolveHost, resolveTarget, TargetRefused, type TargetRules } from './target';

export const USER_AGENT = `Tidemark-Webhooks/${VERSION}`;

// Connections are kept between deliveries to one receiver (a TCP and TLS handshake per event would cap a busy
// webhook far below its receiver). A pooled socket was opened to an address judged when it was opened; idle
// ones close after 4 s, before the usual 5 s of receivers' servers, so a reused socket is rarely one being closed.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4_000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4_000 }),
};

export interface SendRequest {
  url: string;
  secret: string;
  event: string;
  deliveryId: string;
  body: string;
  timeoutMs: number;
  rules: TargetRules;
  resolve: ResolveHost;
  /** The signature's clock, seconds (tests pin it). */
  now?: () => number;
}

export interface SendResult {
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed, in words fit for the deliveries log (never the URL or the secret). */
  error?: string;
  durationMs: number;
}

export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({
    ...r,
    durationMs: Math.round(performance.now() - started),
  });
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    target = await resolveTarget(req.url, req.rules, req.resolve);
  } catch (err) {
    return done({ ok: false, error: err instanceof TargetRefused ? err.message : 'the URL cannot be reached' });
  }
  const unix = Math.floor(req.now ? req.now() : Date.now() / 1000);
  // The socket connects to the judged address; the Host header and TLS name stay the URL's host.
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const transport = target.url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    const request = transport.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: agents[target.url.protocol as keyof typeof agents],
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(req.body),
          'user-agent': USER_AGENT,
          'x-tidemark-event': req.event,
          'x-tidemark-delivery': req.deliveryId,
          'x-tidemark-signature': signatureHeader(req.secret, req.body, unix),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > 64 * 1024) res.destroy(); // a receiver's answer is not read for its content
        });
        const settle = () => {
          if (status >= 200 && status < 300) finish({ ok: true, status });
          else if (status >= 300 && status < 400)
            finish({ ok: false, status, error: `redirect (${status}) not followed` });
          else finish({ ok: false, status, error: `HTTP ${status}` });
        };
        res.on('end', settle);
        res.on('close', settle);
        res.on('error', settle);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, error: `no answer within ${req.timeoutMs} ms` });
    }, req.timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, error: `connection failed (${err.code ?? 'error'})` }),
    );
    request.end(req.body);
  });
}
