// Idempotency keys (spec rule 4, DESIGN §3): a (website, idempotencyKey) pair whose event was durably queued
// within 24 h makes a repeat a duplicate.
//
// Claims live in Redis hashes, one per (website, UTC day of the claim, shard of the key), as fields
// "<idempotencyKey>" → "<token> <claim time in s>", where the token is the claiming request's (and its job's
// id). A batch of 1,000 is then a few HMGET/HSET calls instead of a thousand SET NX EX. The window is exact: a
// claim is live while its recorded time is under 24 h old, so only today's and yesterday's hashes are read
// (Redis's clock decides both). A hash expires at the end of the day after its own. Every hash of a website
// shares the hash tag {websiteId}, so one script's keys sit in one cluster slot.
//
// A claim alone proves nothing: its request may have died, or timed out while Redis ran the claim later. So
// a key held by another request is a duplicate only when that request's job is known to be queued
// (lib/queue/ingestMarks.ts: a "queued" mark written in the same transaction as the job). Otherwise the
// holder is voided (its job, should it still arrive, is dropped and its request answered 503) and the claim
// is taken over. See docs/ingestion.md for the whole argument.
import type { Redis } from 'ioredis';
import { redisKey } from '../../redis';

export const DEDUPE_TTL_SECONDS = 24 * 3600;
const SHARDS = 16;

// ARGV: token, shard letters (one per key), ttl, n, n voided holder tokens, keys…; KEYS[1] the website's
// hash prefix. Per key, in order: claimed now ('1'), a repeat earlier in this batch ('0'), or held by a live
// claim of another request that is not among the voided ('h', "<its token> <claim age in s>" listed after
// the codes). A claim held by a voided request is taken over. Answers {codes, holders…}.
const CLAIM = `
local now = tonumber(redis.call('TIME')[1])
local day = math.floor(now / 86400)
local ttl = tonumber(ARGV[3])
local nvoid = tonumber(ARGV[4])
local voided = {}
for i = 5, 4 + nvoid do voided[ARGV[i]] = true end
local first = 5 + nvoid
local function bucket(d, shard) return KEYS[1] .. ':' .. d .. ':' .. shard end
-- The token and age of a live claim (under ttl old), or nil.
local function holder(v)
  if not v then return nil end
  local token, at = string.match(v, '^(%S+) (%d+)$')
  if token and now - tonumber(at) < ttl then return token, now - tonumber(at) end
  return nil
end
local groups = {}
for i = first, #ARGV do
  local s = string.sub(ARGV[2], i - first + 1, i - first + 1)
  local g = groups[s]
  if not g then g = {}; groups[s] = g end
  g[#g + 1] = i
end
local value = ARGV[1] .. ' ' .. now
local codes = {}
local holders = {}
local seen = {}
for shard, positions in pairs(groups) do
  local fields = {}
  for j, i in ipairs(positions) do fields[j] = ARGV[i] end
  local today = redis.call('HMGET', bucket(day, shard), unpack(fields))
  local before = redis.call('HMGET', bucket(day - 1, shard), unpack(fields))
  local sets = {}
  for j, i in ipairs(positions) do
    local f = fields[j]
    local pos = i - first + 1
    local h, age = holder(today[j])
    if not h then h, age = holder(before[j]) end
    if seen[f] then
      codes[pos] = '0'
    elseif h and not voided[h] then
      codes[pos] = 'h'
      holders[pos] = h .. ' ' .. age
    else
      seen[f] = true
      codes[pos] = '1'
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
local out = { table.concat(codes) }
for pos = 1, #codes do
  if holders[pos] then out[#out + 1] = holders[pos] end
end
return out`;

/** The shard of an idempotency key: a letter a–p from a hash of its last characters (cheap, stable). */
export function shardOf(key: string): string {
  let h = 0;
  for (let i = Math.max(0, key.length - 8); i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return String.fromCharCode(97 + ((h >>> 0) % SHARDS));
}

/** Per key: claimed by this request, a repeat within the batch, or held by another request (its token, and how long ago it claimed). */
export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'repeat' }
  | { kind: 'held'; holder: string; ageSeconds: number };

const CLAIMED: ClaimResult = { kind: 'claimed' };
const REPEAT: ClaimResult = { kind: 'repeat' };

export class IdempotencyKeys {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The prefix of a website's claim hashes; the hash tag keeps them in one cluster slot. */
  private buckets(websiteId: string): string {
    return redisKey(this.prefix, 'idem2', `{${websiteId}}`);
  }

  /**
   * Claims each key for the request `token`, in one atomic script. A key whose live claim belongs to one of
   * `voidedHolders` (requests known never to have queued their job) is taken over.
   */
  async claim(
    websiteId: string,
    idempotencyKeys: readonly string[],
    token: string,
    voidedHolders: readonly string[] = [],
  ): Promise<ClaimResult[]> {
    if (idempotencyKeys.length === 0) return [];
    const reply = (await this.redis.eval(
      CLAIM,
      1,
      this.buckets(websiteId),
      token,
      idempotencyKeys.map(shardOf).join(''),
      String(DEDUPE_TTL_SECONDS),
      String(voidedHolders.length),
      ...voidedHolders,
      ...idempotencyKeys,
    )) as string[];
    const codes = reply[0];
    let next = 1;
    return idempotencyKeys.map((_, i) => {
      const code = codes.charCodeAt(i);
      if (code === 49) return CLAIMED; // '1'
      if (code === 48) return REPEAT; // '0'
      const [holder, age] = reply[next++].split(' ');
      return { kind: 'held', holder, ageSeconds: Number(age) };
    });
  }
}
