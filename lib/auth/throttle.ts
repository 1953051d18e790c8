// Sign-in throttling (issue 19 item 12). No counter hard-locks an account: guesses are limited per
// (email, client) and per client across emails, and a spray from many clients only slows the email down —
// a client with no failure for that email always gets its attempt, so the owner can still sign in.
import type { Redis } from 'ioredis';
import { giveBack, rateLimited, windowKeys } from './windows';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failures one client may make on one email per window. */
export const MAX_FAILURES_PER_PAIR = 10;
/** Failures one client may make across all emails per window (credential stuffing). */
export const MAX_FAILURES_PER_CLIENT = 50;
/** Failures on one email, from anywhere, per EMAIL_WINDOW_SECONDS before it is slowed down. */
export const EMAIL_SLOWDOWN_AFTER = 20;
export const EMAIL_WINDOW_SECONDS = 60 * 60;
/** While slowed, clients that already failed on the email share this many attempts per SLOW_WINDOW_SECONDS. */
export const SLOW_ATTEMPTS = 3;
export const SLOW_WINDOW_SECONDS = 60;

// KEYS: pair, client, email, email's slow window. ARGV: login window, pair max, client max, slowdown
// threshold, email window, slow attempts, slow window. Attempts are counted before the password check (a
// burst of parallel guesses is counted whole); a refused attempt is counted nowhere, so knocking never
// extends a window. Returns 0, or the seconds until the blocking window resets.
const ATTEMPT = `
local function count(k) return tonumber(redis.call('GET', k) or '0') end
local function left(k, seconds)
  local t = redis.call('TTL', k)
  if t < 0 then redis.call('EXPIRE', k, seconds); return tonumber(seconds) end
  return math.max(t, 1)
end
local pair = count(KEYS[1])
if pair >= tonumber(ARGV[2]) then return left(KEYS[1], ARGV[1]) end
if count(KEYS[2]) >= tonumber(ARGV[3]) then return left(KEYS[2], ARGV[1]) end
if pair > 0 and count(KEYS[3]) >= tonumber(ARGV[4]) then
  local used = redis.call('INCR', KEYS[4])
  if used == 1 then redis.call('EXPIRE', KEYS[4], ARGV[7]) end
  if used > tonumber(ARGV[6]) then return left(KEYS[4], ARGV[7]) end
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if redis.call('INCR', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
if redis.call('INCR', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
return 0
`;

export interface LoginThrottle {
  /** Counts an attempt before the password is checked and throws 429 when a limit refuses it. */
  attempt(email: string, clientIp: string): Promise<void>;
  /** A successful sign-in does not count: the pair's failures are forgotten, the other counters given back. */
  succeed(email: string, clientIp: string): Promise<void>;
}

export function createLoginThrottle(redis: Redis, prefix: string, secret: string): LoginThrottle {
  const key = windowKeys(prefix, secret, 'login-fail');
  const keys = (email: string, ip: string) => {
    const e = email.toLowerCase();
    return { pair: key('pair', e, ip), client: key('ip', ip), email: key('email', e), slow: key('slow', e) };
  };
  return {
    async attempt(email, clientIp) {
      const k = keys(email, clientIp);
      const wait = Number(
        await redis.eval(
          ATTEMPT,
          4,
          k.pair,
          k.client,
          k.email,
          k.slow,
          LOGIN_WINDOW_SECONDS,
          MAX_FAILURES_PER_PAIR,
          MAX_FAILURES_PER_CLIENT,
          EMAIL_SLOWDOWN_AFTER,
          EMAIL_WINDOW_SECONDS,
          SLOW_ATTEMPTS,
          SLOW_WINDOW_SECONDS,
        ),
      );
      if (wait > 0) throw rateLimited('Too many sign-in attempts; try again later', wait);
    },
    async succeed(email, clientIp) {
      const k = keys(email, clientIp);
      await redis.del(k.pair);
      await giveBack(redis, [k.client, k.email]);
    },
  };
}
