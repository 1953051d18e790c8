// Enqueueing accepted ingest batches: one BullMQ job per request, id = the request's claim token.
import type { IngestJob } from '../ingest/rows';
import type { ProducerQueue } from './queues';

export const INGEST_JOB_NAME = 'batch';

export const INGEST_JOB_OPTIONS = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 1_000 },
  // A completed job's data is its events, ~0.8 MB per 1,000 (1,000 kept jobs held ~800 MB of Redis), and
  // nothing reads completed jobs: stored rows are in ClickHouse and flush lag is on /metrics.
  removeOnComplete: true,
  // Failed jobs stay for the operator: `tidemark queue failed` / `tidemark queue retry`.
  removeOnFail: false,
} as const;

export function ingestEnqueuer(queue: ProducerQueue) {
  return async (jobId: string, job: IngestJob): Promise<void> => {
    await queue.addNow(INGEST_JOB_NAME, job, { ...INGEST_JOB_OPTIONS, jobId });
  };
}
