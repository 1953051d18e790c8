// Per-key per-minute limits (express-rate-limit + rate-limit-redis, fixed 60 s windows) and the per-team
// monthly quota, as DESIGN §3 "Plans" sets them. Both run after authentication, so 401s cost nothing.
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { type RedisReply, RedisStore } from 'rate-limit-redis';
import { liftHint } from '../../lib/accounts/teams';
import { rateLimited, serviceUnavailable } from '../../lib/errors';
import { MonthlyUsage, nextMonthStart } from '../../lib/limits/usage';
import { effectiveLimits } from '../../lib/plans';
import { type Redis, redisKey } from '../../lib/redis';
import { apiKey, reader } from './auth';
import { errorBody } from './envelope';

function isUser(res: Parameters<typeof reader>[0]): boolean {
  return res.locals.reader !== undefined && reader(res).kind === 'user';
}

/** Requests per minute for the authenticated key; `scope` keeps ingestion and reads in separate windows. */
export function perMinuteLimit(redis: Redis, prefix: string, scope: 'ingest' | 'external'): RequestHandler {
  const usage = new MonthlyUsage(redis, prefix);
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: (_req, res) => effectiveLimits(apiKey(res).plan, apiKey(res).limitOverrides).requestsPerMinute ?? 0,
    // Signed-in users reading their own analytics are not API clients: no per-minute window, no credits.
    skip: (_req, res) =>
      isUser(res) || effectiveLimits(apiKey(res).plan, apiKey(res).limitOverrides).requestsPerMinute === null,
    keyGenerator: (_req, res) => apiKey(res).keyId,
    legacyHeaders: true,
    standardHeaders: false,
    validate: false,
    store: new RedisStore({
      prefix: `${redisKey(prefix, 'rl', scope)}:`,
      // ioredis' call() takes the command name first; the store hands us the full argv.
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    }),
    handler: async (_req, res) => {
      // Every ingestion 429 carries the monthly usage too (DESIGN §3), read without charging.
      const key = apiKey(res);
      const limit = effectiveLimits(key.plan, key.limitOverrides).requestsPerMonth;
      const used = await usage.used(key.teamId).catch(() => undefined);
      if (limit !== null && used !== undefined) {
        res.setHeader('X-Usage-Limit', String(limit));
        res.setHeader('X-Usage-Remaining', String(Math.max(0, limit - used)));
        res.setHeader('X-Usage-Reset', String(Math.floor(nextMonthStart(Date.now()) / 1000)));
      }
      res
        .status(429)
        .json(
          errorBody(
            'RATE_LIMITED',
            `Rate limit exceeded; retry after the window resets (the ${key.plan} plan's per-minute limit: ${liftHint(key.teamId)})`,
          ),
        );
    },
  });
  return (req, res, next) => {
    // A store failure (Redis down) must not become a 500 or let traffic through unmetered.
    Promise.resolve(limiter(req, res, (err?: unknown) => (err ? next(serviceUnavailable()) : next()))).catch(() =>
      next(serviceUnavailable()),
    );
  };
}

/** Charges `credits` against the team's monthly quota; refunds when the request does not succeed. */
export function monthlyQuota(redis: Redis, prefix: string, credits: number): RequestHandler {
  const usage = new MonthlyUsage(redis, prefix);
  return async (_req, res, next) => {
    if (isUser(res)) return next();
    const key = apiKey(res);
    const limit = effectiveLimits(key.plan, key.limitOverrides).requestsPerMonth;
    let state: Awaited<ReturnType<MonthlyUsage['charge']>>;
    try {
      state = await usage.charge(key.teamId, credits, limit, key.keyId);
    } catch {
      throw serviceUnavailable();
    }
    if (state.limit !== null) {
      res.setHeader('X-Usage-Limit', String(state.limit));
      res.setHeader('X-Usage-Remaining', String(state.remaining));
      res.setHeader('X-Usage-Reset', String(state.resetAt));
    }
    if (!state.allowed) {
      throw rateLimited(
        `Monthly request quota of the ${key.plan} plan (${state.limit}) exhausted; ${liftHint(key.teamId)}`,
        state.resetAt - Math.floor(Date.now() / 1000),
      );
    }
    res.on('finish', () => {
      if (res.statusCode >= 400) usage.refund(key.teamId, credits, key.keyId).catch(() => undefined);
    });
    next();
  };
}
