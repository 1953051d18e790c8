// The declarative stats query model (DESIGN §2 rule 5): site, time range, metrics, one optional dimension,
// filters and pagination → bound-parameter SQL over whitelisted columns → one runner. Event metrics come
// from `events`, session metrics from the `sessions` table the materialized view keeps; whole closed days
// of unfiltered questions come from the daily rollups (lib/stats/rollups.ts), merged in the same query
// with the raw rows of the rest of the range, so both paths give the same numbers.
import { selectRows, type ClickHouseClient } from '../clickhouse/client';
import type { Filter, Metric } from './params';
import { rolledDaysSql, rollupPlan, WINDOW_DIMS_EXCLUDED, windowRun, type RollupPlan } from './rollups';

/** A breakdown or time dimension; the column behind each is fixed here, never taken from a request. */
export type Dimension =
  | 'time:day'
  | 'time:hour'
  | 'time:month'
  | 'page'
  | 'country'
  | 'browser'
  | 'device'
  | 'os'
  | 'source'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'entry_page'
  | 'exit_page';

/** Dimensions that describe a whole visit: every metric is computed over sessions. */
const SESSION_DIMENSIONS: ReadonlySet<Dimension> = new Set(['entry_page', 'exit_page']);

/**
 * The Stats API's metrics plus two the External API reads: `visits` (sessions that began in the range or
 * bucket) and `value_score` (the mean value score of those visits, DESIGN §3; by page: of the visits that
 * viewed the page).
 */
export type ModelMetric = Metric | 'visits' | 'value_score';

export interface StatsQuery {
  websiteId: string;
  timeZone: string;
  /** [start, end) as UTC instants (ms). */
  start: number;
  end: number;
  metrics: readonly ModelMetric[];
  filters: readonly Filter[];
  dimension?: Dimension;
  /** With a time dimension: also the whole range's row, keyed '' (one read of the data for both). */
  total?: boolean;
  /**
   * With a breakdown dimension: only these values are computed and returned (e.g. a second metric for the
   * rows a first query ranked), and the raw and rollup reads skip the other values' rows.
   */
  keys?: readonly string[];
}

export type MetricValues = Partial<Record<ModelMetric, number>>;
export interface StatsRow {
  key: string;
  values: MetricValues;
}

const FILTER_COLUMNS: Record<Filter['key'], string> = {
  country: 'country_code',
  browser: 'browser',
  device: 'device_type',
  os: 'os',
  source: 'source_name',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  page: 'pathname',
};

/**
 * Keys a visit's first pageview decides (DESIGN §3 Source): every event of a session counts under its visit's
 * value (a pageview reached from inside the site has no source of its own, a server event no browser), in
 * filters, breakdowns and metrics alike, read from `sessions`; '' when the session has no pageview. An event
 * without a session keeps its own value. Every filter key but the page is one.
 */
