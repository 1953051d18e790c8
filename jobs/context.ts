// What a job body is given: the stores, and the scope of the run (jobs/registry.ts lists the jobs).
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import type { Redis } from '../lib/redis';

export interface JobContext {
  pool: Pool;
  clickhouse: ClickHouseClient;
  /** The queue's Redis, and the prefix of every key there. */
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  /** The process configuration: the notification jobs read SMTP_URL, MAIL_FROM, PUBLIC_URL and JWT_SECRET. */
  config?: Config;
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

/** What a job body that reads and writes the stores needs (tests and the benchmark give only this). */
export type StoreJobContext = Pick<JobContext, 'pool' | 'clickhouse' | 'logger'>;
