// Failed-login throttling per email and per client (IP hash), in fixed Redis windows. Only hashes are
// used as keys, so neither addresses nor emails sit in Redis in the clear.
import { createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import { HttpError } from '../errors';
import { redisKey } from '../redis';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_CLIENT = 50;

export interface LoginThrottle {
  /**
   * Counts an attempt before the password is checked (atomically, so parallel guesses are all counted) and
   * throws 429 once either counter is past its limit.
   */
  attempt(email: string, clientIp: string): Promise<void>;
  /** A successful sign-in does not count: the email's counter is cleared, the client's given back. */
  succeed(email: string, clientIp: string): Promise<void>;
}

export function createLoginThrottle(redis: Redis, prefix: string, secret: string): LoginThrottle {
  const digest = (kind: string, value: string) => createHmac('sha256', secret).update(`${kind}:${value}`).digest('hex').slice(0, 32);
  const emailKey = (email: string) => redisKey(prefix, 'login-fail', 'email', digest('email', email.toLowerCase()));
  const clientKey = (ip: string) => redisKey(prefix, 'login-fail', 'ip', digest('ip', ip));
  return {
    async attempt(email, clientIp) {
      const multi = redis.multi();
      for (const key of [emailKey(email), clientKey(clientIp)]) {
        multi.incr(key);
        multi.expire(key, LOGIN_WINDOW_SECONDS, 'NX');
      }
      const replies = (await multi.exec()) ?? [];
      const byEmail = Number(replies[0]?.[1] ?? 0);
      const byClient = Number(replies[2]?.[1] ?? 0);
      if (byEmail > MAX_FAILURES_PER_EMAIL || byClient > MAX_FAILURES_PER_CLIENT) {
        throw new HttpError(429, 'RATE_LIMITED', 'Too many failed sign-in attempts; try again later', {
          'Retry-After': String(LOGIN_WINDOW_SECONDS),
        });
      }
    },
    async succeed(email, clientIp) {
      await redis.multi().del(emailKey(email)).decr(clientKey(clientIp)).exec();
    },
  };
}
