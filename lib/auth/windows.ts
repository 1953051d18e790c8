// Fixed-window attempt counters in Redis for the account endpoints (sign-up, sign-in, team-member add).
// Keys are HMAC digests of what they count, so neither addresses nor emails sit in Redis in the clear.
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

export interface Window {
  key: string;
  limit: number;
  seconds: number;
}

// Counts one attempt in every window unless one is already full; a refused attempt counts nowhere, so a
// client that keeps knocking cannot extend its own window. Returns 0 when counted, else the seconds until
// the first full window resets.
const TAKE = `
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n >= tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl < 0 then
      redis.call('EXPIRE', KEYS[i], ARGV[2 * i])
      ttl = tonumber(ARGV[2 * i])
    end
    return math.max(ttl, 1)
  end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], ARGV[2 * i]) end
end
return 0
`;

// Gives one attempt back (a success that should not count); never creates a key or goes below zero.
const GIVE_BACK = `
for i = 1, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`;

/** Seconds until the blocking window resets, or 0 when the attempt was counted in every window. */
export async function takeAttempt(redis: Redis, windows: Window[]): Promise<number> {
  const args = windows.flatMap((w) => [String(w.limit), String(w.seconds)]);
  return Number(await redis.eval(TAKE, windows.length, ...windows.map((w) => w.key), ...args));
}

export async function giveBack(redis: Redis, keys: string[]): Promise<void> {
  await redis.eval(GIVE_BACK, keys.length, ...keys);
}

/**
 * Builds Redis keys under `<prefix>:<scope>:` from HMAC digests of the counted values. `.client(kind, ip, …)`
 * is the key of a window counted per client: every client-keyed limit goes through it, so all count the
 * address by its clientBucket.
 */
export function windowKeys(prefix: string, secret: string, scope: string) {
  const key = (kind: string, ...values: string[]) =>
    redisKey(
      prefix,
      scope,
      kind,
      createHmac('sha256', secret)
        .update(`${scope}\0${kind}\0${values.join('\0')}`)
        .digest('hex')
        .slice(0, 32),
    );
  key.client = (kind: string, ip: string | undefined, ...values: string[]) => key(kind, clientBucket(ip), ...values);
  return key;
}

/**
 * What a per-client limit counts by: an IPv4 address whole (an IPv4-mapped IPv6 address is its IPv4 address),
 * an IPv6 address by its /64 — one subscriber's network, where rotating through 2^64 addresses would
 * otherwise make every guess a new client. No address, or a string that is none, is the one client "unknown".
 */
export function clientBucket(ip: string | undefined): string {
  let address = ip?.trim() ?? '';
  const zone = address.indexOf('%'); // fe80::1%eth0: the zone names an interface
  if (zone !== -1) address = address.slice(0, zone);
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return 'unknown';
  const g = ipv6Groups(address);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255].join('.');
  }
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a string isIP accepted as IPv6 (with "::" and a dotted IPv4 tail expanded). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((h) => {
      if (!h.includes('.')) return [parseInt(h, 16)];
      const [a, b, c, d] = h.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const gap = address.indexOf('::');
  if (gap === -1) return parse(address);
  const head = parse(address.slice(0, gap));
  const tail = parse(address.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
