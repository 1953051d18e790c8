// POST /api/v1/events: server-side ingestion, in DESIGN §3's request order. Authentication, plan, limits
// and the body come first (here); the rest of the pipeline is lib/ingest/accept/pipeline.ts.
import express, { Router } from 'express';
import { IdempotencyKeys } from '../../lib/ingest/accept/dedupe';
import { ActiveGoalsCache } from '../../lib/ingest/accept/goalsCache';
import { type IngestDeps, ingestServerBatch } from '../../lib/ingest/accept/pipeline';
import { ingestBatchSchema, MAX_BODY_BYTES } from '../../lib/ingest/accept/serverSchemas';
import type { IngestEnqueue } from '../../lib/queue/ingest';
import type { AppDeps } from '../deps';
import { apiKey, requireApiKey } from '../middleware/auth';
import { monthlyQuota, perMinuteLimit } from '../middleware/rateLimits';
import { parseBody } from '../middleware/validate';

export function ingestRoutes(deps: AppDeps, enqueue: IngestEnqueue): Router {
  const { config } = deps;
  const pipeline: IngestDeps = {
    pool: deps.pool,
    salts: deps.ingest.salts,
    goals: new ActiveGoalsCache(deps.pool, deps.redis, config.REDIS_PREFIX),
    idempotency: new IdempotencyKeys(deps.dedupeRedis, config.REDIS_PREFIX),
    enqueue,
    ensureQueueRoom: enqueue.ensureRoom,
    voidUnlessQueued: enqueue.voidUnlessQueued,
    queued: enqueue.queued,
    enrichers: deps.ingest.enrichers,
    logger: deps.logger,
    presence: deps.ingest.presence,
  };
  const router = Router();
  router.post(
    '/events',
    requireApiKey(deps.pool),
    perMinuteLimit(deps.redis, config.REDIS_PREFIX, 'ingest'),
    monthlyQuota(deps.redis, config.REDIS_PREFIX, 1),
    express.json({ limit: MAX_BODY_BYTES, strict: true, type: () => true }),
    async (req, res) => {
      const batch = parseBody(ingestBatchSchema, req);
      const result = await ingestServerBatch(pipeline, {
        principal: apiKey(res),
        batch,
        gpc: req.headers['sec-gpc'] === '1',
      });
      // The spec shows the bare ingest result, not the envelope.
      res.status(200).json(result);
    },
  );
  return router;
}
