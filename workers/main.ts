// Boots the worker role: migrations, then BullMQ workers for each queue it serves.
import { Queue, Worker } from 'bullmq';
import { clickHouseTarget, createClickHouse } from '../lib/clickhouse/client';
import { type Config, configOrExit } from '../lib/config';
import { migrate } from '../lib/db/migrate';
import { createPool } from '../lib/db/pool';
import { createLogger } from '../lib/log';
import { notifyWebhookDisabled } from '../lib/notifications/webhookDisabled';
import { startHeartbeat } from '../lib/process/heartbeat';
import { runRole } from '../lib/process/shutdown';
import { reachClickHouse, reachPostgres, reachRedis } from '../lib/process/startup';
import { WriterLag } from '../lib/queue/lag';
import { QUEUE_NAMES } from '../lib/queue/queues';
import { bullPrefix, createRedis, requireRedisVersion, warnUnlessNoEviction } from '../lib/redis';
import { WebhookFanout } from '../lib/webhooks/fanout';
import { markDisabledNotified } from '../lib/webhooks/store';
import { WebhookSubscriptions } from '../lib/webhooks/subscriptions';
import { systemResolve } from '../lib/webhooks/target';
import { IngestWriter } from './ingestWriter';
import { jobsProcessor } from './jobsRunner';
import { questionProcessor } from './questions';
import { startWebhookWorkers } from './webhooks';

// Jobs one worker process holds at once; they are written together in one flush.
const INGEST_CONCURRENCY = 64;
// Questions mostly wait on the model's server: several at once per process.
const QUESTION_CONCURRENCY = 8;

export async function startWorker(config: Config): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'worker');
  const waitMs = config.STARTUP_WAIT_SECONDS * 1000;
  await reachPostgres(config.DATABASE_URL, logger, waitMs);
  const pool = createPool(config.DATABASE_URL, 10, (err) =>
    logger.warn({ err: err.message }, 'idle PostgreSQL connection closed'),
  );
  const clickhouse = createClickHouse(clickHouseTarget(config));
  await reachClickHouse(clickHouseTarget(config), config.EMBEDDED_STORE, logger, waitMs);
  const connection = createRedis(config.REDIS_URL, 'worker', 'tidemark-worker');
  await reachRedis(connection, 'REDIS_URL', config.REDIS_URL, logger, waitMs);
  await migrate({
    pool,
    clickhouse,
    clickhouseTarget: clickHouseTarget(config),
    clickhouseCluster: config.CLICKHOUSE_CLUSTER,
    clickhouseSetting: config.EMBEDDED_STORE ? 'STORE_PORT' : 'CLICKHOUSE_URL',
    logger,
  });
  await requireRedisVersion(connection, 'REDIS_URL');
  await warnUnlessNoEviction(connection, logger);
  const jobs = new Worker(
    QUEUE_NAMES.jobs,
    jobsProcessor({ pool, clickhouse, redis: connection, redisPrefix: config.REDIS_PREFIX, logger, config }),
    {
      connection,
      prefix: bullPrefix(config.REDIS_PREFIX),
      concurrency: 1,
    },
  );
  jobs.on('failed', (job, err) => logger.error({ job: job?.name, jobId: job?.id, err: err.message }, 'job failed'));

  const lag = new WriterLag(connection, config.REDIS_PREFIX);
  // The writer queues webhook events on the connection it reads its jobs with (one Redis, one MULTI).
  const webhookEvents = new Queue(QUEUE_NAMES.webhookEvents, { connection, prefix: bullPrefix(config.REDIS_PREFIX) });
  webhookEvents.on('error', () => undefined);
  const writer = new IngestWriter({
    clickhouse,
    pool,
    queueRedis: connection,
    logger,
    concurrency: INGEST_CONCURRENCY,
    webhooks: new WebhookFanout({
      redis: connection,
      redisPrefix: config.REDIS_PREFIX,
      pool,
      queue: webhookEvents,
      subscriptions: new WebhookSubscriptions(pool),
    }),
    onFlush: (stats) => {
      logger.debug(stats, 'ingest flush');
      lag.record(stats).catch(() => undefined);
    },
  });
  const ingest = new Worker(QUEUE_NAMES.ingest, writer.process, {
    connection,
    prefix: bullPrefix(config.REDIS_PREFIX),
    concurrency: INGEST_CONCURRENCY,
  });
  writer.attach(ingest);
  ingest.on('failed', (job, err) =>
    logger.error({ jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'ingest job failed'),
  );
  // Their own queues and workers: a slow receiver holds webhook slots, never the ingest writer's.
  const webhooks = startWebhookWorkers({
    pool,
    connection,
    redisPrefix: config.REDIS_PREFIX,
    logger,
    rules: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, production: config.NODE_ENV === 'production' },
    resolve: systemResolve,
    // The website's owners and admins are emailed (once a day per webhook) when SMTP is on.
    onWebhookDisabled: async (w) => {
      const told = await notifyWebhookDisabled({ pool, logger, config }, w.websiteId, w.url, w.reason);
      if (told.sent > 0) await markDisabledNotified(pool, w.id);
    },
  });
  // Natural-language questions on the LLM path, only when a model is configured (issue 27).
  const questions = config.OPENAI_API_KEY
    ? new Worker(
        QUEUE_NAMES.llm,
        questionProcessor(
          { pool, clickhouse, redis: connection, redisPrefix: config.REDIS_PREFIX },
          {
            apiKey: config.OPENAI_API_KEY,
            baseURL: config.OPENAI_BASE_URL,
            model: config.OPENAI_MODEL,
            timeoutMs: config.LLM_TIMEOUT_MS,
          },
        ),
        { connection, prefix: bullPrefix(config.REDIS_PREFIX), concurrency: QUESTION_CONCURRENCY },
      )
    : undefined;
  questions?.on('failed', (job, err) => logger.warn({ jobId: job?.id, err: err.message }, 'question job failed'));
  const stopBeat = startHeartbeat(connection, config.REDIS_PREFIX, 'worker');
  logger.info('worker started');
  return {
    async stop() {
      await stopBeat();
      // close() waits for in-flight jobs; anything unfinished is handed back to the queue as stalled.
      await Promise.all([jobs.close(), ingest.close(), webhooks.close(), questions?.close()]);
      await writer.drain();
      await webhookEvents.close();
      await Promise.allSettled([pool.end(), clickhouse.close(), connection.quit()]);
      logger.info('worker stopped');
    },
  };
}

if (require.main === module) {
  const config = configOrExit('worker');
  runRole('worker', () => startWorker(config), { logLevel: config.LOG_LEVEL });
}