export const VISIT_KEYS = ['country', 'browser', 'device', 'os', 'source', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
type VisitKey = (typeof VISIT_KEYS)[number];
const isVisitKey = (key: string): key is VisitKey => (VISIT_KEYS as readonly string[]).includes(key);

/** The `sessions` column holding a visit key's first-pageview value (migrations 002, 016). */
const SESSION_COLUMNS: Record<VisitKey, string> = {
  country: 'visit_country',
  browser: 'visit_browser',
  device: 'visit_device',
  os: 'visit_os',
  source: 'source_name',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
};
/** A visit key's value in a fold of `sessions` by session_id. */
export const visitValue = (key: VisitKey) => `argMinMerge(${SESSION_COLUMNS[key]})`;

/** The expression of a filter key over `events`: a visit key from visitJoin's columns, the page as stored. */
export function eventColumn(key: Filter['key']): string {
  return isVisitKey(key) ? `if(session_id = '', toString(${FILTER_COLUMNS[key]}), v_${key})` : FILTER_COLUMNS[key];
}

/** The visit keys among the dimensions: what a read of `events` must join (visitJoin). */
function visitKeysOf(dimensions: readonly (string | undefined)[]): VisitKey[] {
  return VISIT_KEYS.filter((k) => dimensions.includes(k));
}

/** Sessions begun in the windows widened by a day on both sides: those an event of the windows can belong to. */
function visitsAround(windows: readonly Window[], params: Record<string, unknown>, prefix = 'w'): string {
  return `FROM sessions WHERE website_id = {w:UUID} AND ${inWindows('start_ts', windows, params, 'around', prefix)} GROUP BY session_id`;
}

/**
 * Where a read of a range finds its sessions' visit values (for visit-key filters): the rolled-up days of
 * `plan` from `visit_values` (the rollup job keeps each day's), and the sessions around the rest of the range
 * (its raw windows and its two edges, each widened by a day) folded from `sessions`; without a plan, the
 * sessions around the read's windows.
 */
export interface VisitSource {
  range: Window;
  plan?: RollupPlan;
}

/** The sessions whose visit value matches filter i (is_not: the value is one of its values). */
function visitSetSql(f: Filter, i: number, visits: VisitSource, params: Record<string, unknown>): string {
  const column = FILTER_COLUMNS[f.key];
  const folded = (windows: readonly Window[], prefix: string, more = '') =>
    `SELECT session_id ${visitsAround(windows, params, prefix)} HAVING ${condition(f, i, visitValue(f.key as VisitKey), params, false)}${more}`;
  if (!visits.plan) return folded([visits.range], 'v');
  const { range, plan } = visits;
  const edges = [{ start: range.start, end: range.start }, ...plan.rawWindows, { start: range.end, end: range.end }];
  const rolled = `SELECT session_id FROM visit_values
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${rolledDaysSql(plan, params)} AND ${condition(f, i, column, params, false)}`;
  // The fold skips sessions begun on a rolled day (visit_values has them whole; a window's edge inside a
  // 25-hour day could cut one's first part off), so no session is in both with two values.
  const start = 'toDate(min(start_ts), {tz:String})';
  const notRolled = ` AND (${start} < {rlo:Date} OR ${start} > {rhi:Date}${plan.skipDays.length ? ` OR ${start} IN {rskip:Array(Date)}` : ''})`;
  return `${rolled}
      UNION ALL
      ${folded(edges, 'v', notRolled)}`;
}

/** A query's VisitSource: the rollups' plan of its range when it filters on a visit key. */
async function visitSource(clickhouse: ClickHouseClient, q: Pick<StatsQuery, 'websiteId' | 'timeZone' | 'start' | 'end' | 'filters'>): Promise<VisitSource> {
  const range = { start: q.start, end: q.end };
  if (!q.filters.some((f) => isVisitKey(f.key))) return { range };
  return { range, plan: await rollupPlan(clickhouse, q.websiteId, q.timeZone, q.start, q.end) };
}

/** Whether a row's session_id is one that visit-key filter i selects. */
function inVisitSet(f: Filter, i: number, visits: VisitSource, params: Record<string, unknown>): string {
  return `session_id ${f.operator === 'is_not' ? 'NOT IN' : 'IN'} (${visitSetSql(f, i, visits, params)})`;
}

/** ` AND …` conditions selecting the sessions (column session_id) that the visit-key filters select. */
function visitFilterSql(filters: readonly Filter[], visits: VisitSource, params: Record<string, unknown>): string {
  return filters.map((f, i) => (isVisitKey(f.key) ? ` AND ${inVisitSet(f, i, visits, params)}` : '')).join('');
}

/**
 * ` LEFT JOIN` onto `events` of the visit values of `keys` (columns v_<key>) of visitsAround, or '' for no
 * keys; an event whose session is not among them reads ''.
 */
export function visitJoin(keys: readonly VisitKey[], windows: readonly Window[], params: Record<string, unknown>): string {
  if (keys.length === 0) return '';
  const values = keys.map((k) => `${visitValue(k)} AS v_${k}`).join(', ');
  return ` LEFT JOIN (SELECT session_id AS vsid, ${values} ${visitsAround(windows, params)}) AS visit ON visit.vsid = events.session_id`;
}

/**
 * ` LEFT JOIN` onto a session fold aliased `f` of its visits' custom events (column ce, up to a day after the
 * windows): a visit's `events` are its pageviews and custom events (`sessions.events` counts every type).
 */
export function customEventsJoin(windows: readonly Window[], params: Record<string, unknown>): string {
  return ` LEFT JOIN (
      SELECT session_id AS csid, count() AS ce FROM events
      WHERE website_id = {w:UUID} AND type = 'event' AND session_id != '' AND ${inWindows('ts', windows, params, 'after')}
      GROUP BY session_id
    ) AS c ON c.csid = f.session_id`;
}

/** Per dimension: the key expression over `events`, and over a finished session (columns of the inner query). */
function eventKey(d: Dimension | undefined): string {
  switch (d) {
    case undefined:
      return "''";
    case 'time:day':
      return 'toString(toDate(ts, {tz:String}))';
    case 'time:hour':
      return "formatDateTime(toStartOfHour(ts, {tz:String}), '%Y-%m-%d %H:00:00', {tz:String})";
    case 'time:month':
      return 'toString(toStartOfMonth(ts, {tz:String}))';
    case 'entry_page':
    case 'exit_page':
      return "''"; // not used: these dimensions are computed from sessions
    default:
      return eventColumn(d);
  }
}

function sessionKey(d: Dimension | undefined): string {
  switch (d) {
    case undefined:
      return "''";
    case 'time:day':
      return 'toString(toDate(s, {tz:String}))';
    case 'time:hour':
      return "formatDateTime(toStartOfHour(s, {tz:String}), '%Y-%m-%d %H:00:00', {tz:String})";
    case 'time:month':
      return 'toString(toStartOfMonth(s, {tz:String}))';
    default:
      return `d_${d}`;
  }
}

/** The one session column a dimension needs (aggregate states are costly to read: only what is used). */
function sessionDimensionColumn(d: Dimension | undefined): string | undefined {
  switch (d) {
    case undefined:
    case 'time:day':
    case 'time:hour':
    case 'time:month':
      return undefined;
    case 'page':
    case 'entry_page':
      return `argMinMerge(entry_page) AS d_${d}`;
    case 'exit_page':
      return 'argMaxMerge(exit_page) AS d_exit_page';
    default:
      return `${visitValue(d)} AS d_${d}`;
  }
}

/** A filter's condition on an expression (bound as f<i>); `negate: false` reads is_not as is. */
function condition(f: Filter, i: number, expr: string, params: Record<string, unknown>, negate = true): string {
  params[`f${i}`] = f.values;
  if (f.operator === 'contains') return `multiSearchAnyCaseInsensitiveUTF8(${expr}, {f${i}:Array(String)})`;
  return `${expr} ${f.operator === 'is_not' && negate ? 'NOT IN' : 'IN'} {f${i}:Array(String)}`;
}

/** The filters as ` AND …` conditions on the expressions `column` gives for their keys. */
function filterSql(filters: readonly Filter[], params: Record<string, unknown>, column: (key: Filter['key']) => string): string {
  return filters.map((f, i) => ` AND ${condition(f, i, column(f.key), params)}`).join('');
}

/**
 * The filters as ` AND …` conditions on `events` rows. A visit key selects the events of the sessions whose
 * visit value matches (a set, visitSetSql: measured 3.7× cheaper than joining every event's visit value, 30
 * days raw), an event without a session by its own value; `visitKeys: false` leaves visit keys out.
 */
function eventFilterSql(filters: readonly Filter[], visits: VisitSource, params: Record<string, unknown>, visitKeys = true): string {
  return filters
    .map((f, i) => {
      if (!isVisitKey(f.key)) return ` AND ${condition(f, i, FILTER_COLUMNS[f.key], params)}`;
      if (!visitKeys) return '';
      return ` AND if(session_id = '', ${condition(f, i, `toString(${FILTER_COLUMNS[f.key]})`, params)}, ${inVisitSet(f, i, visits, params)})`;
    })
    .join('');
}

/**
 * Visit keys whose values closed days keep as one combination per visit (the rollups' `attrs` and `s:attrs`
 * rows), in that order: questions filtered on these alone read closed days from those.
 */
const ATTRIBUTE_KEYS: readonly Filter['key'][] = ['country', 'browser', 'os', 'device'];
/** The attributes as strings over `events` joined with their visits (visitJoin), in ATTRIBUTE_KEYS order. */
export const ATTRIBUTE_VALUES: readonly string[] = ATTRIBUTE_KEYS.map(eventColumn);
/** The attribute rollup rows (`attrs`, `s:attrs`) matching the filters, by their columns a_<key>. */
function attrsFilterSql(filters: readonly Filter[], params: Record<string, unknown>): string {
  return filterSql(filters, params, (key) => `a_${key}`);
}

/** [start, end) instants (ms) read from the raw tables; a query reads one or two of them. */
export interface Window {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

/** The type of event and session timestamps, for bound parameters. */
export const T = "DateTime64(3, 'UTC')";
/** An empty visitor sketch, for rows that bring no visitors. */
export const EMPTY_SKETCH = "arrayReduce('uniqState', CAST([], 'Array(String)'))";

/**
 * `column` within any of the windows (bound parameters w{i}a / w{i}b), optionally widened by a day: on both
 * sides for session parts (a session that began earlier must be seen whole to be placed right), after the
 * end only for a visit's events (they follow its start, and may run on past the window).
 */
function inWindows(column: string, windows: readonly Window[], params: Record<string, unknown>, widen: 'none' | 'around' | 'after' = 'none', prefix = 'w'): string {
  const clauses = windows.map((w, i) => {
    params[`${prefix}${i}a`] = w.start / 1000;
    params[`${prefix}${i}b`] = w.end / 1000;
    const before = widen === 'around' ? ' - INTERVAL 1 DAY' : '';
    const after = widen === 'none' ? '' : ' + INTERVAL 1 DAY';
    const [from, until] = [`{${prefix}${i}a:${T}}${before}`, `{${prefix}${i}b:${T}}${after}`];
    // `events` is sorted by toDate(ts), which the engine does not derive from a range of ts: spelled out, a
    // read skips the rest of the month's granules (a day of events under a filter, without the query
    // condition cache: 68 → 24–28 ms of CPU; with it the cache had already skipped them).
    if (column !== 'ts') return `(${column} >= ${from} AND ${column} < ${until})`;
    // A window of whole UTC days is a range of that key alone: no row's ts needs comparing (30 days read
    // raw: ~10 % less store CPU). Other windows (a website's own midnights) compare ts as well.
    if (w.start % DAY_MS === 0 && w.end % DAY_MS === 0) return `(toDate(ts) >= toDate(${from}) AND toDate(ts) < toDate(${until}))`;
    return `(ts >= ${from} AND ts < ${until} AND toDate(ts) >= toDate(${from}) AND toDate(ts) <= toDate(${until}))`;
  });
  return `(${clauses.join(' OR ')})`;
}

/**
 * Under filters, session metrics count the sessions whose visit values match the visit-key filters and that
 * hold a pageview matching the page filters.
 */
function sessionFilterSql(filters: readonly Filter[], windows: readonly Window[], visits: VisitSource, params: Record<string, unknown>): string {
  const byPageview = filters.some((f) => !isVisitKey(f.key))
    ? ` AND session_id IN (
    SELECT session_id FROM events
    WHERE website_id = {w:UUID} AND type = 'pageview' AND ${inWindows('ts', windows, params, 'after')}${eventFilterSql(filters, visits, params, false)})`
    : '';
  return `${byPageview}${visitFilterSql(filters, visits, params)}`;
}

const EVENT_METRICS: readonly ModelMetric[] = ['visitors', 'pageviews', 'events'];
const SESSION_METRICS: readonly ModelMetric[] = ['visit_duration', 'bounce_rate', 'visits', 'value_score'];

/**
 * A visit's value score (DESIGN §3) over the folded session columns: 10 per pageview up to 4, 5 per whole
 * engaged minute up to 25, 15 for an interaction, 20 for a goal, 10 when identified, 20 for a purchase.
 */
export const VALUE_SCORE_SQL = `least(100, 10 * least(pv, 4) + least(25, intDiv(eng, 60000) * 5) + 15 * (it > 0) + 20 * (goals > 0) + 10 * idf + 20 * (buys > 0))`;
/** The folded columns VALUE_SCORE_SQL reads, beyond pv and it. */
export const SCORE_COLUMNS = 'sum(engagement_ms) AS eng, sum(goals) AS goals, max(identified) AS idf, sum(purchases) AS buys';

/**
 * The fold of a website's session parts into whole sessions that began in one of the windows and hold a
 * pageview. Parts are read from each window widened by a day on both sides, so a session that began before
 * it (or continues after it) is folded whole; only a session longer than a day could be misplaced. (Leaving
 * out the sessions begun the day before by a NOT IN set of their ids instead of folding that day was
 * measured slower: 32 vs 19 ms for a 26-hour tail, 53 vs 39 with entry pages and sources.)
 */
export function sessionFold(
  columns: string,
  filters: readonly Filter[],
  windows: readonly Window[],
  params: Record<string, unknown>,
  visits: VisitSource = { range: windows[0] },
): string {
  return `SELECT session_id, min(start_ts) AS s, max(end_ts) AS e, sum(pageviews) AS pv, sum(interactions) AS it${columns ? `, ${columns}` : ''}
        FROM sessions
        WHERE website_id = {w:UUID} AND ${inWindows('start_ts', windows, params, 'around')}${sessionFilterSql(filters, windows, visits, params)}
        GROUP BY session_id
        HAVING ${inWindows('s', windows, params)} AND pv > 0`;
}

/** The rollup dimension that holds a query dimension's event metrics, and its session metrics. */
function rollupDims(d: Dimension | undefined): { events: string; sessions: string } | undefined {
  switch (d) {
    case undefined:
    case 'time:day':
    case 'time:month':
      return { events: '', sessions: 's:' };
    case 'time:hour':
      return undefined;
    case 'page':
      return { events: 'page', sessions: 's:entry_page' };
    case 'entry_page':
    case 'exit_page':
      return { events: `s:${d}`, sessions: `s:${d}` };
    default:
      return { events: d, sessions: `s:${d}` };
  }
}

function rollupKey(d: Dimension | undefined): string {
  switch (d) {
    case undefined:
      return "''";
    case 'time:day':
      return 'toString(date)';
    case 'time:month':
      return 'toString(toStartOfMonth(date))';
    default:
      return 'value';
  }
}

/** Binds a rollup dimension's name and answers its placeholder. */
function bindDim(params: Record<string, unknown>, dim: string): string {
  const name = `dim_${dim.replace(/\W/g, '_')}`;
  params[name] = dim;
  return `{${name}:String}`;
}

/** `column` among the query's keys, when it has them (bound as `keys`). */
function onlyKeys(column: string, params: Record<string, unknown>): string {
  return params.keys === undefined ? '' : ` AND ${column} IN {keys:Array(String)}`;
}

/** Rows of one rollup dimension over the plan's days (`where`: more ` AND …` conditions). */
function rollupRows(columns: string, dim: string, plan: RollupPlan, d: Dimension | undefined, params: Record<string, unknown>, where = ''): string {
  return `SELECT ${rollupKey(d)} AS k, ${columns} FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = ${bindDim(params, dim)} AND ${rolledDaysSql(plan, params)}${onlyKeys('value', params)}${where}`;
}

/** The rows of one run (windowRun) of the merged window over the plan's days (binds wfirst, wlast, wrun). */
function windowSql(plan: RollupPlan, run: string, params: Record<string, unknown>): string {
  params.wfirst = plan.firstDay;
  params.wlast = plan.lastDay;
  params.wrun = run;
  return 'website_id = {w:UUID} AND tz = {tz:String} AND last = {wlast:Date} AND first = {wfirst:Date} AND run = {wrun:UInt64}';
}

/**
 * Whether a window's sums may stand for the plan's days: not when a day between is read raw (its rolled
 * sums would count twice; visitor sketches only union, so the window's sketches serve anyway).
 */
const windowSumsServe = (plan: RollupPlan) => plan.skipDays.length === 0;

/**
 * Rows of one dimension of a run of the merged window over the plan's days: visit dimensions (`s:…`) from
 * window_visits, the others from window_rollups_v2.
 */
function windowRows(columns: string, dim: string, plan: RollupPlan, run: string, key: string, params: Record<string, unknown>, where = ''): string {
  return `SELECT ${key} AS k, ${columns} FROM ${dim.startsWith('s:') ? 'window_visits' : 'window_rollups_v2'}
      WHERE ${windowSql(plan, run, params)} AND dim = ${bindDim(params, dim)}${onlyKeys('value', params)}${where}`;
}

/** Session metrics of the plan's days for the visits whose attributes match the filters (`s:attrs`, or a run of its window). */
function filteredVisitRows(plan: RollupPlan, d: Dimension | undefined, filters: readonly Filter[], params: Record<string, unknown>, run: string | undefined): string {
  const columns = 'visits, bounces, duration_s, score_sum, 0 AS pvs, 0 AS evs';
  return run !== undefined
    ? windowRows(columns, 's:attrs', plan, run, rollupKey(d), params, attrsFilterSql(filters, params))
    : rollupRows(columns, 's:attrs', plan, d, params, attrsFilterSql(filters, params));
}

/** One SELECT of a query's metrics: rows of a String `k` and the named numeric columns. */
interface Part {
  sql: string;
  params: Record<string, unknown>;
  columns: readonly string[];
  take: (k: string, values: Record<string, number>) => void;
}

/**
 * Runs the parts as one statement (UNION ALL, tagged by part): chDB runs one statement at a time, so
 * separate statements would wait for each other, while one lets the engine work on the parts in parallel.
 * Every metric value is a count, sum or rounded mean well inside Float64's exact integers.
 */
async function runParts(clickhouse: ClickHouseClient, parts: readonly Part[]): Promise<void> {
  if (parts.length === 0) return;
  const params: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [name, value] of Object.entries(part.params)) {
      // The parts bind the same names to the same values (one website, window set and filter list).
      if (name in params && JSON.stringify(params[name]) !== JSON.stringify(value)) throw new Error(`parameter ${name} bound twice`);
      params[name] = value;
    }
  }
  const sql = parts
    .map((part, i) => `SELECT ${i} AS part, k, [${part.columns.map((c) => `toFloat64(${c})`).join(', ')}] AS x FROM (\n${part.sql}\n)`)
    .join('\nUNION ALL\n');
  for (const row of await selectRows<{ part: number; k: string; x: number[] }>(clickhouse, sql, params)) {
    const part = parts[row.part];
    part.take(row.k, Object.fromEntries(part.columns.map((c, j) => [c, row.x[j]])));
  }
}

