// Enqueueing accepted ingest batches: one BullMQ job per request, id = the request's claim token.
import type { QueuedIngest } from '../ingest/job/rows';
import type { Logger } from '../log';
import type { Redis } from '../redis';
import { QUEUED_MARK_TTL_SECONDS, queuedMarkKey, queuedMarks, voidMarkKey, voidUnlessQueued } from './ingestMarks';
import { QueueMemoryHeadroom } from './memoryHeadroom';
import type { ProducerQueue } from './queues';

export const INGEST_JOB_NAME = 'batch';

export const INGEST_JOB_OPTIONS = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 1_000 },
  // A completed job is nothing anyone reads (stored rows are in ClickHouse, flush lag is on /metrics), and
  // its payload is its events, ~0.6 MB per 1,000 (1,000 kept jobs held ~800 MB of Redis).
  removeOnComplete: true,
  // Failed jobs stay for the operator: `tidemark queue failed` / `tidemark queue retry`.
  removeOnFail: false,
} as const;

/**
 * Where a job's payload (its event rows, lib/ingest/job/rowBinary.ts) is kept: beside the job's own keys, so that under a hash-tagged
 * prefix on Redis Cluster both share a slot. The worker deletes it once the job is completed; the
 * `sweep-ingest-payloads` job deletes any left behind by a worker that died in between.
 */
export function ingestPayloadKey(queueQualifiedName: string, jobId: string): string {
  return `${queueQualifiedName}:payload:${jobId}`;
}

/**
 * Enqueues an ingest job, refused with a 503 (nothing written) while the queue's Redis is at or over
 * `memoryLimitPercent` of its maxmemory (memoryHeadroom.ts). `ensureRoom` is the same check alone, for a
 * caller with work to skip first (the server pipeline's idempotency claim). With `mark` (every server
 * job), the job's queued mark is written with it, and the answer is 'voided' when the request was voided
 * first (its events will not be written). `voidUnlessQueued` settles, after an enqueue
 * whose outcome is unknown, whether the job got in.
 */
export function ingestEnqueuer(queue: ProducerQueue, memoryLimitPercent: number, logger?: Logger) {
  const guard = new QueueMemoryHeadroom(queue.ownRedis(), memoryLimitPercent, logger);
  const qn = queue.qualifiedName;
  const enqueue = async (
    jobId: string,
    { data, payload }: QueuedIngest,
    { mark = false } = {},
  ): Promise<'queued' | 'voided'> => {
    await guard.ensure();
    const opts = { ...INGEST_JOB_OPTIONS, jobId };
    if (data.rows === 0 && !mark) {
      await queue.addNow(INGEST_JOB_NAME, data, opts);
      return 'queued';
    }
    const marks = mark
      ? {
          queued: queuedMarkKey(qn, jobId),
          void: voidMarkKey(qn, jobId),
          job: queue.toKey(jobId),
          ttlSeconds: QUEUED_MARK_TTL_SECONDS,
        }
      : undefined;
    return (await queue.addWithPayload(INGEST_JOB_NAME, data, opts, ingestPayloadKey(qn, jobId), payload, marks))
      ? 'queued'
      : 'voided';
  };
  return Object.assign(enqueue, {
    ensureRoom: () => guard.ensure(),
    voidUnlessQueued: (tokens: readonly string[]) => voidUnlessQueued(queue.ownRedis(), qn, tokens),
    queued: (tokens: readonly string[]) => queuedMarks(queue.ownRedis(), qn, tokens),
  });
}

export type IngestEnqueue = ReturnType<typeof ingestEnqueuer>;

/**
 * Deletes payloads whose job no longer exists: left by a worker that died between completing a job and
 * deleting its payload, or by a job removed by hand. A payload is written in one MULTI with its job, so
 * a payload without a job is never one whose job is still on its way.
 */
export async function sweepOrphanPayloads(
  redis: Redis,
  queueQualifiedName: string,
): Promise<{ scanned: number; deleted: number }> {
  const head = ingestPayloadKey(queueQualifiedName, '');
  const pattern = `${head.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  let scanned = 0;
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length === 0) continue;
    scanned += keys.length;
    const exists = await redis
      .pipeline(keys.map((k) => ['exists', `${queueQualifiedName}:${k.slice(head.length)}`]))
      .exec();
    const orphans = keys.filter((_, i) => exists?.[i]?.[1] === 0);
    if (orphans.length > 0) deleted += await redis.unlink(...orphans);
  } while (cursor !== '0');
  return { scanned, deleted };
}
