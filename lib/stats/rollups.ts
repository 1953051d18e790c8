// Daily rollups (sql/clickhouse/004_rollups.sql; 007 remade the tables with small granules, 011 added
// versions and late marks): the clock computes each website's days in its time zone, and the query model
// reads whole rolled-up days from them, the rest of a range from the raw tables.
// A day is first rolled up soon after it ends (provisionally: SETTLE_MS after its end, once its visits have
// gone quiet), and again when it closes, RAW_TAIL_MS after its end (server events may carry a ts up to 24 h
// old, and queued jobs need a moment to land). In between, an event landing late for the day leaves a late
// mark (migration 011) newer than the day's version: readers then read that day raw, and the next run of the
// job rolls it up again. Visits still getting events after a day closes are counted as they stood then.
import { selectRows, type ClickHouseClient } from '../clickhouse/client';
import { renderClickHouseSql } from '../db/migrate';
import { ATTRIBUTE_VALUES, customEventsJoin, EMPTY_SKETCH, eventColumn, SCORE_COLUMNS, sessionFold, T, VALUE_SCORE_SQL, VISIT_KEYS, visitJoin, visitValue, type Window } from './query';
import { addDays, daysBetween, formatDate, parseDate, startOfDay, today, type LocalDate } from './time';

export const RAW_TAIL_MS = 26 * 3600_000;
/** A day is rolled up provisionally this long after it ends… */
export const SETTLE_MS = 40 * 60_000;
/**
 * …once none of its visits had an event for this long: a browser visit ends after 30 idle minutes, and an
 * event inserted later than 5 minutes after its ts leaves a late mark (6 minutes: 1 for the insert itself).
 * A visit's next event then either is marked or comes after a 30-minute pause (counted from when the day closes).
 */
export const IDLE_MS = 36 * 60_000;
/**
 * A mark this close before a version counts against it: an insert that began then may have ended after the
 * version's reads began (a ClickHouse server runs inserts beside reads; the embedded store one at a time).
 * A day is rolled up again only once its marks are this old, or it would be stale at once.
 */
export const MARK_MARGIN_MS = 10_000;
/** A browser visit ends after this long without an event: how far past its last event a visit can reach. */
const VISIT_PAUSE_MS = 30 * 60_000;
/** Superseded versions are deleted this long after the newer one (readers remember a coverage for a minute). */
export const SUPERSEDED_GRACE_MS = 5 * 60_000;
/** Days one job run computes per website at most (a backfill continues on the next run). */
export const MAX_DAYS_PER_RUN = 62;

/** A rolled-up day's newest version (the store's clock in ms when its run began), and its state. */
export interface DayVersion {
  version: number;
  final: boolean;
  /** Rows of an older version may still be stored: readers pin the day to its version. */
  superseded: boolean;
  /** Until when (ms) the day's visits could still get events, past its end (provisional days; 0: not past it). */
  reach: number;
}

/** A website's computed days (YYYY-MM-DD). */
export interface RollupCoverage {
  first: LocalDate;
  last: LocalDate;
  days: ReadonlyMap<string, DayVersion>;
  /** The newest version of any day: rows newer than it were written after this coverage was read. */
  newest: number;
  /** The oldest: a late mark older than it (by MARK_MARGIN_MS) concerns no day. */
  oldest: number;
}

export interface RollupPlan {
  /** Rolled-up local days, inclusive, as YYYY-MM-DD, without skipDays. */
  firstDay: string;
  lastDay: string;
  /** Days between them read raw: a late event landed after their version. */
  skipDays: string[];
  /** Days whose rows are read at their version only ([day, version]); rows above `newest` are never read. */
  pinned: [string, number][];
  newest: number;
  /** The newest version among the plan's days (a merged window must be at least as new). */
  newestInRange: number;
  /** What the raw tables still answer: the parts of the range outside the rolled-up days. */
  rawWindows: Window[];
}

const later = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) > 0 ? b : a);
const earlier = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) < 0 ? b : a);

/** The local date of an instant when it is that date's midnight; undefined for any other instant. */
function midnightDate(instant: number, timeZone: string): LocalDate | undefined {
  const d = today(timeZone, instant);
  return startOfDay(d, timeZone) === instant ? d : undefined;
}

/**
 * A remembered coverage stays safe to read with: its days keep their rows until SUPERSEDED_GRACE_MS after a
 * newer version, and rows newer than it are never read. Late marks are what can make a day stale, so they
 * are remembered only briefly (an event landing late shows within that, like any event within a flush).
 */
