// Every scheduled job: its cron line (UTC) and its body. The clock only enqueues; workers run bodies.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Logger } from '../lib/log';
import type { Redis } from '../lib/redis';
import { expireSessions } from './expireSessions';
import { insightsJob } from './insights';
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
  /** The scope fields the body honours (`tidemark jobs run` refuses the others); all of them when absent. */
  scope?: readonly (keyof JobScope)[];
  run(ctx: JobContext, scope: JobScope): Promise<unknown>;
}

export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  { name: 'expire-sessions', cron: '17 * * * *', scope: [], run: (ctx) => expireSessions(ctx.pool) },
  // Days close 26 h after they end; every 10 minutes keeps the rollups within minutes of that. It rolls up
  // whichever days are missing or had late events, so a day is not a scope it takes; a website is.
  {
    name: 'rollup-daily',
    cron: '*/10 * * * *',
    scope: ['websiteId'],
    run: (ctx, scope) => rollupDaily(ctx.pool, ctx.clickhouse, ctx.logger, Date.now(), { websiteId: scope.websiteId }),
  },
  {
    name: 'sweep-ingest-payloads',
    cron: '43 * * * *',
    scope: [],
    run: (ctx) => sweepIngestPayloads(ctx.redis, ctx.redisPrefix),
  },
  // Nightly: each website's latest complete local day (for zones west of UTC, the day before UTC's yesterday).
  { name: 'insights', cron: '35 1 * * *', run: (ctx, scope) => insightsJob(ctx, scope) },
];
