// Active goal names per website, cached in-process. Every goal change bumps a version in Redis; a reader
// compares versions (one GET) and reloads from PostgreSQL only when they differ, so changes apply at once
// on every web process without a restart.
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { activeGoalNames } from '../../accounts/goals';
import { redisKey } from '../../redis';

export function goalsVersionKey(prefix: string, websiteId: string): string {
  return redisKey(prefix, 'goals-version', websiteId);
}

/** Called after any goal write of the website. */
export async function bumpGoalsVersion(redis: Redis, prefix: string, websiteId: string): Promise<void> {
  await redis.incr(goalsVersionKey(prefix, websiteId));
}

export class ActiveGoalsCache {
  private readonly entries = new Map<string, { version: string; names: Set<string> }>();

  constructor(
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async get(websiteId: string): Promise<ReadonlySet<string>> {
    const version = (await this.redis.get(goalsVersionKey(this.prefix, websiteId))) ?? '0';
    const hit = this.entries.get(websiteId);
    if (hit && hit.version === version) return hit.names;
    const names = new Set(await activeGoalNames(this.pool, websiteId));
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(websiteId, { version, names });
    return names;
  }
}
