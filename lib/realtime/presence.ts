// Real-time presence (DESIGN §3 "Real-time data"): who is on a website right now, kept in Redis so the
// realtime endpoints never scan ClickHouse. Ingestion records pageviews here fire-and-forget; reads are one
// script call.
//
// Layout, per website (every key expires on its own, so an idle website leaves nothing behind):
//   <prefix>:rt:<websiteId>:seen        ZSET  visitor id → last-seen ms               (TTL 6 min from last write)
//   <prefix>:rt:<websiteId>:where       HASH  visitor id → "<country>\t<pathname>"    (TTL 6 min from last write)
//   <prefix>:rt:<websiteId>:pv:<minute> STRING pageviews whose ts falls in that epoch minute (TTL: minute start + 31 min)
// `seen` and `where` always hold the same members: both are written and pruned together by the scripts.
//
// pageviews_last_30m has per-minute granularity: it sums the 30 minute buckets ending with the current,
// partial one, so it covers between 29 and 30 minutes and never counts a pageview older than 30 minutes.
import type { RealtimeData } from '../external/schemas';
import type { Logger } from '../log';
import { type Redis, redisKey } from '../redis';

/** A pageview seen by ingestion. */
export interface PresenceHit {
  websiteId: string;
  visitorId: string;
  pathname: string;
  countryCode: string;
  /** When it happened, epoch ms. */
  ts: number;
}

/** Records hits without ever delaying or failing the caller. */
export type PresenceSink = (hits: PresenceHit[]) => void;

const MINUTE_MS = 60_000;
export const LIVE_MS = 5 * MINUTE_MS;
export const WINDOW_MINUTES = 30;
// Live keys outlive the live window by a minute so a read just after the last write still finds them.
const LIVE_TTL_MS = LIVE_MS + MINUTE_MS;
// A counter is read until its minute leaves the 30-minute window; one more minute covers clock skew.
const BUCKET_TTL_MS = (WINDOW_MINUTES + 1) * MINUTE_MS;
/**
 * Live visitors kept per website. Browser ingestion is public, so a flood of made-up visitor ids must not
 * grow Redis without limit: past the cap the least recently seen are dropped (live_visitors saturates).
 */
export const MAX_LIVE_PER_WEBSITE = 100_000;
// Paths are capped so one visitor's hash entry stays small whatever the tracker sends.
const MAX_PATH_CHARS = 1024;
const TOP_N = 10;
// Stale members removed per write: a fixed floor plus twice what the call adds, so pruning outpaces growth
// while a single call's work stays bounded.
const PRUNE_FLOOR = 100;
// A read prunes more, since it also walks every live member anyway.
const READ_PRUNE_LIMIT = 5_000;

// Shared by both scripts: removes members from the zset and the hash together. Lua's unpack has a stack
// limit, hence the chunks.
const DROP = `
local function drop(seen, where, members)
  for i = 1, #members, 1000 do
    local last = math.min(i + 999, #members)
    redis.call('ZREM', seen, unpack(members, i, last))
    redis.call('HDEL', where, unpack(members, i, last))
  end
end`;

// KEYS, per website in order: seen, where, then that website's minute counters.
// ARGV: cutoff ms, live TTL ms, max live, website count, then per website: visitor count, counter count,
// (visitor, ts, place) per visitor, (increment, ttl ms) per counter.
// A visitor's place only moves forward in time, so a late or reordered hit never overwrites a newer page.
const WRITE = `${DROP}
local cutoff, liveTtl, maxLive = ARGV[1], ARGV[2], tonumber(ARGV[3])
local k, a = 1, 5
for _ = 1, tonumber(ARGV[4]) do
  local seen, where = KEYS[k], KEYS[k + 1]
  k = k + 2
  local nv, nc = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  if nv > 0 then
    for _ = 1, nv do
      local visitor, ts = ARGV[a], ARGV[a + 1]
      local old = redis.call('ZSCORE', seen, visitor)
      if (not old) or tonumber(ts) >= tonumber(old) then
        redis.call('ZADD', seen, ts, visitor)
        redis.call('HSET', where, visitor, ARGV[a + 2])
      end
      a = a + 3
    end
    drop(seen, where, redis.call('ZRANGEBYSCORE', seen, '-inf', '(' .. cutoff, 'LIMIT', 0, ${PRUNE_FLOOR} + 2 * nv))
    local excess = redis.call('ZCARD', seen) - maxLive
    if excess > 0 then drop(seen, where, redis.call('ZRANGE', seen, 0, excess - 1)) end
    redis.call('PEXPIRE', seen, liveTtl)
    redis.call('PEXPIRE', where, liveTtl)
  end
  for _ = 1, nc do
    redis.call('INCRBY', KEYS[k], ARGV[a])
    redis.call('PEXPIRE', KEYS[k], ARGV[a + 1])
    k = k + 1
    a = a + 2
  end
end
return 1`;

