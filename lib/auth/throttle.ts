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
  /** Throws 429 when either counter is over its limit. */
  check(email: string, clientIp: string): Promise<void>;
  fail(email: string, clientIp: string): Promise<void>;
  succeed(email: string): Promise<void>;
}

export function createLoginThrottle(redis: Redis, prefix: string, secret: string): LoginThrottle {
  const digest = (kind: string, value: string) => createHmac('sha256', secret).update(`${kind}:${value}`).digest('hex').slice(0, 32);
  const emailKey = (email: string) => redisKey(prefix, 'login-fail', 'email', digest('email', email.toLowerCase()));
  const clientKey = (ip: string) => redisKey(prefix, 'login-fail', 'ip', digest('ip', ip));
  const tooMany = () =>
    new HttpError(429, 'RATE_LIMITED', 'Too many failed sign-in attempts; try again later', {
      'Retry-After': String(LOGIN_WINDOW_SECONDS),
    });
  return {
    async check(email, clientIp) {
      const [byEmail, byClient] = await redis.mget(emailKey(email), clientKey(clientIp));
      if (Number(byEmail ?? 0) >= MAX_FAILURES_PER_EMAIL || Number(byClient ?? 0) >= MAX_FAILURES_PER_CLIENT) throw tooMany();
    },
    async fail(email, clientIp) {
      const multi = redis.multi();
      for (const key of [emailKey(email), clientKey(clientIp)]) {
        multi.incr(key);
        multi.expire(key, LOGIN_WINDOW_SECONDS, 'NX');
      }
      await multi.exec();
    },
    async succeed(email) {
      await redis.del(emailKey(email));
    },
  };
}
