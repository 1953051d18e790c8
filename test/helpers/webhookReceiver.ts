// A loopback HTTP server standing in for a webhook receiver: records each request (headers and raw body) and
// answers what the test tells it to.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Status and optional delay (ms) for the next request; the default answers 200 at once. */
  answer: (req: Received) => { status: number; delayMs?: number; headers?: Record<string, string> };
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const receiver = { received, answer: () => ({ status: 200 }) } as unknown as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      const { status, delayMs, headers } = receiver.answer(r);
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(status, headers).end('ok');
      };
      if (delayMs) setTimeout(reply, delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** What a receiver does (README "Verifying a delivery"): HMAC of "t.body", compared in constant time, t recent. */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, windowSeconds = 300) {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts.t);
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return (
    given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(nowSeconds - t) <= windowSeconds
  );
}
