// Worker lag, shared through Redis so the web role's /metrics can export it (workers serve no HTTP).
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

export interface LagSample {
  oldestEnqueuedAt: number;
  rows: number;
}

export class WriterLag {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(): string {
    return redisKey(this.prefix, 'metrics', 'ingest-last-flush');
  }

  /** Called after each flush: how long its oldest job waited between enqueue and being stored. */
  async record(sample: LagSample, now = Date.now()): Promise<void> {
    const value = JSON.stringify({ at: now, lagSeconds: (now - sample.oldestEnqueuedAt) / 1000, rows: sample.rows });
    await this.redis.set(this.key(), value, 'EX', 3600);
  }

  async last(): Promise<{ at: number; lagSeconds: number; rows: number } | undefined> {
    const raw = await this.redis.get(this.key());
    return raw ? (JSON.parse(raw) as { at: number; lagSeconds: number; rows: number }) : undefined;
  }
}
