// Ingestion stops taking events while the queue's Redis is nearly full. Events arriving faster than the
// writers store them wait in Redis (~300 B each); with `maxmemory-policy noeviction` a full Redis refuses
// every write, and that includes the worker's own job moves, so the backlog could not drain until someone
// freed memory by hand. Refusing new events (503, nothing claimed or written) at QUEUE_MEMORY_LIMIT_PERCENT
// of maxmemory keeps the room the worker needs to drain it.
import { serviceUnavailable } from '../errors';
import type { Logger } from '../log';
import type { Redis } from '../redis';

const SAMPLE_EVERY_MS = 1_000;
/** Seconds a refused client is told to wait: about how long the writers take to drain a burst's backlog. */
const QUEUE_FULL_RETRY_AFTER_S = 10;

export interface MemorySample {
  /** What Redis itself weighs against maxmemory: used_memory less replica and AOF buffers. */
  used: number;
  /** maxmemory; 0 = no limit. */
  max: number;
}

export function parseInfoMemory(info: string): MemorySample {
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { used: Math.max(0, field('used_memory') - field('mem_not_counted_for_evict')), max: field('maxmemory') };
}

// A sample this old is no longer trusted when INFO keeps failing: the enqueue then answers for Redis.
const TRUST_SAMPLE_MS = 10_000;

export class QueueMemoryHeadroom {
  private sample?: MemorySample & { at: number };
  private triedAt = -Infinity;
  private refreshing?: Promise<void>;
  private infoRefused = false;

  constructor(
    private readonly redis: Redis,
    private readonly limitPercent: number,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Throws a 503 when Redis is at or over the limit, by a sample at most a second old: one INFO a second
   * (tried, whether or not it is answered), which the requests arriving while it is asked share.
   */
  async ensure(): Promise<void> {
    if (this.limitPercent >= 100) return;
    if (this.now() - this.triedAt >= SAMPLE_EVERY_MS) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
      await this.refreshing;
    }
    if (this.full())
      throw serviceUnavailable(
        'Ingestion is over capacity: events wait to be stored; retry shortly',
        QUEUE_FULL_RETRY_AFTER_S,
      );
  }

  /** Whether the last trusted sample is at or over the limit (false without a limit or a sample). */
  full(): boolean {
    const s = this.sample;
    return (
      s !== undefined && s.max > 0 && s.used >= (s.max * this.limitPercent) / 100 && this.now() - s.at < TRUST_SAMPLE_MS
    );
  }

  private async refresh(): Promise<void> {
    this.triedAt = this.now();
    const wasFull = this.full();
    let info: string;
    try {
      info = await this.redis.info('memory');
    } catch (err) {
      // An unreachable Redis fails the enqueue anyway; one that refuses INFO (an ACL) disables the limit.
      if (!this.infoRefused && /NOPERM|unknown command/i.test((err as Error).message)) {
        this.infoRefused = true;
        this.logger?.warn(
          { err: (err as Error).message },
          'queue Redis refuses INFO: QUEUE_MEMORY_LIMIT_PERCENT is not enforced',
        );
      }
      return;
    }
    this.sample = { ...parseInfoMemory(info), at: this.now() };
    // Once per change, not per refused request.
    const { used, max } = this.sample;
    if (this.full() && !wasFull)
      this.logger?.warn(
        { used, max, limitPercent: this.limitPercent },
        'queue Redis nearly full: ingestion answers 503 until the writers drain it',
      );
    if (!this.full() && wasFull) this.logger?.info({ used, max }, 'queue Redis has room again: ingestion resumed');
  }
}

/**
 * At web start: the limit needs a maxmemory to be a share of. Without one a backlog (the writers run behind
 * the web role by design on one machine) is bounded only by the host's memory.
 */
export async function warnUnlessMemoryBounded(redis: Redis, limitPercent: number, logger: Logger): Promise<void> {
  if (limitPercent >= 100) return;
  try {
    const { max } = parseInfoMemory(await redis.info('memory'));
    if (max === 0)
      logger.warn(
        'queue Redis has no maxmemory: QUEUE_MEMORY_LIMIT_PERCENT cannot bound the ingest backlog; set maxmemory (with noeviction)',
      );
  } catch (err) {
    logger.warn(
      { err: (err as Error).message },
      'could not read queue Redis memory (INFO refused?): QUEUE_MEMORY_LIMIT_PERCENT may not be enforced',
    );
  }
}
