// The public endpoints' per-client limit: requests per minute from one address (IPv4, or an IPv6 /64) across
// every public endpoint, counted in Redis under a daily-salted hash of the address so no address is stored.
import { clientBucket } from '../auth/windows';
import { orUnavailable, rateLimited } from '../errors';
import { hashIp } from '../ingest/accept/enrich';
import type { DailySalts } from '../ingest/accept/salt';
import { type Redis, redisKey } from '../redis';

export const PUBLIC_LIMIT_PER_MINUTE = 600;

export class PublicLimit {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly salts: DailySalts,
    private readonly perMinute = PUBLIC_LIMIT_PER_MINUTE,
  ) {}

  /** Counts one request of `ip`; 429 with Retry-After once the minute's allowance is spent. */
  async take(ip: string | undefined, now = Date.now()): Promise<void> {
    const salt = await orUnavailable(this.salts.forTime(now));
    const client = hashIp(salt, 'public', clientBucket(ip)).slice(0, 32);
    const minute = Math.floor(now / 60_000);
    const key = redisKey(this.prefix, 'rl', 'public', client, String(minute));
    // A pipeline, not MULTI: one round trip, and a lost EXPIRE only leaves a key whose minute is over.
    const replies = await orUnavailable(this.redis.pipeline().incr(key).expire(key, 120).exec());
    const [err, count] = replies?.[0] ?? [new Error('no reply'), 0];
    if (err) await orUnavailable(Promise.reject(err));
    if ((count as number) > this.perMinute) {
      throw rateLimited('Too many requests from this address', 60 - Math.floor((now / 1000) % 60));
    }
  }
}
