// Idempotency keys (spec rule 4, DESIGN §3): a (website, idempotencyKey) pair claimed within 24 h makes a
// repeat a duplicate. Claims carry a per-request token so a release never frees another request's claim.
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

export const DEDUPE_TTL_SECONDS = 24 * 3600;

// A released claim leaves a tombstone ("x:" + token) instead of nothing: the request that released it was
// answered 503, so a job it may still have managed to enqueue is void, and the worker must be able to tell
// (see claimStillHeld). A tombstone is free to claim again.
const RELEASED = 'x:';

// One round trip for a whole batch: answer 1 for a fresh claim, 0 for a duplicate. A key repeated inside
// the batch is claimed by its first occurrence only. Almost every key is new, so the claim is first tried
// as one SET NX; only a key that exists is read, and claimed over when it is a tombstone.
const CLAIM = `
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'EX', ARGV[2]) then
    out[i] = 1
  else
    local v = redis.call('GET', key)
    if (not v) or string.sub(v, 1, 2) == '${RELEASED}' then
      redis.call('SET', key, ARGV[1], 'EX', ARGV[2])
      out[i] = 1
    else
      out[i] = 0
    end
  end
end
return out`;

// Turns only this request's claims into tombstones.
const RELEASE = `
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('SET', key, '${RELEASED}' .. ARGV[1], 'EX', ARGV[2])
    n = n + 1
  end
end
return n`;

export class IdempotencyKeys {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(websiteId: string, idempotencyKey: string): string {
    return redisKey(this.prefix, 'idem', websiteId, idempotencyKey);
  }

  /** key() for each idempotency key of one website, the shared part built once (a batch has 1,000). */
  keys(websiteId: string, idempotencyKeys: readonly string[]): string[] {
    const shared = this.key(websiteId, '');
    return idempotencyKeys.map((k) => shared + k);
  }

  /** For each key in order: true when this call claimed it, false when it was already claimed. */
  async claim(keys: string[], token: string): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const result = (await this.redis.eval(CLAIM, keys.length, ...keys, token, String(DEDUPE_TTL_SECONDS))) as number[];
    return result.map((r) => r === 1);
  }

  async release(keys: string[], token: string): Promise<number> {
    if (keys.length === 0) return 0;
    return (await this.redis.eval(RELEASE, keys.length, ...keys, token, String(DEDUPE_TTL_SECONDS))) as number;
  }

  /**
   * For the worker: per key, whether the job enqueued under `token` may still write its event. False when
   * the claim was released (its request got a 503) or now belongs to another request; true when it is
   * held, or expired after 24 h in a queue that was down that long.
   */
  async claimStillHeld(keys: string[], token: string): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const values = await this.redis.mget(...keys);
    return values.map((v) => v === null || v === token);
  }
}
