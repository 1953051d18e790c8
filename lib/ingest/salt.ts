// Daily salts for IP hashing (DESIGN §3): one random salt per UTC day, shared by every process through
// Redis, kept 48 h past its day and then gone, so yesterday's hashes cannot be recomputed after that.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

const KEEP_SECONDS = 72 * 3600; // the day itself plus 48 h

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
    const existing = (await this.redis.set(key, candidate, 'EX', KEEP_SECONDS, 'NX', 'GET')) as string | null;
    const salt = existing ?? candidate;
    if (this.cache.size > 4) this.cache.clear();
    this.cache.set(day, salt);
    return salt;
  }
}
