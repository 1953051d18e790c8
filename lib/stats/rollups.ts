// Daily rollups (sql/clickhouse/004_rollups.sql; 007 remade the tables with small granules): the clock computes
// each website's closed days in its time zone, and the query model reads whole rolled-up days from them, the
// rest of a range from the raw tables.
// A day is closed RAW_TAIL_MS after it ends: server events may carry a ts up to 24 h old, and queued jobs
// need a moment to land. Visits still getting events after that are counted as they stood then.
import { selectRows, type ClickHouseClient } from '../clickhouse/client';
import { renderClickHouseSql } from '../db/migrate';
import { ATTRIBUTE_VALUES, EMPTY_SKETCH, SCORE_COLUMNS, sessionFold, T, VALUE_SCORE_SQL, type Window } from './query';
import { addDays, daysBetween, formatDate, localParts, parseDate, startOfDay, today, type LocalDate } from './time';

export const RAW_TAIL_MS = 26 * 3600_000;
/** Days one job run computes per website at most (a backfill continues on the next run). */
export const MAX_DAYS_PER_RUN = 62;

export interface RollupPlan {
  /** Rolled-up local days, inclusive, as YYYY-MM-DD. */
  firstDay: string;
  lastDay: string;
  /** What the raw tables still answer: the parts of the range before and after those days. */
  rawWindows: Window[];
  /** Whether any of those days has visits in mixed_visits (most websites never do: a read saved). */
  mixedVisits: boolean;
}

/** A website's computed days, and those of them holding mixed visits (YYYY-MM-DD). */
export interface RollupCoverage {
  first: LocalDate;
  last: LocalDate;
  mixedDays: readonly string[];
}


const later = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) > 0 ? b : a);
const earlier = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) < 0 ? b : a);

/** The local date of an instant when it is that date's midnight; undefined for any other instant. */
function midnightDate(instant: number, timeZone: string): LocalDate | undefined {
  const p = localParts(instant, timeZone);
  const d = { year: p.year, month: p.month, day: p.day };
  return startOfDay(d, timeZone) === instant ? d : undefined;
}

/**
 * Coverage only grows (a new day is appended; expired days expire with their raw rows), so a remembered
 * coverage stays true: at worst it is a little short and more of a range is read raw.
 */
const COVERAGE_MEMORY_MS = 60_000;
const knownCoverage = new Map<string, { at: number; coverage: RollupCoverage }>();

async function cachedCoverage(clickhouse: ClickHouseClient, websiteId: string, timeZone: string) {
  const key = `${websiteId}|${timeZone}`;
  const known = knownCoverage.get(key);
  if (known && Date.now() - known.at < COVERAGE_MEMORY_MS) return known.coverage;
  const coverage = await rollupCoverage(clickhouse, websiteId, timeZone);
  if (coverage) {
    if (knownCoverage.size > 10_000) knownCoverage.clear();
    knownCoverage.set(key, { at: Date.now(), coverage });
  }
  return coverage;
}

/** The computed days of a website in a time zone, when they form one unbroken run (a marker's `visits`: the day's mixed visits). */
export async function rollupCoverage(clickhouse: ClickHouseClient, websiteId: string, timeZone: string): Promise<RollupCoverage | undefined> {
  const [row] = await selectRows<{ lo: string; hi: string; n: string; mixed: string[] }>(
    clickhouse,
    `SELECT toString(min(date)) AS lo, toString(max(date)) AS hi, uniqExact(date) AS n, arraySort(groupArrayIf(toString(date), visits > 0)) AS mixed
     FROM daily_rollups_v2 WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = '_'`,
    { w: websiteId, tz: timeZone },
  );
  const first = row && Number(row.n) > 0 ? parseDate(row.lo) : undefined;
  const last = first && parseDate(row.hi);
  if (!first || !last || daysBetween(first, last) + 1 !== Number(row.n)) return undefined;
  return { first, last, mixedDays: row.mixed };
}

/** Which whole days of [start, end) the rollups answer; undefined when none (or the range is not whole days). */
export async function rollupPlan(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, start: number, end: number): Promise<RollupPlan | undefined> {
  const from = midnightDate(start, timeZone);
  const until = midnightDate(end, timeZone);
  if (!from || !until) return undefined;
  const coverage = await cachedCoverage(clickhouse, websiteId, timeZone);
  if (!coverage) return undefined;
  const first = later(coverage.first, from);
  const last = earlier(coverage.last, addDays(until, -1));
  if (daysBetween(first, last) < 0) return undefined;
  const rolledStart = startOfDay(first, timeZone);
  const rolledEnd = startOfDay(addDays(last, 1), timeZone);
  const rawWindows = [
    { start, end: rolledStart },
    { start: rolledEnd, end },
  ].filter((w) => w.end > w.start);
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  return { firstDay, lastDay, rawWindows, mixedVisits: coverage.mixedDays.some((d) => d >= firstDay && d <= lastDay) };
}

