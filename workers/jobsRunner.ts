// BullMQ processor for the `jobs` queue: runs the body of the scheduled job the clock enqueued, recording each
// attempt in job_runs (what `tidemark jobs list` and the job series on /metrics read).
import { type Job, UnrecoverableError } from 'bullmq';
import { type JobContext, type JobScope, SCHEDULED_JOBS, type ScheduledJob } from '../jobs/registry';
import { recordedRun } from '../lib/jobs/runs';

/** `jobs`: the table to run from (tests inject one); the real registry otherwise. */
export function jobsProcessor(ctx: JobContext, jobs: readonly ScheduledJob[] = SCHEDULED_JOBS) {
  return async (job: Job) => {
    const scheduled = jobs.find((j) => j.name === job.name);
    if (!scheduled) throw new UnrecoverableError(`unknown job ${job.name}`);
    const scope = jobScope(job.data);
    const started = Date.now();
    const result = await recordedRun(
      ctx.pool,
      ctx.logger,
      // attemptsMade counts the attempts that ended before this one; `tidemark queue failed` shows the same count.
      { job: job.name, scope, runBy: 'worker', queueJobId: job.id, attempt: job.attemptsMade + 1 },
      () => scheduled.run(ctx, scope),
    );
    ctx.logger.info({ job: job.name, jobId: job.id, ms: Date.now() - started, result }, 'job done');
    return result;
  };
}

/** The scope a queue job carries: only the known fields, only as strings (the clock enqueues `{}`). */
function jobScope(data: unknown): JobScope {
  const d = (data ?? {}) as Record<string, unknown>;
  return {
    ...(typeof d.websiteId === 'string' ? { websiteId: d.websiteId } : {}),
    ...(typeof d.date === 'string' ? { date: d.date } : {}),
  };
}