// KEYS: seen, where, then the window's minute counters (oldest first). ARGV: cutoff ms, prune limit, top n.
// Returns live count, pageviews, top pages, top countries, and each minute's pageviews in KEYS' order.
// Aggregating here keeps the reply to a few dozen values however many visitors are live. Ties sort by byte
// order of the name, which is ascending code-point order for UTF-8.
const READ = `${DROP}
local seen, where, cutoff, topN = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[3])
drop(seen, where, redis.call('ZRANGEBYSCORE', seen, '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[2])))
local live = redis.call('ZRANGEBYSCORE', seen, cutoff, '+inf')
local pages, countries = {}, {}
for i = 1, #live, 1000 do
  local places = redis.call('HMGET', where, unpack(live, i, math.min(i + 999, #live)))
  for j = 1, #places do
    local place = places[j]
    if place then
      local tab = string.find(place, '\\t', 1, true)
      if tab then
        local country, page = string.sub(place, 1, tab - 1), string.sub(place, tab + 1)
        if country ~= '' then countries[country] = (countries[country] or 0) + 1 end
        if page ~= '' then pages[page] = (pages[page] or 0) + 1 end
      end
    end
  end
end
local function top(counts)
  local rows = {}
  for name, n in pairs(counts) do rows[#rows + 1] = { name, n } end
  table.sort(rows, function(x, y)
    if x[2] ~= y[2] then return x[2] > y[2] end
    return x[1] < y[1]
  end)
  local flat = {}
  for i = 1, math.min(topN, #rows) do
    flat[#flat + 1] = rows[i][1]
    flat[#flat + 1] = rows[i][2]
  end
  return flat
end
local pageviews, perMinute = 0, {}
for i = 3, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i])) or 0
  pageviews = pageviews + n
  perMinute[#perMinute + 1] = n
end
return { #live, pageviews, top(pages), top(countries), perMinute }`;

// KEYS: seen, then the window's minute counters. ARGV: cutoff ms. Counts without walking the live set (ZCOUNT is
// O(log n)), so a read that needs no breakdown never holds Redis for long however many visitors are live.
const COUNT = `
local live = redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf')
local pageviews = 0
for i = 2, #KEYS do pageviews = pageviews + (tonumber(redis.call('GET', KEYS[i])) or 0) end
return { live, pageviews }`;