export const COVERAGE_MEMORY_MS = 60_000;
export const MARKS_MEMORY_MS = 5_000;
const knownCoverage = new Map<string, { at: number; coverage: RollupCoverage }>();
const knownMarks = new Map<string, { at: number; marks: LateMark[] }>();

function remember<V>(cache: Map<string, { at: number } & V>, key: string, entry: V): void {
  if (cache.size > 10_000) cache.clear();
  cache.set(key, { at: Date.now(), ...entry });
}

async function cachedCoverage(clickhouse: ClickHouseClient, websiteId: string, timeZone: string) {
  const key = `${websiteId}|${timeZone}`;
  const known = knownCoverage.get(key);
  if (known && Date.now() - known.at < COVERAGE_MEMORY_MS) return known.coverage;
  const coverage = await rollupCoverage(clickhouse, websiteId, timeZone);
  if (coverage) remember(knownCoverage, key, { coverage });
  return coverage;
}

/** The computed days of a website in a time zone, when they form one unbroken run. */
export async function rollupCoverage(clickhouse: ClickHouseClient, websiteId: string, timeZone: string): Promise<RollupCoverage | undefined> {
  const rows = await selectRows<{ d: string; v: string; f: number; r: string; n: string }>(
    clickhouse,
    `SELECT toString(date) AS d, toString(max(version)) AS v, argMax(final, version) AS f, toString(argMax(reach, version)) AS r, count() AS n
     FROM daily_rollups_v2 WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = '_'
     GROUP BY date ORDER BY date`,
    { w: websiteId, tz: timeZone },
  );
  const first = rows.length ? parseDate(rows[0].d) : undefined;
  const last = first && parseDate(rows[rows.length - 1].d);
  if (!first || !last || daysBetween(first, last) + 1 !== rows.length) return undefined;
  const days = new Map<string, DayVersion>();
  let newest = 0;
  let oldest = Infinity;
  for (const r of rows) {
    const version = Number(r.v);
    days.set(r.d, { version, final: Number(r.f) === 1, superseded: Number(r.n) > 1, reach: Number(r.r) });
    newest = Math.max(newest, version);
    oldest = Math.min(oldest, version);
  }
  return { first, last, days, newest, oldest };
}

/** A 15-minute bucket (UTC instant, ms) and the newest insert (store clock, ms) that marked it late. */
export interface LateMark {
  bucket: number;
  marked: number;
}

/**
 * A website's late marks made at or after `since` (store clock, ms). An import marks every bucket it
 * writes, and the days it fills are rolled up after it: their marks are older than every version.
 */
