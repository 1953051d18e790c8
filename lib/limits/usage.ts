// Monthly request quota per team (DESIGN §3 "Plans"): one Redis counter per team and UTC month, charged
// in credits; a charge that would pass the limit is undone atomically and refused.
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

const KEEP_SECONDS = 62 * 24 * 3600; // this month and the next, for reports

// KEYS[1] the team's month counter, KEYS[2] the key's all-time request count; ARGV: credits, limit
// (-1 = unlimited), ttl. Answers {allowed, used after}.
const CHARGE = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if used == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
local limit = tonumber(ARGV[2])
if limit >= 0 and used > limit then
  used = redis.call('DECRBY', KEYS[1], ARGV[1])
  return {0, used}
end
redis.call('INCR', KEYS[2])
return {1, used}`;

export interface UsageState {
  allowed: boolean;
  used: number;
  limit: number | null;
  remaining: number | null;
  /** Unix seconds of the next month's start (UTC). */
  resetAt: number;
}

export function monthOf(at: number): string {
  return new Date(at).toISOString().slice(0, 7);
}

export function nextMonthStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export class MonthlyUsage {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(teamId: string, at: number): string {
    return redisKey(this.prefix, 'usage', teamId, monthOf(at));
  }

  private keyTotal(apiKeyId: string): string {
    return redisKey(this.prefix, 'usage', 'key', apiKeyId);
  }

  /** Charges the team's month; an allowed request also counts once towards the key's all-time total. */
  async charge(
    teamId: string,
    credits: number,
    limit: number | null,
    apiKeyId: string,
    at = Date.now(),
  ): Promise<UsageState> {
    const [allowed, used] = (await this.redis.eval(
      CHARGE,
      2,
      this.key(teamId, at),
      this.keyTotal(apiKeyId),
      credits,
      limit ?? -1,
      KEEP_SECONDS,
    )) as [number, number];
    return {
      allowed: allowed === 1,
      used,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - used),
      resetAt: Math.floor(nextMonthStart(at) / 1000),
    };
  }

  async refund(teamId: string, credits: number, apiKeyId: string, at = Date.now()): Promise<void> {
    await this.redis.multi().decrby(this.key(teamId, at), credits).decr(this.keyTotal(apiKeyId)).exec();
  }

  /** Successful requests made with a key, ever (what usage reports as total_requests). */
  async keyTotalRequests(apiKeyId: string): Promise<number> {
    return Number((await this.redis.get(this.keyTotal(apiKeyId))) ?? 0);
  }

  async used(teamId: string, at = Date.now()): Promise<number> {
    return Number((await this.redis.get(this.key(teamId, at))) ?? 0);
  }
}
