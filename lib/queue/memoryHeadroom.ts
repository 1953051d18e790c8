// Ingestion stops taking events while the queue's Redis is nearly full. Events arriving faster than the
// writers store them wait in Redis (~300 B each); with `maxmemory-policy noeviction` a full Redis refuses
// every write, and that includes the worker's own job moves, so the backlog could not drain until someone
// freed memory by hand. Refusing new events (503, nothing claimed or written) at QUEUE_MEMORY_LIMIT_PERCENT
// of maxmemory keeps the room the worker needs to drain it.
import { HttpError } from '../errors';
import type { Logger } from '../log';
import type { Redis } from '../redis';

const SAMPLE_EVERY_MS = 1_000;
/** Seconds a refused client is told to wait: about how long the writers take to drain a burst's backlog. */
export const QUEUE_FULL_RETRY_AFTER_S = 10;

export const queueFull = () =>
  new HttpError(503, 'SERVICE_UNAVAILABLE', 'Ingestion is over capacity: events wait to be stored; retry shortly', {
    'Retry-After': String(QUEUE_FULL_RETRY_AFTER_S),
  });

export interface MemorySample {
  used: number;
  max: number;
}

/** used_memory and maxmemory (0 = no limit) from INFO memory. */
export function parseInfoMemory(info: string): MemorySample {
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { used: field('used_memory'), max: field('maxmemory') };
}

export class QueueMemoryHeadroom {
  private sample?: MemorySample & { at: number };
  private refreshing?: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly limitPercent: number,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Throws a 503 when Redis is at or over the limit, by a sample at most a second old: one INFO a second,
   * which the requests arriving while it is asked share. A Redis that cannot answer INFO is judged by the
   * enqueue itself.
   */
  async ensure(): Promise<void> {
    if (this.limitPercent >= 100) return;
    if (!this.sample || this.now() - this.sample.at >= SAMPLE_EVERY_MS) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
      await this.refreshing;
    }
    if (this.full()) throw queueFull();
  }

  /** Whether the last sample is at or over the limit (false without a limit or a sample). */
  full(): boolean {
    const s = this.sample;
    return s !== undefined && s.max > 0 && s.used >= (s.max * this.limitPercent) / 100;
  }

  private async refresh(): Promise<void> {
    const wasFull = this.full();
    try {
      this.sample = { ...parseInfoMemory(await this.redis.info('memory')), at: this.now() };
    } catch {
      return; // keep the previous sample; the enqueue answers for an unreachable Redis
    }
    // Once per change, not per refused request.
    const { used, max } = this.sample;
    if (this.full() && !wasFull) this.logger?.warn({ used, max, limitPercent: this.limitPercent }, 'queue Redis nearly full: ingestion answers 503 until the writers drain it');
    if (!this.full() && wasFull) this.logger?.info({ used, max }, 'queue Redis has room again: ingestion resumed');
  }
}
