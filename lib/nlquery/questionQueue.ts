// The web role's half of the LLM path (issue 27): a question is a job on the `llm` queue, and the request waits
// for the worker's answer up to LLM_TIMEOUT_MS (then the route answers 503 and the credits are refunded).
// Identical questions for the same website and context are answered from a short cache in Redis.
import { createHash } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { createProducerQueue, type ProducerQueue, QUEUE_NAMES } from '../queue/queues';
import { bullPrefix, createRedis, type Redis, redisKey } from '../redis';
import type { QueryPlan } from './plan';
import type { QuestionJob, QuestionOutcome } from './questionJob';
import type { QueryData } from './schemas';

const CACHE_SECONDS = 60;
// Finished jobs are kept briefly (the waiter reads the result from the job) and then dropped.
const KEEP = { age: 300, count: 1000 };

export class QuestionQueue {
  private readonly queue: ProducerQueue;
  private readonly events: QueueEvents;
  private readonly eventsRedis: Redis;
  private ready?: Promise<unknown>;

  constructor(redisUrl: string, prefix: string) {
    this.queue = createProducerQueue(QUEUE_NAMES.llm, redisUrl, prefix);
    this.eventsRedis = createRedis(redisUrl, 'worker', 'tidemark-llm-events');
    this.events = new QueueEvents(QUEUE_NAMES.llm, {
      connection: this.eventsRedis,
      prefix: bullPrefix(prefix),
    });
    this.events.on('error', () => undefined);
  }

  /** The worker's outcome, or 'timeout' when none arrived in time (a job still waiting is withdrawn). */
  async ask(job: QuestionJob, timeoutMs: number): Promise<QuestionOutcome | 'timeout'> {
    this.ready ??= this.events.waitUntilReady();
    await this.ready;
    const added = await this.queue.addNow('question', job, { removeOnComplete: KEEP, removeOnFail: KEEP, attempts: 1 });
    try {
      return (await added.waitUntilFinished(this.events, timeoutMs)) as QuestionOutcome;
    } catch (err) {
      if (!/timed out/i.test((err as Error).message)) throw err;
      await added.remove().catch(() => undefined); // an active job cannot be removed; its answer is dropped
      return 'timeout';
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.queue.close(), this.events.close()]);
    // BullMQ leaves a connection it was handed open.
    await this.eventsRedis.quit().catch(() => this.eventsRedis.disconnect());
  }
}

/** The cache key of a question: the website, the context, and the question with case and spacing folded. */
function cacheKey(prefix: string, job: QuestionJob): string {
  const text = job.question.trim().toLowerCase().replace(/\s+/g, ' ');
  const hash = createHash('sha256')
    .update(JSON.stringify([job.context?.time_range ?? '', job.context?.compare_to ?? '', text]))
    .digest('hex');
  return redisKey(prefix, 'nlq', job.websiteId, hash);
}

export interface Answered {
  data: QueryData;
  plan: QueryPlan;
}

export async function cachedAnswer(redis: Redis, prefix: string, job: QuestionJob): Promise<Answered | undefined> {
  const hit = await redis.get(cacheKey(prefix, job)).catch(() => null);
  return hit ? (JSON.parse(hit) as Answered) : undefined;
}

export async function rememberAnswer(redis: Redis, prefix: string, job: QuestionJob, answer: Answered): Promise<void> {
  await redis.set(cacheKey(prefix, job), JSON.stringify(answer), 'EX', CACHE_SECONDS).catch(() => undefined);
}
