// Boots the web role: migrations, connections, the HTTP listener, and a graceful SIGTERM.
import type { Server } from 'node:http';
import { clickHouseTarget, createClickHouse } from '../lib/clickhouse/client';
import { configOrExit, type Config } from '../lib/config';
import { createPool, ensureDatabase } from '../lib/db/pool';
import { migrate } from '../lib/db/migrate';
import { createLogger } from '../lib/log';
import { createMetrics } from '../lib/metrics';
import { runRole } from '../lib/process/shutdown';
import { openEnrichers } from '../lib/ingest/accept/enrichers';
import { acceptServices } from '../lib/ingest/accept/services';
import { createProducerQueue, QUEUE_NAMES } from '../lib/queue/queues';
import { warnUnlessMemoryBounded } from '../lib/queue/memoryHeadroom';
import { checkQueueDurability, createRedis, requireRedisVersion, warnUnlessNoEviction, waitReady } from '../lib/redis';
import { adoptServerTimeZones } from '../lib/stats/timeZones';
import { createApp } from './app';

export async function startWeb(config: Config): Promise<{ server: Server; port: number; stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'web');
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, 10, (err) => logger.warn({ err: err.message }, 'idle PostgreSQL connection closed'));
  const clickhouse = createClickHouse(clickHouseTarget(config));
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-web');
  await waitReady(redis, 10_000);
  await requireRedisVersion(redis, 'REDIS_URL');
  await warnUnlessNoEviction(redis, logger);
  await warnUnlessMemoryBounded(redis, config.QUEUE_MEMORY_LIMIT_PERCENT, logger);
  const volatile = await checkQueueDurability(
    redis,
    { production: config.NODE_ENV === 'production', allowVolatile: config.ALLOW_VOLATILE_QUEUE },
    logger,
  );
  if (volatile) throw new Error(volatile);
  await migrate({
    pool,
    clickhouse,
    clickhouseTarget: clickHouseTarget(config),
    clickhouseCluster: config.CLICKHOUSE_CLUSTER,
    logger,
  });
  await adoptServerTimeZones(clickhouse, logger);
  const dedupeRedis =
    config.DEDUPE_REDIS_URL === config.REDIS_URL ? redis : createRedis(config.DEDUPE_REDIS_URL, 'request', 'tidemark-dedupe');
  if (dedupeRedis !== redis) {
    await waitReady(dedupeRedis, 10_000);
    await requireRedisVersion(dedupeRedis, 'DEDUPE_REDIS_URL');
    // Forgotten claims double a retried request, but lose nothing: warned about, never refused.
    await warnUnlessNoEviction(dedupeRedis, logger);
    await checkQueueDurability(dedupeRedis, { production: false, allowVolatile: true }, logger, 'DEDUPE_REDIS_URL');
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
    ingest: acceptServices({ pool, redis, redisPrefix: config.REDIS_PREFIX, logger, enrichers }),
    logger,
    metrics: createMetrics('web'),
  });
  const server = await new Promise<Server>((resolve, reject) => {
    // Express 5 hands a listen error to the callback instead of throwing it.
    const s = app.listen(config.PORT, (err?: Error) => {
      if (!err) return resolve(s);
      const code = (err as NodeJS.ErrnoException).code;
      reject(new Error(code === 'EADDRINUSE' ? `PORT ${config.PORT} is already in use` : `PORT ${config.PORT} cannot be listened on (${code ?? err.message})`));
    });
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
