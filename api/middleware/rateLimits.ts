// Per-key per-minute limits (express-rate-limit + rate-limit-redis, fixed 60 s windows) and the per-team
// monthly quota, as DESIGN §3 "Plans" sets them. Both run after authentication, so 401s cost nothing.
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { HttpError } from '../../lib/errors';
import { MonthlyUsage } from '../../lib/limits/usage';
import { effectiveLimits } from '../../lib/plans';
import { redisKey, type Redis } from '../../lib/redis';
import { apiKey } from './auth';
import { errorBody } from './envelope';

function unavailable(): HttpError {
  return new HttpError(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable; retry shortly', { 'Retry-After': '5' });
}

/** Requests per minute for the authenticated key; `scope` keeps ingestion and reads in separate windows. */
export function perMinuteLimit(redis: Redis, prefix: string, scope: 'ingest' | 'external'): RequestHandler {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: (_req, res) => effectiveLimits(apiKey(res).plan, apiKey(res).limitOverrides).requestsPerMinute ?? 0,
    skip: (_req, res) => effectiveLimits(apiKey(res).plan, apiKey(res).limitOverrides).requestsPerMinute === null,
    keyGenerator: (_req, res) => apiKey(res).keyId,
    legacyHeaders: true,
    standardHeaders: false,
    validate: false,
    store: new RedisStore({
      prefix: `${redisKey(prefix, 'rl', scope)}:`,
      // ioredis' call() takes the command name first; the store hands us the full argv.
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    }),
    handler: (_req, res) => {
      res.status(429).json(errorBody('RATE_LIMITED', 'Rate limit exceeded; retry after the window resets'));
    },
  });
  return (req, res, next) => {
    // A store failure (Redis down) must not become a 500 or let traffic through unmetered.
    Promise.resolve(limiter(req, res, (err?: unknown) => (err ? next(unavailable()) : next()))).catch(() => next(unavailable()));
  };
}

/** Charges `credits` against the team's monthly quota; refunds when the request does not succeed. */
export function monthlyQuota(redis: Redis, prefix: string, credits: number): RequestHandler {
  const usage = new MonthlyUsage(redis, prefix);
  return async (_req, res, next) => {
    const key = apiKey(res);
    const limit = effectiveLimits(key.plan, key.limitOverrides).requestsPerMonth;
    let state;
    try {
      state = await usage.charge(key.teamId, credits, limit);
    } catch {
      throw unavailable();
    }
    if (state.limit !== null) {
      res.setHeader('X-Usage-Limit', String(state.limit));
      res.setHeader('X-Usage-Remaining', String(state.remaining));
      res.setHeader('X-Usage-Reset', String(state.resetAt));
    }
    if (!state.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'Monthly request quota exhausted', {
        'Retry-After': String(Math.max(1, state.resetAt - Math.floor(Date.now() / 1000))),
      });
    }
    res.on('finish', () => {
      if (res.statusCode >= 400) usage.refund(key.teamId, credits).catch(() => undefined);
    });
    next();
  };
}