/** Runs a query; one row per key (a single '' key without a dimension). */
export async function runStats(clickhouse: ClickHouseClient, q: StatsQuery): Promise<StatsRow[]> {
  if (q.keys && (q.dimension === undefined || q.dimension.startsWith('time:'))) throw new RangeError('keys need a breakdown dimension');
  const base = { w: q.websiteId, tz: q.timeZone, ...(q.keys ? { keys: q.keys } : {}) };
  // Filtered on attributes alone, totals and day or month buckets read closed days from the `attrs` rollups;
  // any other filter reads the whole range raw.
  const filtered = q.filters.length > 0;
  const attributesOnly = filtered && q.filters.every((f) => ATTRIBUTE_KEYS.includes(f.key));
  const dims = !filtered
    ? rollupDims(q.dimension)
    : attributesOnly && (q.dimension === undefined || q.dimension === 'time:day' || q.dimension === 'time:month')
      ? { events: 'attrs', sessions: 's:attrs' }
      : undefined;
  const plan = dims ? await rollupPlan(clickhouse, q.websiteId, q.timeZone, q.start, q.end) : undefined;
  const windows: Window[] = plan ? plan.rawWindows : [{ start: q.start, end: q.end }];
  const visits = await visitSource(clickhouse, q);
  const merged = new Map<string, MetricValues>();
  const put = (key: string, values: MetricValues) => merged.set(key, { ...merged.get(key), ...values });
  // Larger sketches first: a group's state is built from the rows that arrive first, and merging a merged
  // window's sketch into a state started by the raw tail costs ~40 ns a hash more (measured: page breakdown
  // 291 → 190 ms with the window first).
  const union = (selects: (string | undefined)[]) => selects.filter((p): p is string => p !== undefined).join('\n      UNION ALL\n      ');
  const parts: Part[] = [];
  if (q.total && !q.dimension?.startsWith('time:')) throw new RangeError('total needs a time dimension');
  const groupBy = q.total ? 'GROUP BY GROUPING SETS ((k), ())' : 'GROUP BY k';

  const bySessions = q.dimension !== undefined && SESSION_DIMENSIONS.has(q.dimension);
  // Visitor sketches are the costly part of a rollup read: merged only when visitors are asked for.
  const wantVisitors = q.metrics.includes('visitors');
  const byDay = q.dimension === 'time:day';
  const timeDimension = q.dimension?.startsWith('time:') === true;
  // Merged windows (rollups.ts) answer a range total or breakdown over the plan's days with one row per
  // value: sketches and sums (see windowSumsServe); by day only the total's visitors.
  const run =
    plan && dims && (!timeDimension || (byDay && q.total === true && wantVisitors && !filtered))
      ? await windowRun(clickhouse, q.websiteId, q.timeZone, plan.firstDay, plan.lastDay, plan.newestInRange)
      : undefined;
  const windowSums = (dim: string) => run !== undefined && !timeDimension && windowSumsServe(plan!) && !WINDOW_DIMS_EXCLUDED.includes(dim);
  if (!bySessions && q.metrics.some((m) => EVENT_METRICS.includes(m))) {
    const params: Record<string, unknown> = { ...base };
    // Filter on the page dimension means pageviews only: every other event has no page.
    const onlyPageviews = q.dimension === 'page' ? " AND type = 'pageview'" : '';
    // Where visitors come from on rolled-up days: a day's own count (by day), the range's merged sketches
    // (a range total or a breakdown, when the window is kept), or else the daily sketches merged here.
    const sums = dims !== undefined && windowSums(dims.events);
    const windowed = run !== undefined && (wantVisitors || sums);
    // A day's own count serves its day row, unless the daily sketches must be read anyway for the total.
    // (Not under filters: a day's visitors may span several `attrs` rows, so only sketches add up.)
    const dayCounts = wantVisitors && byDay && !filtered && (windowed || !q.total);
    const dailySketch = wantVisitors && !windowed && !dayCounts;
    const rawRows = windows.length
      ? `FROM events${visitJoin(visitKeysOf([q.dimension]), windows, params)}
      WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND type IN ('pageview', 'event')${onlyPageviews}${eventFilterSql(q.filters, visits, params)}${onlyKeys(eventKey(q.dimension), params)}`
      : undefined;
    const raw =
      rawRows &&
      `SELECT ${eventKey(q.dimension)} AS k, ${wantVisitors ? "uniqStateIf(visitor_id, visitor_id != '')" : EMPTY_SKETCH} AS v, 0 AS vn,
          countIf(type = 'pageview') AS pv, count() AS ev
      ${rawRows}
      GROUP BY k`;
    const rolled =
      plan && dims && !sums
        ? rollupRows(
            `${dailySketch ? 'visitors' : EMPTY_SKETCH} AS v, ${dayCounts ? 'visitors_n' : '0'} AS vn, pageviews AS pv, events AS ev`,
            dims.events,
            plan,
            q.dimension,
            params,
            filtered ? attrsFilterSql(q.filters, params) : '',
          )
        : undefined;
    // By day, the window only feeds the range total (GROUPING SETS' empty set); its own key row is dropped.
    const merged =
      windowed && plan && dims
        ? windowRows(
            `${wantVisitors ? 'visitors' : EMPTY_SKETCH} AS v, 0 AS vn, ${sums ? 'pageviews AS pv, events AS ev' : '0 AS pv, 0 AS ev'}`,
            dims.events,
            plan,
            run!,
            byDay ? "'~window'" : rollupKey(q.dimension),
            params,
            filtered ? attrsFilterSql(q.filters, params) : '',
          )
        : undefined;
    // Read all raw, the visitors are counted where the rows are read, not as sketches merged a level up
    // (a 30-day page breakdown under filters: ~7 % less store CPU). Not with a total: its grouping set
    // would compute the key expression from default values, where the nested form gives it ''.
    const allRaw = rawRows !== undefined && merged === undefined && rolled === undefined && !q.total;
    parts.push({
      sql: allRaw
        ? `SELECT ${eventKey(q.dimension)} AS k, ${wantVisitors ? "uniqIf(visitor_id, visitor_id != '')" : '0'} AS vm, 0 AS vs,
          countIf(type = 'pageview') AS pageviews, count() AS events
      ${rawRows}
    ${groupBy}`
        : `SELECT k, uniqMerge(v) AS vm, sum(vn) AS vs, sum(pv) AS pageviews, sum(ev) AS events FROM (
      ${union([merged, rolled, raw])}
    ) ${groupBy}`,
      params,
      columns: ['vm', 'vs', 'pageviews', 'events'],
      take: (k, r) => {
        if (k === '~window') return;
        // A total row counts its visitors from sketches only; day rows add the days' own counts.
        const visitors = q.total && k === '' ? r.vm : r.vm + r.vs;
        put(k, { visitors, pageviews: r.pageviews, events: r.events });
      },
    });
  }

  // By page, a visit's score counts for every page it viewed (not only its entry page).
  const scoreByViews = q.dimension === 'page' && q.metrics.includes('value_score');
  if (bySessions || q.metrics.some((m) => SESSION_METRICS.includes(m) && !(scoreByViews && m === 'value_score'))) {
    const params: Record<string, unknown> = { ...base };
    const score = q.metrics.includes('value_score') && !scoreByViews;
    const dimensionColumn = sessionDimensionColumn(q.dimension);
    const countEvents = bySessions && q.metrics.includes('events');
    const columns = [
      bySessions ? 'any(visitor_id) AS visitor' : '',
      score ? SCORE_COLUMNS : '',
      dimensionColumn ?? '',
    ].filter(Boolean);
    const raw = windows.length
      ? `SELECT ${sessionKey(q.dimension)} AS k, count() AS visits, countIf(pv = 1 AND it = 0) AS bounces, toUInt64(sum(dateDiff('second', s, e))) AS duration_s,
          toFloat64(${score ? `sum(${VALUE_SCORE_SQL})` : '0'}) AS score_sum,
          ${bySessions && wantVisitors ? "uniqStateIf(visitor, visitor != '') AS v," : ''} ${bySessions ? `sum(pv) AS pvs, ${countEvents ? 'sum(pv + ce)' : '0'} AS evs` : '0 AS pvs, 0 AS evs'}
        FROM (${sessionFold(columns.join(', '), q.filters, windows, params, visits)}) AS f${countEvents ? customEventsJoin(windows, params) : ''}
        GROUP BY k`
      : undefined;
    const sums = dims !== undefined && windowSums(dims.sessions);
    const rolled =
      plan && dims
        ? filtered
          ? filteredVisitRows(plan, q.dimension, q.filters, params, sums ? run : undefined)
          : sums
            ? windowRows('visits, bounces, duration_s, score_sum, 0 AS pvs, 0 AS evs', dims.sessions, plan, run!, rollupKey(q.dimension), params)
            : rollupRows(`visits, bounces, duration_s, score_sum, ${bySessions && wantVisitors ? 'visitors AS v, ' : ''}pageviews AS pvs, events AS evs`, dims.sessions, plan, q.dimension, params)
        : undefined;
    parts.push({
      sql: `SELECT k, sum(visits) AS n, round(sum(duration_s) / n) AS visit_duration,
        round(100 * sum(bounces) / n) AS bounce_rate, round(sum(score_sum) / n, 1) AS value_score,
        ${bySessions && wantVisitors ? 'uniqMerge(v)' : '0'} AS visitors, sum(pvs) AS pageviews, sum(evs) AS events
      FROM (
      ${union([rolled, raw])}
      ) ${groupBy} HAVING n > 0${onlyKeys('k', params)}`,
      params,
      columns: ['n', 'visit_duration', 'bounce_rate', 'value_score', 'visitors', 'pageviews', 'events'],
      take: (k, r) =>
        put(k, {
          ...(bySessions ? { visitors: r.visitors, pageviews: r.pageviews, events: r.events } : {}),
          ...(score ? { value_score: r.value_score } : {}),
          visits: r.n,
          visit_duration: r.visit_duration,
          bounce_rate: r.bounce_rate,
        }),
    });
  }

  if (scoreByViews) {
    const params: Record<string, unknown> = { ...base };
    // The pages a visit viewed, up to a day after its window (a visit may run on past the range's end).
    const raw = windows.length
      ? `SELECT page AS k, toFloat64(sum(${VALUE_SCORE_SQL})) AS score_sum, count() AS scored
      FROM (
        SELECT session_id, groupUniqArray(pathname) AS pages FROM events
        WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params, 'after')}
          AND type = 'pageview' AND session_id != ''${eventFilterSql(q.filters, visits, params)}${onlyKeys('pathname', params)}
        GROUP BY session_id
      ) AS v
      INNER JOIN (${sessionFold(SCORE_COLUMNS, [], windows, params)}) AS f ON f.session_id = v.session_id
      ARRAY JOIN v.pages AS page
      GROUP BY k`
      : undefined;
    const rolled = plan ? rollupRows('score_sum, scored', 'page_scores', plan, q.dimension, params) : undefined;
    parts.push({
      sql: `SELECT k, round(sum(score_sum) / sum(scored), 1) AS value_score FROM (
      ${union([rolled, raw])}
    ) GROUP BY k HAVING sum(scored) > 0`,
      params,
      columns: ['value_score'],
      take: (k, r) => put(k, { value_score: r.value_score }),
    });
  }

  await runParts(clickhouse, parts);
  return [...merged.entries()].map(([key, values]) => ({ key, values: pick(values, q.metrics) }));
}

