// Visit value scores as events arrive (DESIGN §3 value_score), for visitor.high_value. Each visit (session)
// has a Redis hash of the counts the score reads, the same ones the `sessions` table folds at read time
// (sql/clickhouse/002_sessions.sql, lib/stats/sql/valueScore.ts): pageviews, engaged milliseconds,
// interactions, goal events, identified, succeeded purchases; plus its first and last event time and its
// latest pageview's path. The writer adds each stored job's counts once (one script per flush, atomic with
// the job's mark, so a retried job is never counted twice); when a visit's score reaches 80 and its visitor
// has not been high-value yet that UTC day, the script records the crossing in the job's mark.
import type { EventRow } from '../ingest/job/rows';
import type { Redis } from '../redis';

/** A visit's counts are kept this long after its last event: a visit idle longer starts again from zero. */
export const VISIT_STATE_TTL_SECONDS = 2 * 3600;
export const HIGH_VALUE_SCORE = 80;
/** The per-day set of visitors already high-value outlives its day by a day. */
const DAY_TTL_SECONDS = 2 * 24 * 3600;

/** What one job adds to one visit. */
export interface VisitDelta {
  sessionId: string;
  visitorId: string;
  pageviews: number;
  engagementMs: number;
  interactions: number;
  goals: number;
  identified: 0 | 1;
  purchases: number;
  /** Unix ms of the job's first and last event of the visit. */
  first: number;
  last: number;
  /** The job's latest pageview of the visit, if any. */
  page?: { path: string; at: number };
}

/** A crossing: the visit that made its visitor high-value that day. */
export interface HighValue {
  visitorId: string;
  score: number;
  currentPage: string;
  /** Seconds from the visit's first event to its last so far. */
  timeOnSite: number;
  /** Unix ms of the latest event of the crossing job's visit, and its UTC day. */
  at: number;
  day: string;
}

const msOfChTime = (ts: string) => Date.parse(`${ts.slice(0, 10)}T${ts.slice(11, 23)}Z`);

/** A job's rows folded per visit, as sessions_mv folds them (events without a session belong to no visit). */
export function visitDeltas(rows: readonly EventRow[]): VisitDelta[] {
  const visits = new Map<string, VisitDelta>();
  for (const r of rows) {
    if (r.session_id === '') continue;
    const at = msOfChTime(r.ts);
    let d = visits.get(r.session_id);
    if (!d) {
      d = {
        sessionId: r.session_id,
        visitorId: '',
        pageviews: 0,
        engagementMs: 0,
        interactions: 0,
        goals: 0,
        identified: 0,
        purchases: 0,
        first: at,
        last: at,
      };
      visits.set(r.session_id, d);
    }
    if (!d.visitorId && r.visitor_id) d.visitorId = r.visitor_id;
    if (at < d.first) d.first = at;
    if (at > d.last) d.last = at;
    d.engagementMs += r.engagement_ms;
    if (r.type === 'pageview') {
      d.pageviews++;
      if (!d.page || at >= d.page.at) d.page = { path: r.pathname, at };
    }
    if (
      r.type === 'event' ||
      r.type === 'goal' ||
      r.type === 'click' ||
      (r.type === 'engagement' && r.engagement_ms > 10_000)
    )
      d.interactions++;
    if (r.type === 'goal') d.goals++;
    if (r.type === 'identify') d.identified = 1;
    if (r.type === 'purchase' && purchaseSucceeded(r.props)) d.purchases++;
  }
  return [...visits.values()];
}

function purchaseSucceeded(props: string): boolean {
  try {
    return (JSON.parse(props) as { status?: unknown }).status === 'succeeded';
  } catch {
    return false;
  }
}