const COLUMNS = 'website_id, tz, date, dim, value, visitors, visitors_n, pageviews, events, visits, bounces, duration_s, score_sum, scored, expire_at';
/**
 * Event columns by which event metrics are rolled up ('' = totals; page counts pageviews only; `attrs` an
 * event's country, browser, os and device as one JSON array, also kept in the row's a_* columns for filters:
 * ATTRIBUTE_KEYS in query.ts). A function: query.ts, which this module imports, imports this module too.
 */
const eventDims = () => `[('', ''), ('page', pathname), ('country', toString(country_code)), ('device', toString(device_type)),
  ('browser', toString(browser)), ('os', toString(os)), ('source', toString(source_name)), ('utm_source', toString(utm_source)),
  ('utm_medium', toString(utm_medium)), ('utm_campaign', toString(utm_campaign)), ('attrs', toJSONString([${ATTRIBUTE_VALUES.join(', ')}]))]`;
/** A visit's values by which session metrics are rolled up (the same expressions the query model folds). */
const SESSION_VALUES = `argMinMerge(entry_page) AS entry, argMaxMerge(exit_page) AS exit_, any(country_code) AS country, any(device_type) AS device,
  any(browser) AS br, any(os) AS os_, argMinMerge(source_name) AS src, argMinMerge(utm_source) AS us, argMinMerge(utm_medium) AS um,
  argMinMerge(utm_campaign) AS uc, sum(events) AS ev, any(visitor_id) AS visitor, max(expire_at) AS exp`;
const SESSION_DIMS = `[('s:', ''), ('s:entry_page', entry), ('s:exit_page', exit_), ('s:country', toString(country)), ('s:device', toString(device)),
  ('s:browser', toString(br)), ('s:os', toString(os_)), ('s:source', src), ('s:utm_source', us), ('s:utm_medium', um), ('s:utm_campaign', uc)]`;
/** Markers outlive any plan's retention: a day's marker only says the day was computed. */
const MARKER_TTL_DAYS = 1830;