/** Breakdown order: by a metric, largest first, ties by the row's value ascending. */
export function byMetricDesc(metric: ModelMetric) {
  return (a: StatsRow, b: StatsRow) => (b.values[metric] ?? 0) - (a.values[metric] ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function pick(values: MetricValues, metrics: readonly ModelMetric[]): MetricValues {
  const out: MetricValues = {};
  for (const m of metrics) out[m] = values[m] ?? 0;
  return out;
}

/** Dimensions whose event metrics several breakdowns can share one pass for. */
export type EventDimension = 'country' | 'device' | 'browser' | 'os' | 'source' | 'utm_source' | 'utm_medium' | 'utm_campaign';

/**
 * Event metrics (visitors, pageviews, events) by several dimensions at once, plus the total under key ''
 * of dimension 'total': one read of the rollups and one scan of the raw rows instead of one per dimension.
 */
export async function runEventBreakdowns(
  clickhouse: ClickHouseClient,
  q: Omit<StatsQuery, 'dimension' | 'total' | 'metrics'>,
  dimensions: readonly EventDimension[],
): Promise<Record<EventDimension | 'total', StatsRow[]>> {
  const params: Record<string, unknown> = { w: q.websiteId, tz: q.timeZone, dims: ['', ...dimensions] };
  const plan = q.filters.length === 0 ? await rollupPlan(clickhouse, q.websiteId, q.timeZone, q.start, q.end) : undefined;
  const windows: Window[] = plan ? plan.rawWindows : [{ start: q.start, end: q.end }];
  const visits = await visitSource(clickhouse, q);
  const selects: string[] = [];
  if (windows.length) {
    // One grouping set per dimension plus the total: the rows are read and aggregated once per set, about
    // half the work of repeating every row once per dimension (ARRAY JOIN). GROUPING() sets the bit of
    // each column the row's set does not group by, so set i is the mask with only bit i clear.
    const columns = dimensions.map(eventColumn);
    const all = (1 << columns.length) - 1;
    const maskOf = (i: number) => all & ~(1 << (columns.length - 1 - i));
    const set = `grouping(${columns.join(', ')})`;
    const which = (value: (i: number) => string) => `multiIf(${columns.map((_, i) => `${set} = ${maskOf(i)}, ${value(i)}`).join(', ')}, '')`;
    selects.push(`SELECT ${which((i) => `'${dimensions[i]}'`)} AS d, ${which((i) => `toString(${columns[i]})`)} AS k,
        uniqStateIf(visitor_id, visitor_id != '') AS v, countIf(type = 'pageview') AS pv, count() AS ev
      FROM events${visitJoin(visitKeysOf(dimensions), windows, params)}
      WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND type IN ('pageview', 'event')${eventFilterSql(q.filters, visits, params)}
      GROUP BY GROUPING SETS (${columns.map((c) => `(${c})`).join(', ')}, ())`);
  }
  if (plan) {
    const run = await windowRun(clickhouse, q.websiteId, q.timeZone, plan.firstDay, plan.lastDay, plan.newestInRange);
    const sums = run !== undefined && windowSumsServe(plan);
    if (!sums) {
      selects.push(`SELECT dim AS d, value AS k, ${run !== undefined ? EMPTY_SKETCH : 'visitors'} AS v, pageviews AS pv, events AS ev FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim IN {dims:Array(String)} AND ${rolledDaysSql(plan, params)}`);
    }
    if (run !== undefined) {
      selects.push(`SELECT dim AS d, value AS k, visitors AS v, ${sums ? 'pageviews' : '0'} AS pv, ${sums ? 'events' : '0'} AS ev FROM window_rollups_v2
      WHERE ${windowSql(plan, run, params)} AND dim IN {dims:Array(String)}`);
    }
  }
  // Window, rollups, raw: larger sketches first, as in runStats.
  const sql = `SELECT d, k, uniqMerge(v) AS visitors, sum(pv) AS pageviews, sum(ev) AS events FROM (
      ${[...selects].reverse().join('\n      UNION ALL\n      ')}
    ) GROUP BY d, k`;
  const out = Object.fromEntries([...dimensions, 'total'].map((d) => [d, [] as StatsRow[]])) as Record<EventDimension | 'total', StatsRow[]>;
  for (const r of await selectRows<{ d: string; k: string; visitors: string; pageviews: string; events: string }>(clickhouse, sql, params)) {
    out[(r.d === '' ? 'total' : r.d) as EventDimension | 'total'].push({
      key: r.k,
      values: { visitors: Number(r.visitors), pageviews: Number(r.pageviews), events: Number(r.events) },
    });
  }
  return out;
}

/** One visit as the External API lists it; attribute strings are '' when unknown. */
export interface VisitRow {
  session_id: string;
  visitor_id: string;
  started_ms: number;
  country_code: string;
  city: string;
  device_type: string;
  browser: string;
  os: string;
  landing_page: string;
  referrer: string;
  had_interaction: boolean;
  value_score: number;
}

/** Visits that began in [start, end), newest first (ties by session id), one page of them. */
export async function listVisits(
  clickhouse: ClickHouseClient,
  q: Pick<StatsQuery, 'websiteId' | 'timeZone' | 'start' | 'end' | 'filters'>,
  page: { limit: number; offset: number },
): Promise<VisitRow[]> {
  const params: Record<string, unknown> = { w: q.websiteId, tz: q.timeZone, limit: page.limit, offset: page.offset };
  const columns = [
    SCORE_COLUMNS,
    'any(visitor_id) AS visitor',
    `${visitValue('country')} AS country`,
    'any(city) AS town',
    `${visitValue('device')} AS device`,
    `${visitValue('browser')} AS br`,
    `${visitValue('os')} AS system`,
    'argMinMerge(entry_page) AS landing',
    'argMinMerge(referrer) AS ref',
  ].join(', ');
  // Two steps over the same window of session parts: the page's sessions from a fold of their start times
  // only, then every column for just those (the costly merges run for a page, not for every visit).
  const sql = `SELECT session_id, visitor, toUnixTimestamp64Milli(s) AS started_ms, country, town, device, br, system, landing, ref,
      it > 0 AS interacted, ${VALUE_SCORE_SQL} AS score
    FROM (
      SELECT session_id, min(start_ts) AS s, sum(pageviews) AS pv, sum(interactions) AS it, ${columns}
      FROM sessions
      WHERE website_id = {w:UUID} AND ${inWindows('start_ts', [{ start: q.start, end: q.end }], params, 'around')} AND session_id IN (
        SELECT session_id FROM (${sessionFold('', q.filters, [{ start: q.start, end: q.end }], params, await visitSource(clickhouse, q))})
        ORDER BY s DESC, session_id ASC
        LIMIT {limit:UInt32} OFFSET {offset:UInt64})
      GROUP BY session_id
    )
    ORDER BY s DESC, session_id ASC`;
  type Row = { session_id: string; visitor: string; started_ms: string; country: string; town: string; device: string; br: string; system: string; landing: string; ref: string; interacted: number; score: number };
  return (await selectRows<Row>(clickhouse, sql, params)).map((r) => ({
    session_id: r.session_id,
    visitor_id: r.visitor,
    started_ms: Number(r.started_ms),
    country_code: r.country,
    city: r.town,
    device_type: r.device,
    browser: r.br,
    os: r.system,
    landing_page: r.landing,
    referrer: r.ref,
    had_interaction: Number(r.interacted) === 1,
    value_score: Number(r.score),
  }));
}
