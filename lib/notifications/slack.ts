// A Slack-compatible incoming webhook: one POST of {text, blocks?} as JSON. The URL was judged when it was saved
// (lib/accounts/webhookUrl.ts); here the address actually connected to is judged too, since a public name can
// resolve to a private address by the time of sending. Redirects are not followed.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPrivateHost, webhookUrlProblem } from '../accounts/webhookUrl';

export interface SlackMessage {
  text: string;
  blocks?: unknown[];
}

const SLACK_TIMEOUT_MS = 10_000;

export class SlackError extends Error {}

/** How a host name becomes addresses: dns.lookup (every address); tests give their own resolver. */
export type Resolver = (hostname: string) => Promise<dns.LookupAddress[]>;
const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true });

/** A net lookup that refuses every answer naming a private, loopback or link-local address. */
export function publicOnlyLookup(resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (list) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = list.filter((a) => family === undefined || a.family === family);
        if (list.some((a) => isPrivateHost(a.address)) || usable.length === 0) {
          return callback(new SlackError('the webhook host resolves to a private address'), '', 0);
        }
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
        callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** Posts one message; throws SlackError (never naming the URL, a secret) unless the receiver answers 2xx. */
export async function postToSlack(
  url: string,
  message: SlackMessage,
  opts: { allowPrivate: boolean; timeoutMs?: number; resolver?: Resolver },
): Promise<void> {
  const problem = webhookUrlProblem(url, opts.allowPrivate);
  if (problem) throw new SlackError(`Slack webhook refused: ${problem}`);
  const target = new URL(url);
  const body = JSON.stringify(message);
  const request = target.protocol === 'https:' ? https.request : http.request;
  await new Promise<void>((resolve, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: opts.timeoutMs ?? SLACK_TIMEOUT_MS,
        ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup(opts.resolver) }),
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new SlackError(`Slack webhook answered ${status}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new SlackError('Slack webhook did not answer in time')));
    req.on('error', (err) =>
      reject(err instanceof SlackError ? err : new SlackError(`Slack webhook unreachable: ${err.message}`)),
    );
    req.end(body);
  });
}
