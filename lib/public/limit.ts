// The public endpoints' per-client limit: requests per minute from one address (IPv4, or an IPv6 /64) across
// every public endpoint, counted in Redis under a daily-salted hash of the address so no address is stored.
import { clientBucket } from '../auth/windows';
import { orUnavailable, rateLimited } from '../errors';
import { hashIp } from '../ingest/accept/enrich';
import type { DailySalts } from '../ingest/accept/salt';
import { type Redis, redisKey } from '../redis';

export const PUBLIC_LIMIT_PER_MINUTE = 600;

// One command per request: a pipeline or MULTI object costs the web role more than the Redis work it sends.
const TAKE = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], 120) end
return n`;

interface LimitCommands {
  tidemarkPublicTake(key: string): Promise<number>;
}
const defined = new WeakSet<Redis>();
function commands(redis: Redis): LimitCommands {
  if (!defined.has(redis)) {
    redis.defineCommand('tidemarkPublicTake', { numberOfKeys: 1, lua: TAKE });
    defined.add(redis);
  }
  return redis as unknown as LimitCommands;
}

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
    const key = redisKey(this.prefix, 'rl', 'public', client, String(Math.floor(now / 60_000)));
    const count = await orUnavailable(commands(this.redis).tidemarkPublicTake(key));
    if (count > this.perMinute) {
      throw rateLimited('Too many requests from this address', 60 - Math.floor((now / 1000) % 60));
    }
  }
}