/** Computes (or recomputes) the rollups of local days [first, last] of one website in its time zone. */
export async function computeRollups(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: LocalDate, last: LocalDate): Promise<void> {
  const window = { start: startOfDay(first, timeZone), end: startOfDay(addDays(last, 1), timeZone) };
  const base = { w: websiteId, tz: timeZone, a: window.start / 1000, b: window.end / 1000 };
  // A run that failed half-way left rows without markers: clear the days first, so that every (day, dim,
  // value) has one row and readers need no FINAL.
  for (const table of ['daily_rollups_v2', 'mixed_visits']) {
    await clickhouse.command({
      query: `DELETE FROM ${table} WHERE website_id = {w:UUID} AND tz = {tz:String} AND date >= {first:Date} AND date <= {last:Date}`,
      query_params: { w: websiteId, tz: timeZone, first: formatDate(first), last: formatDate(last) },
    });
  }
  // The rows of a run go in as one INSERT (one new part per month instead of one per kind of row: reads
  // pay per part, e.g. a page breakdown over 5 parts a month measured 117 ms, over one 22 ms). UNION ALL
  // needs every column named alike in every branch: `row` names them.
  const row = (values: string[]) => values.map((v, i) => `${v} AS c${i}`).join(', ');
  const NONE = ["''", "''", "''", "''"];
  const events = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(ts, {tz:String})', 'd.1', 'd.2', "uniqStateIf(visitor_id, visitor_id != '')",
    "uniqIf(visitor_id, visitor_id != '')", "countIf(type = 'pageview')", 'count()', '0', '0', '0', 'toFloat64(0)', '0', 'max(expire_at)',
    ...ATTRIBUTE_VALUES.map((v) => `any(if(d.1 = 'attrs', ${v}, ''))`)])}
      FROM events ARRAY JOIN ${eventDims()} AS d
      WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} AND type IN ('pageview', 'event') AND (d.1 != 'page' OR type = 'pageview')
      GROUP BY c2, c3, c4`;
  // Every fold below reads the same window, so they share its bound parameters.
  const params: Record<string, unknown> = { ...base };
  const visits = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(s, {tz:String})', 'd.1', 'd.2', "uniqStateIf(visitor, visitor != '')",
    "uniqIf(visitor, visitor != '')", 'sum(pv)', 'sum(ev)', 'count()', 'countIf(pv = 1 AND it = 0)', "toUInt64(sum(dateDiff('second', s, e)))",
    `toFloat64(sum(${VALUE_SCORE_SQL}))`, 'count()', 'max(exp)', ...NONE])}
      FROM (${sessionFold(`${SCORE_COLUMNS}, ${SESSION_VALUES}`, [], [window], params)}) ARRAY JOIN ${SESSION_DIMS} AS d
      GROUP BY c2, c3, c4`;
  // A visit counts for every page it viewed, up to a day after its day (it may run on past midnight).
  const pageScores = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(f.s, {tz:String})', "'page_scores'", 'page', EMPTY_SKETCH, '0', '0', '0', '0', '0', '0',
    `toFloat64(sum(${VALUE_SCORE_SQL}))`, 'count()', 'max(f.exp)', ...NONE])}
      FROM (
        SELECT session_id, groupUniqArray(pathname) AS pages FROM events
        WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} + INTERVAL 1 DAY AND type = 'pageview' AND session_id != ''
        GROUP BY session_id
      ) AS v
      INNER JOIN (${sessionFold(`${SCORE_COLUMNS}, max(expire_at) AS exp`, [], [window], params)}) AS f ON f.session_id = v.session_id
      ARRAY JOIN v.pages AS page
      GROUP BY c2, c4`;
  // Visits with the distinct attribute combinations of their pageviews (read as far as the raw fold reads
  // them), those with one (`= 1`) or several (`> 1`); a visit without pageviews matches no filter.
  const withCombos = (count: string) => `FROM (${sessionFold(`${SCORE_COLUMNS}, max(expire_at) AS exp`, [], [window], params)}) AS f
      INNER JOIN (
        SELECT session_id, groupUniqArray((${ATTRIBUTE_VALUES.join(', ')})) AS combos FROM events
        WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} + INTERVAL 1 DAY AND type = 'pageview' AND session_id != ''
        GROUP BY session_id
        HAVING length(combos) ${count}
      ) AS c ON c.session_id = f.session_id`;
  const combo = [1, 2, 3, 4].map((i) => `tupleElement(c.combos[1], ${i})`);
  const uniformVisits = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(f.s, {tz:String})', "'s:attrs'", `toJSONString([${combo.join(', ')}])`, EMPTY_SKETCH,
    '0', '0', '0', 'count()', 'countIf(f.pv = 1 AND f.it = 0)', "toUInt64(sum(dateDiff('second', f.s, f.e)))", `toFloat64(sum(${VALUE_SCORE_SQL}))`,
    'count()', 'max(f.exp)', ...combo.map((c) => `any(${c})`)])}
      ${withCombos('= 1')}
      GROUP BY c2, c4`;
  await clickhouse.command({
    query: `INSERT INTO mixed_visits (website_id, tz, date, session_id, duration_s, bounce, score, combos, expire_at)
      SELECT {w:UUID}, {tz:String}, toDate(f.s, {tz:String}), f.session_id, dateDiff('second', f.s, f.e), f.pv = 1 AND f.it = 0,
        ${VALUE_SCORE_SQL}, c.combos, f.exp
      ${withCombos('> 1')}`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO daily_rollups_v2 (${COLUMNS}, a_country, a_browser, a_os, a_device)
      ${[events, visits, pageScores, uniformVisits].join('\n      UNION ALL\n      ')}`,
    query_params: params,
  });
  // Markers last: a day counts as rolled up only once all its rows are in. A marker's `visits` counts the
  // day's mixed visits, so that filtered reads skip mixed_visits for ranges without any.
  await clickhouse.command({
    query: `INSERT INTO daily_rollups_v2 (${COLUMNS})
      SELECT {w:UUID}, {tz:String}, d.day, '_', '', ${EMPTY_SKETCH}, 0, 0, 0, m.n, 0, 0, 0, 0, toDateTime(addDays(d.day, ${MARKER_TTL_DAYS}))
      FROM (SELECT addDays({first:Date}, number) AS day FROM numbers({n:UInt32})) AS d
      LEFT JOIN (
        SELECT date, count() AS n FROM mixed_visits
        WHERE website_id = {w:UUID} AND tz = {tz:String} AND date >= {first:Date} AND date <= {last:Date}
        GROUP BY date
      ) AS m ON m.date = d.day`,
    query_params: { w: websiteId, tz: timeZone, first: formatDate(first), last: formatDate(last), n: daysBetween(first, last) + 1 },
  });
}

/** The standard ranges (days ending today) whose visitor sketches are kept merged. */
export const WINDOW_DAYS = [7, 30, 90, 365] as const;
/**
 * Dimensions without a window: the marker, page scores (no sketch), the visit dimensions by entry and exit
 * page and the attributes filtered questions read (both read per day). Pages have one: even when their daily
 * sketches hardly overlap, reading one merged sketch per page costs about half of reading and merging a
 * sketch per page and day (measured 2.2×).
 */
const WINDOW_DIMS_EXCLUDED = ['_', 'page_scores', 's:entry_page', 's:exit_page', 'attrs', 's:attrs'];

const knownWindows = new Map<string, number>();

/** Whether merged sketches cover exactly local days [first, last] (YYYY-MM-DD); remembered once seen. */
export async function windowAvailable(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: string, last: string): Promise<boolean> {
  const key = `${websiteId}|${timeZone}|${first}|${last}`;
  const seen = knownWindows.get(key);
  // A window lives for days; remembering it for an hour is safe.
  if (seen && Date.now() - seen < 3600_000) return true;
  const [row] = await selectRows<{ n: string }>(
    clickhouse,
    `SELECT count() AS n FROM window_rollups_v2 WHERE website_id = {w:UUID} AND tz = {tz:String} AND last = {last:Date} AND first = {first:Date} AND dim = '_'`,
    { w: websiteId, tz: timeZone, first, last },
  );
  if (Number(row?.n ?? 0) === 0) return false;
  if (knownWindows.size > 10_000) knownWindows.clear();
  knownWindows.set(key, Date.now());
  return true;
}

/** Merges the daily sketches of local days [first, last] (all rolled up) into one per dimension value. */
export async function computeWindow(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: LocalDate, last: LocalDate): Promise<void> {
  const params = { w: websiteId, tz: timeZone, first: formatDate(first), last: formatDate(last), excluded: WINDOW_DIMS_EXCLUDED };
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (website_id, tz, first, last, dim, value, visitors, made_at)
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, dim, value, uniqMergeState(visitors), now()
      FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND date >= {first:Date} AND date <= {last:Date} AND dim NOT IN {excluded:Array(String)}
      GROUP BY dim, value`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (website_id, tz, first, last, dim, value, visitors, made_at)
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, '_', '', ${EMPTY_SKETCH}, now()`,
    query_params: params,
  });
}

/** Keeps the standard ranges' merged sketches over the rolled-up days; answers how many were made. */
async function ensureWindows(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, coverage: Pick<RollupCoverage, 'first' | 'last'>, now: number): Promise<number> {
  const day = today(site.timezone, now);
  let made = 0;
  for (const n of WINDOW_DAYS) {
    const first = later(coverage.first, addDays(day, 1 - n));
    if (daysBetween(first, coverage.last) < 0) continue;
    if (await windowAvailable(clickhouse, site.id, site.timezone, formatDate(first), formatDate(coverage.last))) continue;
    await computeWindow(clickhouse, site.id, site.timezone, first, coverage.last);
    made++;
  }
  return made;
}

/** The last local day of a time zone that can no longer change at `now`. */
export function lastClosedDay(timeZone: string, now: number): LocalDate {
  let day = addDays(today(timeZone, now), -1);
  while (startOfDay(addDays(day, 1), timeZone) + RAW_TAIL_MS > now) day = addDays(day, -1);
  return day;
}

/**
 * Brings one website's rollups up to its last closed day: from the day after the last computed one (or its
 * first event's day), at most MAX_DAYS_PER_RUN days. Answers the days computed.
 */
export async function rollUpWebsite(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, now: number): Promise<number> {
  const closed = lastClosedDay(site.timezone, now);
  const coverage = await rollupCoverage(clickhouse, site.id, site.timezone);
  let first = coverage ? addDays(coverage.last, 1) : undefined;
  if (!first) {
    const [row] = await selectRows<{ t: string }>(
      clickhouse,
      `SELECT toString(toUnixTimestamp64Milli(min(ts))) AS t FROM events WHERE website_id = {w:UUID} HAVING count() > 0`,
      { w: site.id },
    );
    if (!row) return 0;
    first = today(site.timezone, Number(row.t));
  }
  if (daysBetween(first, closed) < 0) {
    if (coverage) await ensureWindows(clickhouse, site, coverage, now);
    return 0;
  }
  const last = earlier(closed, addDays(first, MAX_DAYS_PER_RUN - 1));
  await computeRollups(clickhouse, site.id, site.timezone, first, last);
  if (daysBetween(last, closed) === 0) await ensureWindows(clickhouse, site, { first: coverage?.first ?? first, last }, now);
  return daysBetween(first, last) + 1;
}

/** The rollup tables a read pays per part of (see sql/clickhouse/010_rollup_compaction.sql). */
const COMPACTED_TABLES = ['daily_rollups_v2', 'window_rollups_v2', 'mixed_visits'] as const;

/**
 * Merges every rollup table into one part per partition now, instead of within hours: for a backfill
 * (`tidemark rollup`), which writes months of rollups at once. Rewrites the tables; not for every run.
 */
export async function compactRollups(clickhouse: ClickHouseClient, cluster?: string): Promise<void> {
  // On a cluster every shard merges its own parts.
  for (const table of COMPACTED_TABLES) await clickhouse.command({ query: renderClickHouseSql(`OPTIMIZE TABLE ${table} {{ON_CLUSTER}} FINAL`, cluster) });
}