export async function lateMarks(clickhouse: ClickHouseClient, websiteId: string, since: number): Promise<LateMark[]> {
  const rows = await selectRows<{ b: string; m: string }>(
    clickhouse,
    `SELECT toString(toUnixTimestamp(bucket)) AS b, toString(toUnixTimestamp64Milli(max(marked))) AS m FROM late_marks
     WHERE website_id = {w:UUID} GROUP BY bucket HAVING max(marked) >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
    { w: websiteId, since: Math.max(0, Math.floor(since)) },
  );
  return rows.map((r) => ({ bucket: Number(r.b) * 1000, marked: Number(r.m) }));
}

/** The marks that can concern a coverage's days. */
const marksSince = (coverage: Pick<RollupCoverage, 'oldest'>) => coverage.oldest - MARK_MARGIN_MS;

async function cachedMarks(clickhouse: ClickHouseClient, websiteId: string, since: number) {
  const key = `${websiteId}|${since}`;
  const known = knownMarks.get(key);
  if (known && Date.now() - known.at < MARKS_MEMORY_MS) return known.marks;
  const marks = await lateMarks(clickhouse, websiteId, since);
  remember(knownMarks, key, { marks });
  return marks;
}

/** Waits until every late mark is MARK_MARGIN_MS old (an import just ended): rollups made then stay fresh. */
export async function settleLateMarks(clickhouse: ClickHouseClient): Promise<void> {
  const [row] = await selectRows<{ wait: string }>(
    clickhouse,
    `SELECT toString(greatest(0, toUnixTimestamp64Milli(max(marked)) + {margin:UInt32} - toUnixTimestamp64Milli(now64(3)))) AS wait FROM late_marks`,
    { margin: MARK_MARGIN_MS },
  );
  const wait = Number(row?.wait ?? 0);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** The rolled-up days (YYYY-MM-DD) a late mark is newer than (their rows miss an event), with their newest mark. */
export function staleDays(coverage: Pick<RollupCoverage, 'days'>, marks: readonly LateMark[], timeZone: string): Map<string, number> {
  const stale = new Map<string, number>();
  for (const mark of marks) {
    // A mark concerns its bucket's day, and earlier provisional days whose visits could reach its bucket.
    const bucketDay = today(timeZone, mark.bucket);
    for (let back = 0; back <= 2; back++) {
      const day = formatDate(addDays(bucketDay, -back));
      const known = coverage.days.get(day);
      if (!known || (back > 0 && mark.bucket >= known.reach)) continue;
      if (mark.marked >= known.version - MARK_MARGIN_MS) stale.set(day, Math.max(stale.get(day) ?? 0, mark.marked));
    }
  }
  return stale;
}

/** Which whole days of [start, end) the rollups answer; undefined when none (or the range is not whole days). */
export async function rollupPlan(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, start: number, end: number): Promise<RollupPlan | undefined> {
  const from = midnightDate(start, timeZone);
  const until = midnightDate(end, timeZone);
  if (!from || !until) return undefined;
  const coverage = await cachedCoverage(clickhouse, websiteId, timeZone);
  if (!coverage) return undefined;
  const stale = staleDays(coverage, await cachedMarks(clickhouse, websiteId, marksSince(coverage)), timeZone);
  let first = later(coverage.first, from);
  let last = earlier(coverage.last, addDays(until, -1));
  while (daysBetween(first, last) >= 0 && stale.has(formatDate(first))) first = addDays(first, 1);
  while (daysBetween(first, last) >= 0 && stale.has(formatDate(last))) last = addDays(last, -1);
  if (daysBetween(first, last) < 0) return undefined;
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  const skipDays: string[] = [];
  const pinned: [string, number][] = [];
  let newestInRange = 0;
  const rawWindows: Window[] = [{ start, end: startOfDay(first, timeZone) }];
  for (let d = first; daysBetween(d, last) >= 0; d = addDays(d, 1)) {
    const day = formatDate(d);
    const known = coverage.days.get(day)!;
    if (stale.has(day)) {
      skipDays.push(day);
      const window = { start: startOfDay(d, timeZone), end: startOfDay(addDays(d, 1), timeZone) };
      const previous = rawWindows[rawWindows.length - 1];
      if (previous.end === window.start) previous.end = window.end;
      else rawWindows.push(window);
      continue;
    }
    if (known.superseded) pinned.push([day, known.version]);
    newestInRange = Math.max(newestInRange, known.version);
  }
  rawWindows.push({ start: startOfDay(addDays(last, 1), timeZone), end });
  return {
    firstDay,
    lastDay,
    skipDays,
    pinned,
    newest: coverage.newest,
    newestInRange,
    rawWindows: rawWindows.filter((w) => w.end > w.start),
  };
}

/** The conditions on `date` and `version` that select a plan's rows of a rollup table (binds r*). */
export function rolledDaysSql(plan: Pick<RollupPlan, 'firstDay' | 'lastDay' | 'skipDays' | 'pinned' | 'newest'>, params: Record<string, unknown>): string {
  params.rlo = plan.firstDay;
  params.rhi = plan.lastDay;
  params.rnewest = plan.newest;
  let sql = 'date >= {rlo:Date} AND date <= {rhi:Date} AND version <= {rnewest:UInt64}';
  if (plan.skipDays.length) {
    params.rskip = plan.skipDays;
    sql += ' AND date NOT IN {rskip:Array(Date)}';
  }
  if (plan.pinned.length) {
    params.rpinned = plan.pinned.map(([day]) => day);
    params.rversions = plan.pinned.map(([, version]) => version);
    sql += ' AND (date NOT IN {rpinned:Array(Date)} OR version = {rversions:Array(UInt64)}[indexOf({rpinned:Array(Date)}, date)])';
  }
  return sql;
}

const COLUMNS = 'website_id, tz, date, dim, value, visitors, visitors_n, pageviews, events, visits, bounces, duration_s, score_sum, scored, expire_at, version';
/**
 * Event columns by which event metrics are rolled up ('' = totals; page counts pageviews only; the visit keys
 * the event's visit's values, through visitJoin; `attrs` the visit's country, browser, os and device as one
 * JSON array, also kept in the row's a_* columns for filters: ATTRIBUTE_KEYS in query.ts). A function:
 * query.ts, which this module imports, imports this module too.
 */
const eventDims = () => `[('', ''), ('page', pathname), ${VISIT_KEYS.map((k) => `('${k}', ${eventColumn(k)})`).join(', ')},
  ('attrs', toJSONString([${ATTRIBUTE_VALUES.join(', ')}]))]`;
/** A visit's values (visit_values' columns, the `s:…` dimensions), the same expressions the query model folds. */
const VISIT_VALUES = () => `${visitValue('source')} AS src, ${visitValue('utm_source')} AS us, ${visitValue('utm_medium')} AS um, ${visitValue('utm_campaign')} AS uc,
  ${visitValue('country')} AS country, ${visitValue('device')} AS device, ${visitValue('browser')} AS br, ${visitValue('os')} AS os_`;
const SESSION_VALUES = () => `argMinMerge(entry_page) AS entry, argMaxMerge(exit_page) AS exit_, ${VISIT_VALUES()}, any(visitor_id) AS visitor, max(expire_at) AS exp`;
const SESSION_DIMS = `[('s:', ''), ('s:entry_page', entry), ('s:exit_page', exit_), ('s:country', country), ('s:device', device),
  ('s:browser', br), ('s:os', os_), ('s:source', src), ('s:utm_source', us), ('s:utm_medium', um), ('s:utm_campaign', uc)]`;
/**
 * What rows of daily_rollups_v2 mean (migration 014: visit-level source and UTM values, entry/exit `events`;
 * 016: visit-level country, browser, device and OS);
 * the table refuses other values, so a job of an older version still running refuses to write rows of the old
 * meaning instead of leaving days that would never be computed again.
 */
const ROLLUP_FORMAT = 3;
/** Markers outlive any plan's retention: a day's marker only says the day was computed. */
const MARKER_TTL_DAYS = 1830;

/** The store's clock (ms): versions and late marks are compared on it, whatever the caller's clock. */
async function storeNow(clickhouse: ClickHouseClient): Promise<number> {
  const [row] = await selectRows<{ t: string }>(clickhouse, 'SELECT toString(toUnixTimestamp64Milli(now64(3))) AS t', {});
  return Number(row.t);
}

const VERSIONED_TABLES = ['daily_rollups_v2', 'visit_values'] as const;

/** Deletes a website's rows of days [first, last] (in its time zone) matching a condition on date and version. */
async function deleteRows(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: string, last: string, condition: string, params: Record<string, unknown>) {
  for (const table of VERSIONED_TABLES) {
    await clickhouse.command({
      query: `DELETE FROM ${table} WHERE website_id = {w:UUID} AND tz = {tz:String} AND date >= {first:Date} AND date <= {last:Date} AND ${condition}`,
      query_params: { w: websiteId, tz: timeZone, first, last, ...params },
    });
  }
}

/** Rows of days [first, last] of a version no marker names: what a run that failed half-way left. */
async function deleteOrphans(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: string, last: string) {
  const rows = await selectRows<{ k: string }>(
    clickhouse,
    `SELECT DISTINCT concat(toString(date), '|', toString(version)) AS k FROM daily_rollups_v2
     WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = '_' AND date >= {first:Date} AND date <= {last:Date}`,
    { w: websiteId, tz: timeZone, first, last },
  );
  const keep = rows.map((r) => r.k);
  await deleteRows(clickhouse, websiteId, timeZone, first, last, "concat(toString(date), '|', toString(version)) NOT IN {keep:Array(String)}", { keep });
}

/**
 * Computes (or recomputes) the rollups of local days [first, last] of one website in its time zone, as a new
 * version of them; `final` when the days have closed. Answers the version.
 */
export async function computeRollups(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: LocalDate,
  last: LocalDate,
  opts: { final?: boolean; reach?: number } = {},
): Promise<number> {
  const window = { start: startOfDay(first, timeZone), end: startOfDay(addDays(last, 1), timeZone) };
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  // Clear what a failed run left first, so that the rows of a version are exactly that run's.
  await deleteOrphans(clickhouse, websiteId, timeZone, firstDay, lastDay);
  // Taken before anything is read: an event inserted after it may be missing, and its late mark says so.
  const version = await storeNow(clickhouse);
  const base = { w: websiteId, tz: timeZone, a: window.start / 1000, b: window.end / 1000, version };
  // The rows of a run go in as one INSERT (one new part per month instead of one per kind of row: reads
  // pay per part, e.g. a page breakdown over 5 parts a month measured 117 ms, over one 22 ms). UNION ALL
  // needs every column named alike in every branch: `row` names them.
  const row = (values: string[]) => values.map((v, i) => `${v} AS c${i}`).join(', ');
  const NONE = ["''", "''", "''", "''"];
  // Every read below covers the same window, so they share its bound parameters.
  const params: Record<string, unknown> = { ...base };
  const events = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(ts, {tz:String})', 'd.1', 'd.2', "uniqStateIf(visitor_id, visitor_id != '')",
    "uniqIf(visitor_id, visitor_id != '')", "countIf(type = 'pageview')", 'count()', '0', '0', '0', 'toFloat64(0)', '0', 'max(expire_at)', '{version:UInt64}',
    ...ATTRIBUTE_VALUES.map((v) => `any(if(d.1 = 'attrs', ${v}, ''))`)])}
      FROM events${visitJoin(VISIT_KEYS, [window], params)} ARRAY JOIN ${eventDims()} AS d
      WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} AND type IN ('pageview', 'event') AND (d.1 != 'page' OR type = 'pageview')
      GROUP BY c2, c3, c4`;
  const visits = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(s, {tz:String})', 'd.1', 'd.2', "uniqStateIf(visitor, visitor != '')",
    "uniqIf(visitor, visitor != '')", 'sum(pv)', 'sum(pv + ce)', 'count()', 'countIf(pv = 1 AND it = 0)', "toUInt64(sum(dateDiff('second', s, e)))",
    `toFloat64(sum(${VALUE_SCORE_SQL}))`, 'count()', 'max(exp)', '{version:UInt64}', ...NONE])}
      FROM (${sessionFold(`${SCORE_COLUMNS}, ${SESSION_VALUES()}`, [], [window], params)}) AS f${customEventsJoin([window], params)} ARRAY JOIN ${SESSION_DIMS} AS d
      GROUP BY c2, c3, c4`;
  // A visit counts for every page it viewed, up to a day after its day (it may run on past midnight).
  const pageScores = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(f.s, {tz:String})', "'page_scores'", 'page', EMPTY_SKETCH, '0', '0', '0', '0', '0', '0',
    `toFloat64(sum(${VALUE_SCORE_SQL}))`, 'count()', 'max(f.exp)', '{version:UInt64}', ...NONE])}
      FROM (
        SELECT session_id, groupUniqArray(pathname) AS pages FROM events
        WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} + INTERVAL 1 DAY AND type = 'pageview' AND session_id != ''
        GROUP BY session_id
      ) AS v
      INNER JOIN (${sessionFold(`${SCORE_COLUMNS}, max(expire_at) AS exp`, [], [window], params)}) AS f ON f.session_id = v.session_id
      ARRAY JOIN v.pages AS page
      GROUP BY c2, c4`;
  // Visits by their combination of attributes, for filters on them alone (a visit without pageviews is not one).
  const attrVisits = `SELECT ${row(['{w:UUID}', '{tz:String}', 'toDate(s, {tz:String})', "'s:attrs'", 'toJSONString([country, br, os_, device])', EMPTY_SKETCH,
    '0', '0', '0', 'count()', 'countIf(pv = 1 AND it = 0)', "toUInt64(sum(dateDiff('second', s, e)))", `toFloat64(sum(${VALUE_SCORE_SQL}))`,
    'count()', 'max(exp)', '{version:UInt64}', 'any(country)', 'any(br)', 'any(os_)', 'any(device)'])}
      FROM (${sessionFold(`${SCORE_COLUMNS}, ${VISIT_VALUES()}, max(expire_at) AS exp`, [], [window], params)})
      GROUP BY c2, c4`;
  // Every session begun on the day with its visit values ('' without a pageview), for visit-key filters.
  await clickhouse.command({
    query: `INSERT INTO visit_values (website_id, tz, date, session_id, source_name, utm_source, utm_medium, utm_campaign, country_code, browser,
        device_type, os, expire_at, version)
      SELECT {w:UUID}, {tz:String}, toDate(s, {tz:String}), session_id, src, us, um, uc, country, br, device, os_, exp, {version:UInt64}
      FROM (
        SELECT session_id, min(start_ts) AS s, ${VISIT_VALUES()}, max(expire_at) AS exp
        FROM sessions
        WHERE website_id = {w:UUID} AND start_ts >= {a:${T}} - INTERVAL 1 DAY AND start_ts < {b:${T}} + INTERVAL 1 DAY
        GROUP BY session_id
        HAVING s >= {a:${T}} AND s < {b:${T}}
      )`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO daily_rollups_v2 (${COLUMNS}, a_country, a_browser, a_os, a_device, format)
      SELECT *, ${ROLLUP_FORMAT} FROM (
      ${[events, visits, pageScores, attrVisits].join('\n      UNION ALL\n      ')}
      )`,
    query_params: params,
  });
  // Markers last: a day's version counts only once all its rows are in.
  await clickhouse.command({
    query: `INSERT INTO daily_rollups_v2 (${COLUMNS}, final, reach, format)
      SELECT {w:UUID}, {tz:String}, addDays({first:Date}, number), '_', '', ${EMPTY_SKETCH}, 0, 0, 0, 0, 0, 0, 0, 0,
        toDateTime(addDays(addDays({first:Date}, number), ${MARKER_TTL_DAYS})), {version:UInt64}, {final:UInt8}, {reach:UInt64}, ${ROLLUP_FORMAT}
      FROM numbers({n:UInt32})`,
    query_params: { first: firstDay, n: daysBetween(first, last) + 1, ...base, final: opts.final ? 1 : 0, reach: opts.reach ?? 0 },
  });
  return version;
}

/**
 * Deletes the rows of versions superseded at least `graceMs` ago (readers that planned with them have
 * moved on). Answers the days cleared.
 */
export async function dropSuperseded(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  coverage: Pick<RollupCoverage, 'days'>,
  graceMs = SUPERSEDED_GRACE_MS,
): Promise<number> {
  const superseded = [...coverage.days.entries()].filter(([, v]) => v.superseded);
  if (superseded.length === 0) return 0;
  const now = await storeNow(clickhouse);
  const due = superseded.filter(([, v]) => v.version <= now - graceMs);
  if (due.length === 0) return 0;
  // In date order: coverage lists its days so.
  const days = due.map(([d]) => d);
  // Their markers too: the day's is then its newest alone.
  await deleteRows(clickhouse, site.id, site.timezone, days[0], days[days.length - 1], 'date IN {days:Array(Date)} AND version < {versions:Array(UInt64)}[indexOf({days:Array(Date)}, date)]', {
    days,
    versions: due.map(([, v]) => v.version),
  });
  return days.length;
}

/** The standard ranges (days ending today) whose visitor sketches are kept merged. */
export const WINDOW_DAYS = [7, 30, 90, 365] as const;
/**
 * Dimensions without a window: the marker, page scores and the visit dimensions by entry and exit page (read
 * per day). Pages have one: even when their daily sketches hardly overlap, reading one merged sketch per page
 * costs about half of reading and merging a sketch per page and day (measured 2.2×). Windows carry their
 * days' sums as well (migration 013), so a range question reads no daily rows of a windowed dimension.
 */
export const WINDOW_DIMS_EXCLUDED: readonly string[] = ['_', 'page_scores', 's:entry_page', 's:exit_page'];

const WINDOW_COLUMNS = 'website_id, tz, first, last, dim, value, visitors, pageviews, events, a_country, a_browser, a_os, a_device, made_at, run';

/** Windows are read for this long after they were made; their rows live 3 days (TTL, migrations 007 and 013). */
const WINDOW_READ_DAYS = 2;

const knownWindows = new Map<string, { at: number; madeAt: number; run: string }>();

/**
 * The run (migration 013) of the newest merged window over exactly local days [first, last] (YYYY-MM-DD),
 * when it was made from their versions up to `newest` (ms): a window made before a day was rolled up again
 * misses what changed. Undefined when there is none; readers read that run's rows only.
 */
export async function windowRun(clickhouse: ClickHouseClient, websiteId: string, timeZone: string, first: string, last: string, newest: number): Promise<string | undefined> {
  const key = `${websiteId}|${timeZone}|${first}|${last}`;
  // made_at has whole seconds; the window's run began after the versions it read.
  const fresh = (madeAt: number) => madeAt >= Math.floor(newest / 1000) * 1000;
  const seen = knownWindows.get(key);
  if (seen && fresh(seen.madeAt) && seen.madeAt > Date.now() - WINDOW_READ_DAYS * 86_400_000) return seen.run;
  // Windows made before runs (run 0: sketches only) are left for the job to make again, and so are windows
  // near their TTL: a window's rows and marker (in two tables) expire in separate merges.
  const [row] = await selectRows<{ made: string; r: string }>(
    clickhouse,
    `SELECT toString(toUnixTimestamp(max(made_at))) AS made, toString(argMax(run, made_at)) AS r FROM window_rollups_v2
     WHERE website_id = {w:UUID} AND tz = {tz:String} AND last = {last:Date} AND first = {first:Date} AND dim = '_' AND run != 0
       AND made_at > now() - INTERVAL ${WINDOW_READ_DAYS} DAY
     HAVING count() > 0`,
    { w: websiteId, tz: timeZone, first, last },
  );
  if (!row) return undefined;
  const madeAt = Number(row.made) * 1000;
  // A window lives for days; what it was made from only changes by a newer version, which `newest` shows.
  // Its rows stay while it is remembered: no merge folds one run's rows into another's, and the TTL is days.
  remember(knownWindows, key, { madeAt, run: row.r });
  return fresh(madeAt) ? row.r : undefined;
}

/** Merges the daily rows of local days [first, last] (all rolled up) into one per dimension value: sketches and sums. */
export async function computeWindow(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: LocalDate,
  last: LocalDate,
  coverage: Pick<RollupCoverage, 'days' | 'newest'>,
): Promise<void> {
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  const params: Record<string, unknown> = { w: websiteId, tz: timeZone, first: firstDay, last: lastDay, excluded: WINDOW_DIMS_EXCLUDED };
  const pinned = [...coverage.days.entries()].filter(([d, v]) => v.superseded && d >= firstDay && d <= lastDay).map(([d, v]): [string, number] => [d, v.version]);
  const days = rolledDaysSql({ firstDay, lastDay, skipDays: [], pinned, newest: coverage.newest }, params);
  // made_at first: the rows read are at least as old as it.
  const [{ t: madeAt, run }] = await selectRows<{ t: string; run: string }>(
    clickhouse,
    'SELECT toString(toUnixTimestamp(now())) AS t, toString(greatest(rand64(), 1)) AS run',
    {},
  );
  params.made = Number(madeAt);
  params.run = run;
  // Event dimensions (sketches and sums) and visit dimensions (`s:…`, sums only: their own table, migration
  // 013); an attribute row's a_* columns follow from its value (the same four as JSON). The marker last.
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (${WINDOW_COLUMNS})
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, dim, value, uniqMergeState(visitors), sum(pageviews), sum(events),
        any(a_country), any(a_browser), any(a_os), any(a_device), toDateTime({made:UInt32}), {run:UInt64}
      FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${days} AND dim NOT IN {excluded:Array(String)} AND NOT startsWith(dim, 's:')
      GROUP BY dim, value`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO window_visits (website_id, tz, first, last, dim, value, run, visits, bounces, duration_s, score_sum, a_country, a_browser, a_os, a_device, made_at)
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, dim, value, {run:UInt64}, sum(visits), sum(bounces), sum(duration_s), sum(score_sum),
        any(a_country), any(a_browser), any(a_os), any(a_device), toDateTime({made:UInt32})
      FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${days} AND dim NOT IN {excluded:Array(String)} AND startsWith(dim, 's:')
      GROUP BY dim, value`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (${WINDOW_COLUMNS})
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, '_', '', ${EMPTY_SKETCH}, 0, 0, '', '', '', '', toDateTime({made:UInt32}), {run:UInt64}`,
    query_params: params,
  });
}

