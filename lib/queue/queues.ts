// Queue names and factories. Producers (the API) get fail-fast connections so a Redis outage turns into a
// 503 instead of a request that hangs; workers get blocking ones.
import { Job, type JobsOptions, Queue } from 'bullmq';
import { bullPrefix, createRedis, type Redis } from '../redis';
import { MARK_QUEUED_UNLESS_VOID } from './ingestMarks';

export const QUEUE_NAMES = {
  ingest: 'ingest',
  jobs: 'jobs',
  /** One job per webhook event that happened (lib/webhooks/events.ts), fanned out to its subscribers. */
  webhookEvents: 'webhook-events',
  /** One job per (webhook, event): a signed POST with its retries. */
  webhookDeliveries: 'webhook-deliveries',
  /** One job per natural-language question on the LLM path (lib/nlquery/questionQueue.ts), answered at once. */
  llm: 'llm',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** A queue that owns its connection: BullMQ leaves a connection it was handed open, so close() ends it too. */
export class ProducerQueue extends Queue {
  constructor(
    name: QueueName,
    private readonly ownConnection: Redis,
    redisPrefix: string,
  ) {
    super(name, { connection: ownConnection, prefix: bullPrefix(redisPrefix) });
    // Connection failures surface as failed adds (a 503 to the client); without a listener BullMQ prints them.
    this.on('error', () => undefined);
  }

  /**
   * Adds a job only over a live connection. BullMQ would otherwise wait for Redis to come back, and a job
   * that lands after the client was answered 503 is one the client never knew was accepted. Commands on a
   * live connection are bounded by the client's commandTimeout.
   */
  async addNow(...args: Parameters<Queue['add']>): ReturnType<Queue['add']> {
    if (this.ownConnection.status !== 'ready') throw new Error(`queue Redis is ${this.ownConnection.status}`);
    return this.add(...args);
  }

  /**
   * addNow for a job whose bulk travels beside it: `payload` is stored under `payloadKey` as raw bytes, in
   * one MULTI with the job, so either both exist or neither does. Job data is JSON, and bytes kept out of
   * it are neither escaped by the producer nor parsed by the worker. With `marks`, the job's queued mark is
   * set in the same MULTI unless its void mark exists (lib/queue/ingestMarks.ts); answers false then.
   */
  async addWithPayload(
    name: string,
    data: unknown,
    opts: JobsOptions & { jobId: string },
    payloadKey: string,
    payload: Buffer,
    marks?: { queued: string; void: string; job: string; ttlSeconds: number },
  ): Promise<boolean> {
    if (this.ownConnection.status !== 'ready') throw new Error(`queue Redis is ${this.ownConnection.status}`);
    // BullMQ's own client has its scripts loaded; its transactions are ioredis ones, which also take SET.
    const multi = (await this.getBackend().client).multi() as ReturnType<Redis['multi']> & Parameters<Job['addJob']>[0];
    multi.set(payloadKey, payload);
    const added = new Job(this, name, data, opts, opts.jobId).addJob(multi);
    // Last, so that it sees the job: a MULTI does not roll back, and a mark without its job would make
    // the job's events look queued.
    if (marks) multi.eval(MARK_QUEUED_UNLESS_VOID, 3, marks.queued, marks.void, marks.job, String(marks.ttlSeconds));
    const replies = await multi.exec();
    await added; // rejects when the add script refused the job
    const failed = replies?.find(([err]) => err);
    if (!replies || failed) throw failed?.[0] ?? new Error('queue transaction aborted');
    if (!marks) return true;
    const marked = replies[replies.length - 1][1];
    if (marked === -1) throw new Error('ingest job missing after its transaction');
    return marked === 1;
  }

  ownRedis(): Redis {
    return this.ownConnection;
  }

  override async close(): Promise<void> {
    await super.close();
    await this.ownConnection.quit().catch(() => this.ownConnection.disconnect());
  }
}

export function createProducerQueue(name: QueueName, redisUrl: string, redisPrefix: string): ProducerQueue {
  return new ProducerQueue(name, createRedis(redisUrl, 'request', `tidemark-producer-${name}`), redisPrefix);
}