interface PresenceCommands {
  tidemarkPresenceWrite(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  tidemarkPresenceRead(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  tidemarkPresenceCount(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

// defineCommand sends each script once per connection (EVALSHA afterwards); defining twice is wasteful.
const defined = new WeakSet<Redis>();
function commands(redis: Redis): PresenceCommands {
  if (!defined.has(redis)) {
    redis.defineCommand('tidemarkPresenceWrite', { lua: WRITE });
    redis.defineCommand('tidemarkPresenceRead', { lua: READ });
    redis.defineCommand('tidemarkPresenceCount', { lua: COUNT });
    defined.add(redis);
  }
  return redis as unknown as PresenceCommands;
}

const seenKey = (prefix: string, websiteId: string) => redisKey(prefix, 'rt', websiteId, 'seen');
const whereKey = (prefix: string, websiteId: string) => redisKey(prefix, 'rt', websiteId, 'where');
const minuteKey = (prefix: string, websiteId: string, minute: number) =>
  redisKey(prefix, 'rt', websiteId, 'pv', String(minute));

// The hash value splits at its first tab, so the country must never hold one; anything but a two-letter
// code counts as unknown.
function place(hit: PresenceHit): string {
  const country = /^[A-Za-z]{2}$/.test(hit.countryCode) ? hit.countryCode.toUpperCase() : '';
  return `${country}\t${hit.pathname.slice(0, MAX_PATH_CHARS)}`;
}

/**
 * Records pageviews in one round trip, whatever the number of hits and websites. Hits older than 30 minutes
 * are ignored, future ones count as now; only hits from the last 5 minutes move a visitor's presence.
 */
export async function recordPresence(
  redis: Redis,
  prefix: string,
  hits: PresenceHit[],
  now = Date.now(),
): Promise<void> {
  const oldest = now - WINDOW_MINUTES * MINUTE_MS;
  const liveFrom = now - LIVE_MS;
  const firstMinute = Math.floor(now / MINUTE_MS) - (WINDOW_MINUTES - 1);
  // Reduced here so the script does one write per visitor and one INCRBY per minute, not one per hit.
  const sites = new Map<
    string,
    { visitors: Map<string, { ts: number; hit: PresenceHit }>; minutes: Map<number, number> }
  >();
  for (const hit of hits) {
    if (!Number.isFinite(hit.ts) || hit.ts < oldest) continue;
    const ts = Math.min(hit.ts, now);
    let site = sites.get(hit.websiteId);
    if (!site) {
      site = { visitors: new Map(), minutes: new Map() };
      sites.set(hit.websiteId, site);
    }
    const minute = Math.floor(ts / MINUTE_MS);
    // A pageview just past 30 minutes can still fall in a bucket the window no longer reads.
    if (minute >= firstMinute) site.minutes.set(minute, (site.minutes.get(minute) ?? 0) + 1);
    if (ts >= liveFrom && hit.visitorId) {
      const seen = site.visitors.get(hit.visitorId);
      if (!seen || ts >= seen.ts) site.visitors.set(hit.visitorId, { ts, hit });
    }
  }
  if (sites.size === 0) return;

  const keys: string[] = [];
  const args: (string | number)[] = [];
  for (const [websiteId, site] of sites) {
    keys.push(seenKey(prefix, websiteId), whereKey(prefix, websiteId));
    args.push(site.visitors.size, site.minutes.size);
    for (const [visitorId, { ts, hit }] of site.visitors) args.push(visitorId, ts, place(hit));
    for (const [minute, n] of site.minutes) {
      keys.push(minuteKey(prefix, websiteId, minute));
      // Relative to `now`, so the counter dies 31 minutes after its minute began, whoever wrote it last.
      args.push(n, Math.ceil(minute * MINUTE_MS + BUCKET_TTL_MS - now));
    }
  }
  await commands(redis).tidemarkPresenceWrite(
    keys.length,
    ...keys,
    liveFrom,
    LIVE_TTL_MS,
    MAX_LIVE_PER_WEBSITE,
    sites.size,
    ...args,
  );
}

/** The website's live picture as of `now`, in one round trip (the read also prunes stale visitors). */
export async function realtimeSnapshot(
  redis: Redis,
  prefix: string,
  websiteId: string,
  now = Date.now(),
): Promise<RealtimeData> {
  const lastMinute = Math.floor(now / MINUTE_MS);
  const keys = [seenKey(prefix, websiteId), whereKey(prefix, websiteId)];
  for (let m = lastMinute - (WINDOW_MINUTES - 1); m <= lastMinute; m++) keys.push(minuteKey(prefix, websiteId, m));
  const [live, pageviews, pages, countries, perMinute] = (await commands(redis).tidemarkPresenceRead(
    keys.length,
    ...keys,
    now - LIVE_MS,
    READ_PRUNE_LIMIT,
    TOP_N,
  )) as [number, number, (string | number)[], (string | number)[], number[]];
  const firstMinute = lastMinute - (WINDOW_MINUTES - 1);
  const pairs = (flat: (string | number)[]) => {
    const out: { name: string; visitors: number }[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ name: String(flat[i]), visitors: Number(flat[i + 1]) });
    return out;
  };
  return {
    website_id: websiteId,
    live_visitors: live,
    pageviews_last_30m: pageviews,
    top_pages: pairs(pages).map((p) => ({ url: p.name, visitors: p.visitors })),
    countries: pairs(countries).map((c) => ({ country_code: c.name, visitors: c.visitors })),
    pageviews_per_minute: perMinute.map((n, i) => ({
      minute: new Date((firstMinute + i) * MINUTE_MS).toISOString(),
      pageviews: Number(n),
    })),
    as_of: new Date(now).toISOString(),
  };
}

/** Live visitors and pageviews of the last 30 minutes only, as realtimeSnapshot counts them, without its walk. */
export async function realtimeCounts(
  redis: Redis,
  prefix: string,
  websiteId: string,
  now = Date.now(),
): Promise<Pick<RealtimeData, 'live_visitors' | 'pageviews_last_30m' | 'as_of'>> {
  const lastMinute = Math.floor(now / MINUTE_MS);
  const keys = [seenKey(prefix, websiteId)];
  for (let m = lastMinute - (WINDOW_MINUTES - 1); m <= lastMinute; m++) keys.push(minuteKey(prefix, websiteId, m));
  const [live, pageviews] = (await commands(redis).tidemarkPresenceCount(keys.length, ...keys, now - LIVE_MS)) as [
    number,
    number,
  ];
  return { live_visitors: live, pageviews_last_30m: pageviews, as_of: new Date(now).toISOString() };
}

/**
 * The ingest hook: presence is a nice-to-have next to durable ingestion, so a Redis hiccup here is logged
 * and forgotten rather than allowed to touch the response.
 */
export function presenceSink(redis: Redis, prefix: string, logger: Logger): PresenceSink {
  const warn = (err: unknown) => logger.warn({ err: (err as Error)?.message }, 'realtime presence not recorded');
  return (hits) => {
    if (hits.length === 0) return;
    try {
      recordPresence(redis, prefix, hits).catch(warn);
    } catch (err) {
      warn(err);
    }
  };
}