/** Keeps the standard ranges' merged sketches over the rolled-up days; answers how many were made. */
async function ensureWindows(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, coverage: RollupCoverage, now: number): Promise<number> {
  const day = today(site.timezone, now);
  let made = 0;
  for (const n of WINDOW_DAYS) {
    const first = later(coverage.first, addDays(day, 1 - n));
    if (daysBetween(first, coverage.last) < 0) continue;
    const [firstDay, lastDay] = [formatDate(first), formatDate(coverage.last)];
    let newest = 0;
    for (const [d, v] of coverage.days) if (d >= firstDay && d <= lastDay) newest = Math.max(newest, v.version);
    if ((await windowRun(clickhouse, site.id, site.timezone, firstDay, lastDay, newest)) !== undefined) continue;
    await computeWindow(clickhouse, site.id, site.timezone, first, coverage.last, coverage);
    made++;
  }
  return made;
}

/** The last local day of a time zone that can no longer change at `now` (closed: rolled up for good). */
export function lastClosedDay(timeZone: string, now: number): LocalDate {
  let day = addDays(today(timeZone, now), -1);
  while (startOfDay(addDays(day, 1), timeZone) + RAW_TAIL_MS > now) day = addDays(day, -1);
  return day;
}

/** When the last visit that began on a local day last had an event (ms; 0 without visits). */
async function lastVisitEvent(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, day: LocalDate): Promise<number> {
  const params: Record<string, unknown> = { w: site.id };
  const window = { start: startOfDay(day, site.timezone), end: startOfDay(addDays(day, 1), site.timezone) };
  const [row] = await selectRows<{ t: string }>(clickhouse, `SELECT toString(toUnixTimestamp64Milli(max(e))) AS t FROM (${sessionFold('', [], [window], params)})`, params);
  return Number(row?.t ?? 0);
}

