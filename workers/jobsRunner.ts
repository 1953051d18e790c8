// BullMQ processor for the `jobs` queue: runs the body of the scheduled job the clock enqueued.
import { type Job, UnrecoverableError } from 'bullmq';
import { findJob, type JobContext, type JobScope } from '../jobs/registry';

export function jobsProcessor(ctx: JobContext) {
  return async (job: Job) => {
    const scheduled = findJob(job.name);
    if (!scheduled) throw new UnrecoverableError(`unknown job ${job.name}`);
    const started = Date.now();
    const result = await scheduled.run(ctx, (job.data ?? {}) as JobScope);
    ctx.logger.info({ job: job.name, jobId: job.id, ms: Date.now() - started, result }, 'job done');
    return result;
  };
}
