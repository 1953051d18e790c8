// Boots the web role: migrations, connections, the HTTP listener, and a graceful SIGTERM.

import type { Server } from 'node:http';
import { clickHouseTarget, createClickHouse } from '../lib/clickhouse/client';
import { type Config, configOrExit } from '../lib/config';
import { migrate } from '../lib/db/migrate';
import { createPool } from '../lib/db/pool';
import { openEnrichers } from '../lib/ingest/accept/enrichers';
import { acceptServices } from '../lib/ingest/accept/services';
import { createLogger } from '../lib/log';
import { createMetrics } from '../lib/metrics';
import { QuestionQueue } from '../lib/nlquery/questionQueue';
import { startHeartbeat } from '../lib/process/heartbeat';
import { runRole } from '../lib/process/shutdown';
import { reachClickHouse, reachPostgres, reachRedis } from '../lib/process/startup';
import { warnUnlessMemoryBounded } from '../lib/queue/memoryHeadroom';
import { createProducerQueue, QUEUE_NAMES } from '../lib/queue/queues';
import { checkQueueDurability, createRedis, requireRedisVersion, warnUnlessNoEviction } from '../lib/redis';
import { adoptServerTimeZones } from '../lib/stats/timeZones';
import { createApp } from './app';
import { keepConnectionsAlive } from './keepAlive';

export async function startWeb(config: Config): Promise<{ server: Server; port: number; stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'web');
  const waitMs = config.STARTUP_WAIT_SECONDS * 1000;
  await reachPostgres(config.DATABASE_URL, logger, waitMs);
  const pool = createPool(config.DATABASE_URL, 10, (err) =>
    logger.warn({ err: err.message }, 'idle PostgreSQL connection closed'),
  );
  const clickhouse = createClickHouse(clickHouseTarget(config));
  await reachClickHouse(clickHouseTarget(config), config.EMBEDDED_STORE, logger, waitMs);
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-web');
  await reachRedis(redis, 'REDIS_URL', config.REDIS_URL, logger, waitMs);
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
    clickhouseSetting: config.EMBEDDED_STORE ? 'STORE_PORT' : 'CLICKHOUSE_URL',
    logger,
  });
  await adoptServerTimeZones(clickhouse, logger);
  const dedupeRedis =
    config.DEDUPE_REDIS_URL === config.REDIS_URL
      ? redis
      : createRedis(config.DEDUPE_REDIS_URL, 'request', 'tidemark-dedupe');
  if (dedupeRedis !== redis) {
    await reachRedis(dedupeRedis, 'DEDUPE_REDIS_URL', config.DEDUPE_REDIS_URL, logger, waitMs);
    await requireRedisVersion(dedupeRedis, 'DEDUPE_REDIS_URL');
    // Forgotten claims double a retried request, but lose nothing: warned about, never refused.
    await warnUnlessNoEviction(dedupeRedis, logger);
    await checkQueueDurability(dedupeRedis, { production: false, allowVolatile: true }, logger, 'DEDUPE_REDIS_URL');
  }
  const ingestQueue = createProducerQueue(QUEUE_NAMES.ingest, config.REDIS_URL, config.REDIS_PREFIX);
  const questions = config.OPENAI_API_KEY ? new QuestionQueue(config.REDIS_URL, config.REDIS_PREFIX) : undefined;
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
    questions,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    // Express 5 hands a listen error to the callback instead of throwing it.
    const s = app.listen(config.PORT, (err?: Error) => {
      if (!err) return resolve(keepConnectionsAlive(s));
      const code = (err as NodeJS.ErrnoException).code;
      reject(
        new Error(
          code === 'EADDRINUSE'
            ? `PORT ${config.PORT} is already in use`
            : `PORT ${config.PORT} cannot be listened on (${code ?? err.message})`,
        ),
      );
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const stopBeat = startHeartbeat(redis, config.REDIS_PREFIX, 'web');
  logger.info({ port }, 'web listening');
  return {
    server,
    port,
    async stop() {
      await stopBeat();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await ingestQueue.close();
      await questions?.close();
      await Promise.allSettled([
        pool.end(),
        clickhouse.close(),
        redis.quit(),
        dedupeRedis === redis ? undefined : dedupeRedis.quit(),
      ]);
      enrichers.geo.close();
      logger.info('web stopped');
    },
  };
}

if (require.main === module) {
  const config = configOrExit('web');
  runRole('web', () => startWeb(config), { logLevel: config.LOG_LEVEL });
}
