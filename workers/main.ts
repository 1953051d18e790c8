// Boots the worker role: migrations, then BullMQ workers for each queue it serves.
import { Worker, type ConnectionOptions } from 'bullmq';
import { createClickHouse } from '../lib/clickhouse/client';
import { configOrExit, type Config } from '../lib/config';
import { createPool, ensureDatabase } from '../lib/db/pool';
import { migrate } from '../lib/db/migrate';
import { createLogger } from '../lib/log';
import { onShutdown } from '../lib/process/shutdown';
import { QUEUE_NAMES } from '../lib/queue/queues';
import { bullPrefix, createRedis, warnUnlessNoEviction } from '../lib/redis';
import { jobsProcessor } from './jobsRunner';

export async function startWorker(config: Config): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'worker');
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL);
  const clickhouse = createClickHouse({ url: config.CLICKHOUSE_URL, database: config.CLICKHOUSE_DATABASE });
  await migrate({
    pool,
    clickhouse,
    clickhouseUrl: config.CLICKHOUSE_URL,
    clickhouseDatabase: config.CLICKHOUSE_DATABASE,
    clickhouseCluster: config.CLICKHOUSE_CLUSTER,
    logger,
  });
  const connection = createRedis(config.REDIS_URL, 'worker', 'tidemark-worker');
  await warnUnlessNoEviction(connection, logger);
  const jobs = new Worker(QUEUE_NAMES.jobs, jobsProcessor({ pool, clickhouse, logger }), {
    connection: connection as unknown as ConnectionOptions,
    prefix: bullPrefix(config.REDIS_PREFIX),
    concurrency: 1,
  });
  jobs.on('failed', (job, err) => logger.error({ job: job?.name, jobId: job?.id, err: err.message }, 'job failed'));
  logger.info('worker started');
  return {
    async stop() {
      // close() waits for in-flight jobs; anything unfinished is handed back to the queue as stalled.
      await jobs.close();
      await Promise.allSettled([pool.end(), clickhouse.close(), connection.quit()]);
      logger.info('worker stopped');
    },
  };
}

if (require.main === module) {
  const config = configOrExit();
  startWorker(config).then(
    (worker) => onShutdown(() => worker.stop()),
    (err: Error) => {
      process.stderr.write(`worker failed to start: ${err.message}\n`);
      process.exit(1);
    },
  );
}
