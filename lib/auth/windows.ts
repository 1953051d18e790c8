// Fixed-window attempt counters in Redis for the account endpoints (sign-up, sign-in, team-member add).
// Keys are HMAC digests of what they count, so neither addresses nor emails sit in Redis in the clear.
import { createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import { HttpError } from '../errors';
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

export function rateLimited(message: string, retryAfterSeconds: number): HttpError {
  return new HttpError(429, 'RATE_LIMITED', message, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}

/** Builds Redis keys under `<prefix>:<scope>:` from HMAC digests of the counted values. */
export function windowKeys(prefix: string, secret: string, scope: string) {
  return (kind: string, ...values: string[]) =>
    redisKey(prefix, scope, kind, createHmac('sha256', secret).update(`${scope}\0${kind}\0${values.join('\0')}`).digest('hex').slice(0, 32));
}