// KEYS: per job its mark, then per visit delta its state hash and its day's visitor set, in ARGV's order.
// ARGV[1]: JSON {mt: mark ttl s, vt: visit ttl s, dt: day set ttl s, jobs: [{d: [[pv, eng, it, g, idf, buy,
// first, last, pagePath|false, pageAt, visitor, day]]}]}. A job whose mark exists is not applied again:
// its mark's recorded crossings are answered instead. Answers one mark value per job: 'A' + JSON crossings
// [[visitor, score, page, seconds, at, day]] (or 'B…', a job whose webhook events are queued already).
const APPLY = `
local a = cjson.decode(ARGV[1])
local out = {}
local k = #a.jobs
for i, job in ipairs(a.jobs) do
  local mark = redis.call('GET', KEYS[i])
  if mark then
    out[i] = mark
  else
    local fired = {}
    for _, d in ipairs(job.d) do
      k = k + 1
      local vk = KEYS[k]
      k = k + 1
      local dk = KEYS[k]
      local s = redis.call('HMGET', vk, 'pv', 'eng', 'it', 'g', 'idf', 'buy', 'f', 'l', 'p', 'pt', 'v')
      local pv = (tonumber(s[1]) or 0) + d[1]
      local eng = (tonumber(s[2]) or 0) + d[2]
      local it = (tonumber(s[3]) or 0) + d[3]
      local g = (tonumber(s[4]) or 0) + d[4]
      local idf = math.max(tonumber(s[5]) or 0, d[5])
      local buy = (tonumber(s[6]) or 0) + d[6]
      local f = math.min(tonumber(s[7]) or d[7], d[7])
      local l = math.max(tonumber(s[8]) or d[8], d[8])
      local page = s[9] or ''
      local pt = tonumber(s[10]) or -1
      if d[9] and d[10] >= pt then page = d[9]; pt = d[10] end
      local v = s[11] or ''
      if v == '' then v = d[11] end
      redis.call('HSET', vk, 'pv', pv, 'eng', eng, 'it', it, 'g', g, 'idf', idf, 'buy', buy, 'f', f, 'l', l, 'p', page, 'pt', pt, 'v', v)
      redis.call('EXPIRE', vk, a.vt)
      local score = math.min(100, 10 * math.min(pv, 4) + math.min(25, math.floor(eng / 60000) * 5)
        + (it > 0 and 15 or 0) + (g > 0 and 20 or 0) + (idf > 0 and 10 or 0) + (buy > 0 and 20 or 0))
      if score >= ${HIGH_VALUE_SCORE} and v ~= '' and redis.call('SADD', dk, v) == 1 then
        redis.call('EXPIRE', dk, a.dt)
        fired[#fired + 1] = {v, score, page, math.floor((l - f) / 1000), d[8], d[12]}
      end
    end
    mark = 'A' .. (#fired > 0 and cjson.encode(fired) or '[]')
    redis.call('SET', KEYS[i], mark, 'EX', a.mt)
    out[i] = mark
  end
end
return out`;

export interface ScoreJob {
  /** The job's fan-out mark (fanout.ts). */
  mark: string;
  websiteId: string;
  deltas: VisitDelta[];
}

export const visitStateKey = (prefix: string, websiteId: string, sessionId: string) =>
  `${prefix}:webhooks:visit:${websiteId}:${sessionId}`;
export const highValueDayKey = (prefix: string, websiteId: string, day: string) =>
  `${prefix}:webhooks:high-value:${websiteId}:${day}`;

/**
 * Adds the jobs' visit counts (each job once, ever) and answers each job's mark: 'A' + its crossings, or
 * the mark it had already.
 */
export async function applyVisitDeltas(
  redis: Redis,
  prefix: string,
  jobs: readonly ScoreJob[],
  markTtlSeconds: number,
): Promise<string[]> {
  if (jobs.length === 0) return [];
  const keys: string[] = jobs.map((j) => j.mark);
  const payload = jobs.map((j) => ({
    d: j.deltas.map((d) => {
      const day = new Date(d.last).toISOString().slice(0, 10);
      keys.push(visitStateKey(prefix, j.websiteId, d.sessionId), highValueDayKey(prefix, j.websiteId, day));
      return [
        d.pageviews,
        d.engagementMs,
        d.interactions,
        d.goals,
        d.identified,
        d.purchases,
        d.first,
        d.last,
        d.page ? d.page.path : false,
        d.page ? d.page.at : 0,
        d.visitorId,
        day,
      ];
    }),
  }));
  const arg = JSON.stringify({ mt: markTtlSeconds, vt: VISIT_STATE_TTL_SECONDS, dt: DAY_TTL_SECONDS, jobs: payload });
  return (await redis.eval(APPLY, keys.length, ...keys, arg)) as string[];
}

/** The crossings recorded in an 'A' mark. */
export function crossingsOfMark(mark: string): HighValue[] {
  if (!mark.startsWith('A')) return [];
  const list = JSON.parse(mark.slice(1)) as unknown;
  if (!Array.isArray(list)) return [];
  return (list as [string, number, string, number, number, string][]).map(
    ([visitorId, score, currentPage, timeOnSite, at, day]) => ({
      visitorId,
      score,
      currentPage,
      timeOnSite,
      at,
      day,
    }),
  );
}
