// Boots the web role: migrations, connections, the HTTP listener, and a graceful SIGTERM.
import type { Server } from 'node:http';
import { createClickHouse } from '../lib/clickhouse/client';
import { configOrExit, type Config } from '../lib/config';
import { createPool, ensureDatabase } from '../lib/db/pool';
import { migrate } from '../lib/db/migrate';
import { createLogger } from '../lib/log';
import { createMetrics } from '../lib/metrics';
import { runRole } from '../lib/process/shutdown';
import { openEnrichers } from '../lib/ingest/enrichers';
import { createProducerQueue, QUEUE_NAMES } from '../lib/queue/queues';
import { warnUnlessMemoryBounded } from '../lib/queue/memoryHeadroom';
import { createRedis, requireRedisVersion, warnUnlessNoEviction, waitReady } from '../lib/redis';
import { createApp } from './app';

export async function startWeb(config: Config): Promise<{ server: Server; port: number; stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'web');
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 10, (err) => logger.warn({ err: err.message }, 'idle PostgreSQL connection closed'));
  const clickhouse = createClickHouse({ url: config.CLICKHOUSE_URL, database: config.CLICKHOUSE_DATABASE });
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-web');
  await waitReady(redis, 10_000);
  await requireRedisVersion(redis, 'REDIS_URL');
  await warnUnlessNoEviction(redis, logger);
  await warnUnlessMemoryBounded(redis, config.QUEUE_MEMORY_LIMIT_PERCENT, logger);
  await migrate({
    pool,
    clickhouse,
    clickhouseUrl: config.CLICKHOUSE_URL,
    clickhouseDatabase: config.CLICKHOUSE_DATABASE,
    clickhouseCluster: config.CLICKHOUSE_CLUSTER,
    logger,
  });
  const dedupeRedis =
    config.DEDUPE_REDIS_URL === config.REDIS_URL ? redis : createRedis(config.DEDUPE_REDIS_URL, 'request', 'tidemark-dedupe');
  if (dedupeRedis !== redis) {
    await waitReady(dedupeRedis, 10_000);
    await requireRedisVersion(dedupeRedis, 'DEDUPE_REDIS_URL');
  }
  const ingestQueue = createProducerQueue(QUEUE_NAMES.ingest, config.REDIS_URL, config.REDIS_PREFIX);
  const enrichers = await openEnrichers(config);
  const app = createApp({
    config,
    pool,
    redis,
    dedupeRedis,
    clickhouse,
    ingestQueue,
    enrichers,
    logger,
    metrics: createMetrics('web'),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(config.PORT, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port }, 'web listening');
  return {
    server,
    port,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await ingestQueue.close();
      await Promise.allSettled([pool.end(), clickhouse.close(), redis.quit(), dedupeRedis === redis ? undefined : dedupeRedis.quit()]);
      enrichers.geo.close();
      logger.info('web stopped');
    },
  };
}

if (require.main === module) {
  const config = configOrExit();
  runRole('web', () => startWeb(config));
}
