// Every scheduled job: its cron line (UTC) and its body. The clock only enqueues; workers run bodies.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Logger } from '../lib/log';
import type { Redis } from '../lib/redis';
import { detectAnomalies } from './anomalies';
import { expireSessions } from './expireSessions';
import { rollupDaily } from './rollupDaily';
import { sweepIngestPayloads } from './sweepIngestPayloads';

export interface JobContext {
  pool: Pool;
  clickhouse: ClickHouseClient;
  /** The queue's Redis, and the prefix of every key there. */
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
}

/**
 * What one run covers. The clock enqueues with an empty scope (every active website, the period that just
 * ended); `tidemark jobs run` may narrow it to one website and a past day, and a re-run for the same scope
 * writes the same rows (idempotent).
 */
export interface JobScope {
  websiteId?: string;
  /** YYYY-MM-DD: the day (in each website's timezone) the run is for; absent = the latest complete period. */
  date?: string;
}

export interface ScheduledJob {
  name: string;
  cron: string;
  run(ctx: JobContext, scope: JobScope): Promise<unknown>;
}

export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  // A few minutes past the hour, once the hour's events have been written (the ingest buffer flushes in seconds).
  { name: 'anomalies', cron: '7 * * * *', run: (ctx, scope) => detectAnomalies(ctx, scope) },
  { name: 'expire-sessions', cron: '17 * * * *', run: (ctx) => expireSessions(ctx.pool) },
  // Days close 26 h after they end; every 10 minutes keeps the rollups within minutes of that.
  { name: 'rollup-daily', cron: '*/10 * * * *', run: (ctx) => rollupDaily(ctx.pool, ctx.clickhouse, ctx.logger) },
  { name: 'sweep-ingest-payloads', cron: '43 * * * *', run: (ctx) => sweepIngestPayloads(ctx.redis, ctx.redisPrefix) },
];

export function findJob(name: string): ScheduledJob | undefined {
  return SCHEDULED_JOBS.find((j) => j.name === name);
}
