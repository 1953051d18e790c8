// Idempotency keys (spec rule 4, DESIGN §3): a (website, idempotencyKey) pair claimed within 24 h makes a
// repeat a duplicate. Claims carry a per-request token so a release never frees another request's claim.
//
// Claims live in Redis hashes, one per (website, UTC day of the claim, shard of the key), as fields
// "<idempotencyKey>" → "<token> <claim time in s>". A batch of 1,000 is then a few HMGET/HSET calls instead
// of a thousand SET NX EX (measured: the claim script took ~4.4 µs of Redis time per event with a key per
// claim, ~75 % of Redis's CPU under the ingest benchmark). The window stays exact: a claim is live while its
// recorded time is under 24 h old, so only today's and yesterday's hashes are read (Redis's clock decides
// both). A hash expires at the end of the day after its own; the shards (16, chosen by the key) keep each
// hash small enough that its expiry frees it quickly. Every hash of a website shares the hash tag
// {websiteId}, so one script's keys sit in one cluster slot.
import type { Redis } from 'ioredis';
import { redisKey } from '../redis';

export const DEDUPE_TTL_SECONDS = 24 * 3600;
/**
 * How long a void mark outlives the request it voids. A job waits at most minutes in a running queue, but
 * a failed job stays until an operator retries it; a mark older than this no longer stops such a retry.
 */
export const VOID_TTL_SECONDS = 30 * 24 * 3600;
const SHARDS = 16;

// A released claim leaves a tombstone ("x:" + its value) instead of nothing: the request that released it
// was answered 503, so a job it may still have managed to enqueue is void, and the worker must be able to
// tell (a void mark per job, see voided()). A tombstone is free to claim again.
const RELEASED = 'x:';

// Shared by both scripts: today's and yesterday's hash of a shard (by Redis's clock), and whether a field
// value is a live claim (not a tombstone, under 24 h old).
const LUA_COMMON = `
local now = tonumber(redis.call('TIME')[1])
local day = math.floor(now / 86400)
local function bucket(d, shard) return KEYS[1] .. ':' .. d .. ':' .. shard end
local function live(v, ttl)
  if not v or string.sub(v, 1, 2) == '${RELEASED}' then return false end
  local at = tonumber(string.match(v, ' (%d+)$'))
  return at ~= nil and now - at < ttl
end
-- ARGV positions of the keys, grouped by shard (ARGV[2] holds one shard letter per key).
local function byShard(first)
  local groups = {}
  for i = first, #ARGV do
    local s = string.sub(ARGV[2], i - first + 1, i - first + 1)
    local g = groups[s]
    if not g then g = {}; groups[s] = g end
    g[#g + 1] = i
  end
  return groups
end`;

// ARGV: token, shard letters, ttl, keys…; KEYS[1] the website's hash prefix, KEYS[2..] legacy per-key claims
// (only while claims of the previous layout may be alive, see legacyUntil). Answers one string with, per key
// in order, '1' for a fresh claim and '0' for a duplicate; a key repeated in the batch is claimed by its first
// occurrence only.
const CLAIM = `${LUA_COMMON}
local ttl = tonumber(ARGV[3])
local value = ARGV[1] .. ' ' .. now
local out = {}
local legacy = {}
if #KEYS > 1 then
  local names = {}
  for i = 2, #KEYS do names[i - 1] = KEYS[i] end
  local values = redis.call('MGET', unpack(names))
  for i, v in ipairs(values) do
    if v and string.sub(v, 1, 2) ~= '${RELEASED}' then legacy[i] = true end
  end
end
local seen = {}
for shard, positions in pairs(byShard(4)) do
  local fields = {}
  for j, i in ipairs(positions) do fields[j] = ARGV[i] end
  local today = redis.call('HMGET', bucket(day, shard), unpack(fields))
  local before = redis.call('HMGET', bucket(day - 1, shard), unpack(fields))
  local sets = {}
  for j, i in ipairs(positions) do
    local f = fields[j]
    if seen[f] or legacy[i - 3] or live(today[j], ttl) or live(before[j], ttl) then
      out[i - 3] = '0'
    else
      seen[f] = true
      out[i - 3] = '1'
      sets[#sets + 1] = f
      sets[#sets + 1] = value
    end
  end
  if #sets > 0 then
    local key = bucket(day, shard)
    redis.call('HSET', key, unpack(sets))
    redis.call('EXPIREAT', key, (day + 2) * 86400 + 60)
  end
end
return table.concat(out)`;

