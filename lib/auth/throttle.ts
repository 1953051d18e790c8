// Sign-in throttling (issue 19 item 12). No counter hard-locks an account: guesses are limited per
// (email, client) and per client across emails (clients are counted by clientBucket: an IPv6 /64 is one
// client). Once an email has many failures, every client shares a small per-email allowance, however many
// addresses it sprays from; only a known device (a browser that signed in to the account before,
// lib/auth/devices.ts) is exempt, so the owner on it always gets in and a new device waits about a minute.
// The password asked again of a signed-in user (changing it, deleting the account) is counted per user, from
// any client: only a holder of the user's token can make those guesses, so a hard limit locks out no one else.
import type { Redis } from 'ioredis';
import { rateLimited } from '../errors';
import { giveBack, windowKeys } from './windows';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failures one client (or one known device) may make on one email per window. */
export const MAX_FAILURES_PER_PAIR = 10;
/** Failures one client may make across all emails per window (credential stuffing). */
export const MAX_FAILURES_PER_CLIENT = 50;
/** Failures on one email, from anywhere, per EMAIL_WINDOW_SECONDS before it is slowed down. */
export const EMAIL_SLOWDOWN_AFTER = 20;
export const EMAIL_WINDOW_SECONDS = 60 * 60;
/** While slowed, all clients but known devices share this many attempts on the email per SLOW_WINDOW_SECONDS. */
export const SLOW_ATTEMPTS = 3;
export const SLOW_WINDOW_SECONDS = 60;

// KEYS: pair (email + client, or email + device for a known device), client, email, email's slow window.
// ARGV: login window, pair max, client max, slowdown threshold, email window, slow attempts, slow window,
// known device (1/0). A known device is limited by its own pair only. Attempts are counted before the
// password check (a burst of parallel guesses is counted whole); a refused attempt is counted nowhere, so
// knocking never extends a window. Returns 0, or the seconds until the blocking window resets.
const ATTEMPT = `
local function count(k) return tonumber(redis.call('GET', k) or '0') end
local function left(k, seconds)
  local t = redis.call('TTL', k)
  if t < 0 then redis.call('EXPIRE', k, seconds); return tonumber(seconds) end
  return math.max(t, 1)
end
local function incr(k, seconds)
  if redis.call('INCR', k) == 1 then redis.call('EXPIRE', k, seconds) end
end
local known = ARGV[8] == '1'
local slowed = false
if count(KEYS[1]) >= tonumber(ARGV[2]) then return left(KEYS[1], ARGV[1]) end
if not known then
  if count(KEYS[2]) >= tonumber(ARGV[3]) then return left(KEYS[2], ARGV[1]) end
  if count(KEYS[3]) >= tonumber(ARGV[4]) then
    if count(KEYS[4]) >= tonumber(ARGV[6]) then return left(KEYS[4], ARGV[7]) end
    slowed = true
  end
end
incr(KEYS[1], ARGV[1])
if not known then incr(KEYS[2], ARGV[1]) end
incr(KEYS[3], ARGV[5])
if slowed then incr(KEYS[4], ARGV[7]) end
return 0
`;

export interface LoginThrottle {
  /**
   * Counts an attempt before the password is checked and throws 429 when a limit refuses it. `device` is the
   * id of a known device of this email's user (verified by the caller), else undefined.
   */
  attempt(email: string, clientIp: string | undefined, device?: string): Promise<void>;
  /** A successful sign-in does not count: the pair's failures are forgotten, the other counters given back. */
  succeed(email: string, clientIp: string | undefined, device?: string): Promise<void>;
  /**
   * The same for the current password asked of a signed-in user: MAX_FAILURES_PER_PAIR per LOGIN_WINDOW_SECONDS
   * per user whatever the client, also counted on the email's sign-in slowdown.
   */
  reauthAttempt(userId: string, email: string): Promise<void>;
  reauthSucceed(userId: string, email: string): Promise<void>;
}

export function createLoginThrottle(redis: Redis, prefix: string, secret: string): LoginThrottle {
  const key = windowKeys(prefix, secret, 'login-fail');
  const keys = (email: string, ip: string | undefined, device: string | undefined) => {
    const e = email.toLowerCase();
    return {
      pair: device ? key('device', e, device) : key.client('pair', ip, e),
      client: key.client('ip', ip),
      email: key('email', e),
      slow: key('slow', e),
    };
  };
  // Seconds to wait, or 0. `exempt`: limited by the pair only, as a known device is (the script's ARGV[8]).
  const run = async (k: ReturnType<typeof keys>, exempt: boolean) =>
    Number(
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
        exempt ? 1 : 0,
      ),
    );
  const reauthKeys = (userId: string, email: string) => ({
    ...keys(email, undefined, undefined),
    pair: key('user', userId),
  });
  return {
    async attempt(email, clientIp, device) {
      const wait = await run(keys(email, clientIp, device), Boolean(device));
      if (wait > 0) throw rateLimited('Too many sign-in attempts; try again later', wait);
    },
    async succeed(email, clientIp, device) {
      const k = keys(email, clientIp, device);
      await redis.del(k.pair);
      await giveBack(redis, device ? [k.email] : [k.client, k.email]);
    },
    async reauthAttempt(userId, email) {
      const wait = await run(reauthKeys(userId, email), true);
      if (wait > 0) throw rateLimited('Too many wrong passwords; try again later', wait);
    },
    async reauthSucceed(userId, email) {
      const k = reauthKeys(userId, email);
      await redis.del(k.pair);
      await giveBack(redis, [k.email]);
    },
  };
}
