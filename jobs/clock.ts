// The clock role (exactly one per deployment): a node-cron table that only enqueues. Job ids are
// deterministic per (job, scheduled minute), so a clock restarted within the minute cannot enqueue twice.
import cron, { type ScheduledTask } from 'node-cron';
import { type Config, configOrExit } from '../lib/config';
import { createLogger } from '../lib/log';
import { startHeartbeat } from '../lib/process/heartbeat';
import { runRole } from '../lib/process/shutdown';
import { reachRedis } from '../lib/process/startup';
import { createProducerQueue, QUEUE_NAMES } from '../lib/queue/queues';
import { createRedis } from '../lib/redis';
import { SCHEDULED_JOBS } from './registry';

export function scheduledJobId(name: string, at: Date): string {
  // BullMQ refuses ':' in custom ids, so the minute is written without it.
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString().slice(0, 16).replace(':', '');
  return `${name}@${minute}Z`;
}

/**
 * How the clock enqueues: a failing run is tried 3 times in all (30 s, then 60 s later), then stays in the
 * failed list (`tidemark queue failed --queue jobs`) until retried or 5000 newer failures push it out.
 */
export const SCHEDULED_JOB_OPTIONS = {
  removeOnComplete: 1000,
  removeOnFail: 5000,
  attempts: 3,
  backoff: { type: 'exponential', delay: 30_000 },
} as const;

export async function startClock(config: Config): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'clock');
  // The queue's own connection retries forever; a probe makes an unreachable Redis a clear, bounded failure.
  // It also carries the clock's heartbeat.
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-clock');
  try {
    await reachRedis(redis, 'REDIS_URL', config.REDIS_URL, logger, config.STARTUP_WAIT_SECONDS * 1000);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const stopBeat = startHeartbeat(redis, config.REDIS_PREFIX, 'clock');
  const queue = createProducerQueue(QUEUE_NAMES.jobs, config.REDIS_URL, config.REDIS_PREFIX);
  const tasks: ScheduledTask[] = SCHEDULED_JOBS.map((job) =>
    cron.schedule(
      job.cron,
      async () => {
        const jobId = scheduledJobId(job.name, new Date());
        try {
          await queue.add(job.name, {}, { ...SCHEDULED_JOB_OPTIONS, jobId });
          logger.info({ job: job.name, jobId }, 'job enqueued');
        } catch (err) {
          logger.error({ job: job.name, err: (err as Error).message }, 'could not enqueue job');
        }
      },
      { timezone: 'UTC', name: job.name },
    ),
  );
  logger.info({ jobs: SCHEDULED_JOBS.map((j) => `${j.name} (${j.cron})`) }, 'clock started');
  return {
    async stop() {
      await Promise.all(tasks.map((t) => t.stop()));
      await stopBeat();
      await queue.close();
      redis.disconnect();
      logger.info('clock stopped');
    },
  };
}

if (require.main === module) {
  const config = configOrExit('clock');
  runRole('clock', () => startClock(config), { logLevel: config.LOG_LEVEL });
}
