// Daily salts for IP hashing (DESIGN §3): one random salt per UTC day, shared by every process through
// Redis, kept 48 h past its day and then gone, so yesterday's hashes cannot be recomputed after that.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisKey } from '../../redis';

const KEEP_AFTER_DAY_MS = 48 * 3600 * 1000;

export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

export class DailySalts {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The salt of the UTC day containing `at`; the first process to ask creates it. */
  async forTime(at: number): Promise<string> {
    const day = utcDay(at);
    const cached = this.cache.get(day);
    if (cached) return cached;
    const key = redisKey(this.prefix, 'salt', day);
    const candidate = randomBytes(32).toString('hex');
    // SET NX … GET answers the existing value when another process won the race.
    // Deleted 48 h after its day ends, whenever in the day it was created.
    const dayEnd = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
    const expireAt = Math.floor((dayEnd + KEEP_AFTER_DAY_MS) / 1000);
    const existing = (await this.redis.set(key, candidate, 'EXAT', expireAt, 'NX', 'GET')) as string | null;
    const salt = existing ?? candidate;
    if (this.cache.size > 4) this.cache.clear();
    this.cache.set(day, salt);
    return salt;
  }
}
