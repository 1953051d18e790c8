// One isolated world per test file: its own PostgreSQL database, Redis prefix and ClickHouse database on
// this jest worker's store process (global-setup.ts starts one per worker: chDB allows one data dir per process).

import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { keepConnectionsAlive } from '../../api/keepAlive';
import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { type Config, loadConfig } from '../../lib/config';
import { migrate } from '../../lib/db/migrate';
import { createPool, ensureDatabase, quoteIdent } from '../../lib/db/pool';
import { openEnrichers } from '../../lib/ingest/accept/enrichers';
import { acceptServices } from '../../lib/ingest/accept/services';
import { createLogger } from '../../lib/log';
import { createMetrics } from '../../lib/metrics';
import { QuestionQueue } from '../../lib/nlquery/questionQueue';
import { createProducerQueue, QUEUE_NAMES } from '../../lib/queue/queues';
import { createRedis, waitReady } from '../../lib/redis';

// The geo databases are large; a test file opens them once for all its contexts.
let enrichersOnce: ReturnType<typeof openEnrichers> | undefined;
const sharedEnrichers = () => (enrichersOnce ??= openEnrichers({}));

export const PG_BASE = 'postgres://postgres@127.0.0.1:5432';
export const REDIS_URL = 'redis://127.0.0.1:6379';

/** The store process this jest worker owns. */
export function storeUrl(): string {
  const urls = (process.env.TIDEMARK_TEST_STORE_URLS ?? '').split(',').filter(Boolean);
  if (urls.length === 0) throw new Error('no test store running (global-setup.ts)');
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  return urls[(worker - 1) % urls.length];
}

/** The credential of the store process this jest worker owns (its CLICKHOUSE_PASSWORD). */
export function storePassword(): string {
  const passwords = (process.env.TIDEMARK_TEST_STORE_PASSWORDS ?? '').split(',').filter(Boolean);
  if (passwords.length === 0) throw new Error('no test store running (global-setup.ts)');
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  return passwords[(worker - 1) % passwords.length];
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** A configuration naming fresh, unshared resources; overrides win. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  const dbName = uniqueName('tidemark_test');
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: `${PG_BASE}/${dbName}`,
    REDIS_URL,
    REDIS_PREFIX: uniqueName('tmtest'),
    CLICKHOUSE_URL: storeUrl(),
    CLICKHOUSE_PASSWORD: storePassword(),
    CLICKHOUSE_DATABASE: uniqueName('t'),
    DATA_DIR: path.join(os.tmpdir(), uniqueName('tidemark-data')),
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    PORT: '3000',
    // Every test registers its users from 127.0.0.1; the sign-up limits have their own tests.
    SIGNUP_LIMIT_PER_CLIENT: '100000',
    SIGNUP_LIMIT_TOTAL: '100000',
    ...overrides,
  });
}

export interface TestContext extends AppDeps {
  baseUrl: string;
  server: Server;
  close(): Promise<void>;
}

export async function createTestContext(overrides: Record<string, string> = {}): Promise<TestContext> {
  const config = testConfig(overrides);
  const logger = createLogger(config.LOG_LEVEL, 'test');
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 5);
  const clickhouse = createClickHouse(clickHouseTarget(config));
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-test');
  await waitReady(redis);
  await migrate({
    pool,
    clickhouse,
    clickhouseTarget: clickHouseTarget(config),
    logger,
  });
  const ingestQueue = createProducerQueue(QUEUE_NAMES.ingest, config.REDIS_URL, config.REDIS_PREFIX);
  const questions = config.OPENAI_API_KEY ? new QuestionQueue(config.REDIS_URL, config.REDIS_PREFIX) : undefined;
  const enrichers = await sharedEnrichers();
  const deps: AppDeps = {
    config,
    pool,
    redis,
    dedupeRedis: redis,
    clickhouse,
    ingestQueue,
    ingest: acceptServices({ pool, redis, redisPrefix: config.REDIS_PREFIX, logger, enrichers }),
    logger,
    metrics: createMetrics('test'),
    questions,
  };
  const app = createApp(deps);
  const server = await new Promise<Server>((resolve) => {
    // A fixed PORT when given (browser tests need PUBLIC_URL, and so the port, before the server starts).
    const s = app.listen(overrides.PORT ? Number(overrides.PORT) : 0, '127.0.0.1', () =>
      resolve(keepConnectionsAlive(s)),
    );
  });
  const { port } = server.address() as AddressInfo;
  return {
    ...deps,
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ingestQueue.close();
      await questions?.close();
      await dropRedisPrefix(redis, config.REDIS_PREFIX);
      await redis.quit();
      await pool.end();
      await clickhouse
        .command({ query: `DROP DATABASE IF EXISTS ${config.CLICKHOUSE_DATABASE}` })
        .catch(() => undefined);
      await clickhouse.close();
      await dropDatabase(config.DATABASE_URL);
    },
  };
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

async function dropRedisPrefix(redis: ReturnType<typeof createRedis>, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}
