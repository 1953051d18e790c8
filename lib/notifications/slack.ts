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

/** dns.lookup that refuses every answer naming a private, loopback or link-local address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => isPrivateHost(a.address));
    if (bad || list.length === 0) {
      return callback(new SlackError('the webhook host resolves to a private address'), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0].address, list[0].family);
  });
};

/** Posts one message; throws SlackError (never naming the URL, a secret) unless the receiver answers 2xx. */
export async function postToSlack(
  url: string,
  message: SlackMessage,
  opts: { allowPrivate: boolean; timeoutMs?: number },
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
        ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup }),
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