/**
 * Whether a day that has not closed may be rolled up provisionally at `now` (ended a while ago, and quiet):
 * then how far its visits can reach (ms), else undefined.
 */
async function settledReach(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, day: LocalDate, now: number): Promise<number | undefined> {
  const end = startOfDay(addDays(day, 1), site.timezone);
  if (end + SETTLE_MS > now) return undefined;
  const last = await lastVisitEvent(clickhouse, site, day);
  return last < now - IDLE_MS ? Math.max(end, last + VISIT_PAUSE_MS) : undefined;
}

/**
 * Brings one website's rollups up to date at `now`: days not rolled up yet (closed ones from the day after
 * the last computed one, or its first event's day, at most MAX_DAYS_PER_RUN a run; then the days ended
 * since, provisionally), and again the days a late event landed on and provisional days that have closed.
 * Then drops superseded versions and keeps the merged windows. Answers the days computed, and the days
 * waiting for their late marks to be MARK_MARGIN_MS old (`tidemark rollup` waits for them).
 */
export async function rollUpWebsite(clickhouse: ClickHouseClient, site: { id: string; timezone: string }, now: number): Promise<{ days: number; pending: number }> {
  const tz = site.timezone;
  const closed = lastClosedDay(tz, now);
  let coverage = await rollupCoverage(clickhouse, site.id, tz);
  let next = coverage ? addDays(coverage.last, 1) : undefined;
  if (!next) {
    const [row] = await selectRows<{ t: string }>(
      clickhouse,
      `SELECT toString(toUnixTimestamp64Milli(min(ts))) AS t FROM events WHERE website_id = {w:UUID} HAVING count() > 0`,
      { w: site.id },
    );
    if (!row) return { days: 0, pending: 0 };
    next = today(tz, Number(row.t));
  }
  let computed = 0;
  if (daysBetween(next, closed) >= 0) {
    const last = earlier(closed, addDays(next, MAX_DAYS_PER_RUN - 1));
    await computeRollups(clickhouse, site.id, tz, next, last, { final: true });
    computed += daysBetween(next, last) + 1;
    // A backfill goes on next run; windows wait for it.
    if (daysBetween(last, closed) > 0) return { days: computed, pending: 0 };
    next = addDays(last, 1);
  }
  for (let reach; (reach = await settledReach(clickhouse, site, next, now)) !== undefined; next = addDays(next, 1)) {
    await computeRollups(clickhouse, site.id, tz, next, next, { final: false, reach });
    computed++;
  }
  if (computed > 0 || !coverage) coverage = await rollupCoverage(clickhouse, site.id, tz);
  if (!coverage) return { days: computed, pending: 0 };
  const stale = staleDays(coverage, await lateMarks(clickhouse, site.id, marksSince(coverage)), tz);
  const marksSettled = (await storeNow(clickhouse)) - MARK_MARGIN_MS;
  let again = 0;
  let pending = 0;
  for (const [day, v] of coverage.days) {
    const d = parseDate(day)!;
    const closes = daysBetween(d, closed) >= 0;
    const mark = stale.get(day);
    if (mark !== undefined && mark >= marksSettled) {
      pending++;
      continue;
    }
    if (closes ? !v.final || mark !== undefined : mark !== undefined) {
      const reach = closes ? 0 : await settledReach(clickhouse, site, d, now);
      if (reach === undefined) continue;
      await computeRollups(clickhouse, site.id, tz, d, d, { final: closes, reach });
      again++;
    }
  }
  if (again > 0) coverage = (await rollupCoverage(clickhouse, site.id, tz)) ?? coverage;
  await dropSuperseded(clickhouse, site, coverage);
  await ensureWindows(clickhouse, site, coverage, now);
  return { days: computed + again, pending };
}

/** The rollup tables a read pays per part of (see sql/clickhouse/010_rollup_compaction.sql). */
const COMPACTED_TABLES = ['daily_rollups_v2', 'window_rollups_v2', 'window_visits', 'visit_values'] as const;

/**
 * Merges every rollup table into one part per partition now, instead of within hours: for a backfill
 * (`tidemark rollup`), which writes months of rollups at once. Rewrites the tables; not for every run.
 */
export async function compactRollups(clickhouse: ClickHouseClient, cluster?: string): Promise<void> {
  // On a cluster every shard merges its own parts.
  for (const table of COMPACTED_TABLES) await clickhouse.command({ query: renderClickHouseSql(`OPTIMIZE TABLE ${table} {{ON_CLUSTER}} FINAL`, cluster) });
}
