import { createProducerQueue, type ProducerQueue, QUEUE_NAMES, type QueueName } from '../../lib/queue/queues';
import { waitReady } from '../../lib/redis';
import { type Context, UsageError, type Values } from '../context';

export async function runQueueFailed(v: Values, ctx: Context): Promise<void> {
  const limit = v.limit === undefined ? 50 : Number(v.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new UsageError('--limit must be a whole number from 1 to 1000');
  await withQueue(ctx, v.queue, async (queue) => {
    const jobs = await queue.getFailed(0, limit - 1);
    const total = await queue.getFailedCount();
    ctx.io.out(`${total} failed job(s) in ${queue.name}${total > jobs.length ? `, showing ${jobs.length}` : ''}`);
    for (const job of jobs) {
      const when = job.finishedOn ? new Date(job.finishedOn).toISOString() : '-';
      ctx.io.out(`${job.id}\t${job.name}\tattempts=${job.attemptsMade}\t${when}\t${job.failedReason ?? ''}`);
    }
  });
}

export async function runQueueRetry(v: Values, ctx: Context): Promise<void> {
  if ((v.id === undefined) === (v.all !== true)) throw new UsageError('give exactly one of --id or --all');
  await withQueue(ctx, v.queue, async (queue) => {
    const jobs = v.all ? await queue.getFailed(0, -1) : [await queue.getJob(String(v.id))];
    let retried = 0;
    for (const job of jobs) {
      if (!job) throw new UsageError(`no job ${String(v.id)} in ${queue.name}`);
      if (!(await job.isFailed())) throw new UsageError(`job ${job.id} is not failed`);
      await job.retry('failed');
      retried++;
    }
    ctx.io.out(`${retried} job(s) moved back to ${queue.name}`);
  });
}

export async function withQueue(
  ctx: Context,
  name: unknown,
  fn: (queue: ProducerQueue) => Promise<void>,
): Promise<void> {
  const queueName = name === undefined ? QUEUE_NAMES.ingest : String(name);
  if (!(Object.values(QUEUE_NAMES) as string[]).includes(queueName)) {
    throw new UsageError(`--queue must be one of ${Object.values(QUEUE_NAMES).join(', ')}`);
  }
  const queue = createProducerQueue(queueName as QueueName, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
  try {
    await waitReady(queue.ownRedis());
    await fn(queue);
  } finally {
    await queue.close();
  }
}