// Marks the request's job void (KEYS[2]), then turns only this request's claims into tombstones: one
// script, so no claim is ever freed while its job could still be written. ARGV: token, shard letters, void
// ttl, keys…; KEYS[1] the website's hash prefix. allow-oom: the enqueue that failed may have failed because
// Redis is at maxmemory (a queue backlog held there), and a release refused then would leave the keys
// claimed for 24 h, so the client's retry would be answered as a duplicate of events never stored. The
// script adds one small key and rewrites fields in place.
const RELEASE = `#!lua flags=allow-oom
${LUA_COMMON}
redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
local n = 0
for shard, positions in pairs(byShard(4)) do
  for _, d in ipairs({day, day - 1}) do
    local key = bucket(d, shard)
    for _, i in ipairs(positions) do
      local v = redis.call('HGET', key, ARGV[i])
      if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
        redis.call('HSET', key, ARGV[i], '${RELEASED}' .. v)
        n = n + 1
      end
    end
  end
end
return n`;

/** The shard of an idempotency key: a letter a–p from a hash of its last characters (cheap, stable). */
export function shardOf(key: string): string {
  let h = 0;
  for (let i = Math.max(0, key.length - 8); i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return String.fromCharCode(97 + ((h >>> 0) % SHARDS));
}

export class IdempotencyKeys {
  private legacyUntilMs?: Promise<number>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The prefix of a website's claim hashes; the hash tag keeps them in one cluster slot. */
  private buckets(websiteId: string): string {
    return redisKey(this.prefix, 'idem2', `{${websiteId}}`);
  }

  /** For each key in order: true when this call claimed it, false when it was already claimed. */
  async claim(websiteId: string, idempotencyKeys: readonly string[], token: string): Promise<boolean[]> {
    if (idempotencyKeys.length === 0) return [];
    const legacy = Date.now() < (await this.legacyUntil()) ? this.legacyKeys(websiteId, idempotencyKeys) : [];
    const shards = idempotencyKeys.map(shardOf).join('');
    const result = (await this.redis.eval(
      CLAIM,
      1 + legacy.length,
      this.buckets(websiteId),
      ...legacy,
      token,
      shards,
      String(DEDUPE_TTL_SECONDS),
      ...idempotencyKeys,
    )) as string;
    return idempotencyKeys.map((_, i) => result.charCodeAt(i) === 49); // '1'
  }

  /**
   * For a request answered 503 after its claims: marks its job (id = token) void, for the case that it was
   * queued after all, and frees its claims. Answers how many claims were freed.
   */
  async release(websiteId: string, idempotencyKeys: readonly string[], token: string): Promise<number> {
    const shards = idempotencyKeys.map(shardOf).join('');
    return (await this.redis.eval(
      RELEASE,
      2,
      this.buckets(websiteId),
      this.voidKey(token),
      token,
      shards,
      String(VOID_TTL_SECONDS),
      ...idempotencyKeys,
    )) as number;
  }

  /**
   * Until when claims of the previous layout (a key per claim, SET with a 24 h expiry) may be alive: 24 h
   * after the first start of this layout on a Redis that held such keys, 0 when it held none. Decided once
   * (SCAN, then SET NX) and kept in Redis; claims check those keys until then.
   */
  private legacyUntil(): Promise<number> {
    this.legacyUntilMs ??= (async () => {
      const marker = redisKey(this.prefix, 'idem2-legacy-until');
      const known = await this.redis.get(marker);
      if (known !== null) return Number(known);
      let cursor = '0';
      let found = false;
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${redisKey(this.prefix, 'idem')}:*`, 'COUNT', 1000);
        cursor = next;
        found = keys.length > 0;
      } while (!found && cursor !== '0');
      await this.redis.set(marker, String(found ? Date.now() + DEDUPE_TTL_SECONDS * 1000 : 0), 'EX', 2 * DEDUPE_TTL_SECONDS, 'NX');
      return Number((await this.redis.get(marker)) ?? 0);
    })().catch((err: unknown) => {
      this.legacyUntilMs = undefined; // Redis away: decided on a later call
      throw err;
    });
    return this.legacyUntilMs;
  }

  /** Per-key claims of the previous layout: still read while they may be alive, and by v2/v3 jobs. */
  legacyKeys(websiteId: string, idempotencyKeys: readonly string[]): string[] {
    const shared = redisKey(this.prefix, 'idem', websiteId, '');
    return idempotencyKeys.map((k) => shared + k);
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
   * For the worker, on jobs of v2 and v3 only (later jobs are checked whole, by voided()), whose claims are
   * per-key (legacyKeys): per key, whether the job enqueued under `token` may still write its event. False
   * when the claim was released (its request got a 503) or now belongs to another request; true when it is
   * held, or expired after 24 h in a queue that was down that long.
   */
  async claimStillHeld(keys: string[], token: string): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const values = await this.redis.mget(...keys);
    return values.map((v) => v === null || v === token);
  }
}
