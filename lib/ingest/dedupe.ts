// Idempotency keys (spec rule 4, DESIGN §3): a (website, idempotencyKey) pair claimed within 24 h makes a
// repeat a duplicate. Claims carry a per-request token so a release never frees another request's claim.
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

export const DEDUPE_TTL_SECONDS = 24 * 3600;
/**
 * How long a void mark outlives the request it voids. A job waits at most minutes in a running queue, but
 * a failed job stays until an operator retries it; a mark older than this no longer stops such a retry.
 */
export const VOID_TTL_SECONDS = 30 * 24 * 3600;

// A released claim leaves a tombstone ("x:" + token) instead of nothing: the request that released it was
// answered 503, so a job it may still have managed to enqueue is void, and the worker must be able to tell
// (a void mark per job, see voided(); jobs of v2 and v3 read their claims back, see claimStillHeld). A
// tombstone is free to claim again.
const RELEASED = 'x:';

// One round trip for a whole batch: answers a string with, per key in order, '1' for a fresh claim and '0'
// for a duplicate (one bulk reply: a thousand-integer array cost the client more to parse). A key repeated
// inside the batch is claimed by its first occurrence only. Almost every key is new, so the claim is first
// tried as one SET NX; only a key that exists is read, and claimed over when it is a tombstone.
const CLAIM = `
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'EX', ARGV[2]) then
    out[i] = '1'
  else
    local v = redis.call('GET', key)
    if (not v) or string.sub(v, 1, 2) == '${RELEASED}' then
      redis.call('SET', key, ARGV[1], 'EX', ARGV[2])
      out[i] = '1'
    else
      out[i] = '0'
    end
  end
end
return table.concat(out)`;

// Marks the request's job void (KEYS[1]), then turns only this request's claims into tombstones: one
// script, so no claim is ever freed while its job could still be written.
const RELEASE = `
redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
local n = 0
for i = 2, #KEYS do
  local key = KEYS[i]
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
    const result = (await this.redis.eval(CLAIM, keys.length, ...keys, token, String(DEDUPE_TTL_SECONDS))) as string;
    return keys.map((_, i) => result.charCodeAt(i) === 49); // '1'
  }

  /**
   * For a request answered 503 after its claims: marks its job (id = token) void, for the case that it was
   * queued after all, and frees its claims. Answers how many claims were freed.
   */
  async release(keys: string[], token: string): Promise<number> {
    const all = [this.voidKey(token), ...keys];
    return (await this.redis.eval(RELEASE, all.length, ...all, token, String(DEDUPE_TTL_SECONDS), String(VOID_TTL_SECONDS))) as number;
  }

  /** For the worker: which of these jobs (ids = request tokens) belong to requests answered 503. */
  async voided(tokens: readonly string[]): Promise<Set<string>> {
    if (tokens.length === 0) return new Set();
    const marks = await this.redis.mget(...tokens.map((t) => this.voidKey(t)));
    return new Set(tokens.filter((_, i) => marks[i] !== null));
  }

  private voidKey(token: string): string {
    return redisKey(this.prefix, 'idem-void', token);
  }

  /**
   * For the worker, on jobs of v2 and v3 only (v4 jobs are checked whole, by voided()): per key, whether
   * the job enqueued under `token` may still write its event. False when
   * the claim was released (its request got a 503) or now belongs to another request; true when it is
   * held, or expired after 24 h in a queue that was down that long.
   */
  async claimStillHeld(keys: string[], token: string): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const values = await this.redis.mget(...keys);
    return values.map((v) => v === null || v === token);
  }
}
