// What the web role's app is built from; server.ts makes real ones, tests make isolated ones.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Config } from '../lib/config';
import type { AcceptServices } from '../lib/ingest/accept/services';
import type { Logger } from '../lib/log';
import type { Metrics } from '../lib/metrics';
import type { QuestionQueue } from '../lib/nlquery/questionQueue';
import type { ProducerQueue } from '../lib/queue/queues';
import type { Redis } from '../lib/redis';
import type { ResolveHost } from '../lib/webhooks/target';

export interface AppDeps {
  config: Config;
  pool: Pool;
  redis: Redis;
  /** Idempotency keys; the same client as `redis` unless DEDUPE_REDIS_URL names another server. */
  dedupeRedis: Redis;
  clickhouse: ClickHouseClient;
  ingestQueue: ProducerQueue;
  /** Shared by both ingestion paths, built once per process (lib/ingest/accept/services.ts). */
  ingest: AcceptServices;
  logger: Logger;
  metrics: Metrics;
  /** How webhook hosts are resolved; the system resolver when unset (tests give one they control). */
  webhookResolve?: ResolveHost;
  /** The LLM path of natural-language questions; absent without OPENAI_API_KEY (the interpreter answers). */
  questions?: QuestionQueue;
}
