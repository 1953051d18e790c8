// The declarative stats query model (DESIGN §2 rule 5): site, time range, metrics, one optional dimension,
// filters and pagination → bound-parameter SQL over whitelisted columns → one runner. Event metrics come
// from `events`, session metrics from the `sessions` table the materialized view keeps.
import type { ClickHouseClient } from '../clickhouse/client';
import type { Filter, Metric } from './params';

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
      return FILTER_COLUMNS[d];
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
    case 'source':
    case 'utm_source':
    case 'utm_medium':
    case 'utm_campaign':
      return `argMinMerge(${d === 'source' ? 'source_name' : d}) AS d_${d}`;
    case 'country':
      return 'any(country_code) AS d_country';
    case 'device':
      return 'any(device_type) AS d_device';
    default:
      return `any(${d}) AS d_${d}`;
  }
}

function filterSql(filters: readonly Filter[], params: Record<string, unknown>): string {
  return filters
    .map((f, i) => {
      params[`f${i}`] = f.values;
      const column = FILTER_COLUMNS[f.key];
      if (f.operator === 'contains') return `multiSearchAnyCaseInsensitiveUTF8(${column}, {f${i}:Array(String)})`;
      return `${column} ${f.operator === 'is' ? 'IN' : 'NOT IN'} {f${i}:Array(String)}`;
    })
    .map((c) => ` AND ${c}`)
    .join('');
}

/**
 * Under filters, session metrics count the sessions that hold a pageview matching every filter (a filter
 * selects events by their own fields; pageviews carry all of a visit's fields).
 */
function sessionFilterSql(filters: readonly Filter[], params: Record<string, unknown>): string {
  if (filters.length === 0) return '';
  return ` AND session_id IN (
    SELECT session_id FROM events
    WHERE website_id = {w:UUID} AND type = 'pageview'
      AND ts >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AND ts < {end:DateTime64(3, 'UTC')} + INTERVAL 1 DAY${filterSql(filters, params)})`;
}

const EVENT_METRICS: readonly ModelMetric[] = ['visitors', 'pageviews', 'events'];
const SESSION_METRICS: readonly ModelMetric[] = ['visit_duration', 'bounce_rate', 'visits', 'value_score'];

/**
 * A visit's value score (DESIGN §3) over the folded session columns: 10 per pageview up to 4, 5 per whole
 * engaged minute up to 25, 15 for an interaction, 20 for a goal, 10 when identified, 20 for a purchase.
 */
export const VALUE_SCORE_SQL = `least(100, 10 * least(pv, 4) + least(25, intDiv(eng, 60000) * 5) + 15 * (it > 0) + 20 * (goals > 0) + 10 * idf + 20 * (buys > 0))`;
/** The folded columns VALUE_SCORE_SQL reads, beyond pv and it. */
const SCORE_COLUMNS = 'sum(engagement_ms) AS eng, sum(goals) AS goals, max(identified) AS idf, sum(purchases) AS buys';

/**
 * The fold of a website's session parts into whole sessions that began in [start, end) and hold a pageview.
 * Its parts are read from a window a day wider on each side, so a session that began before the range (or
 * continues after it) is folded whole; only a session longer than a day could be misplaced.
 */
function sessionFold(columns: string, filters: readonly Filter[], params: Record<string, unknown>): string {
  return `SELECT session_id, min(start_ts) AS s, max(end_ts) AS e, sum(pageviews) AS pv, sum(interactions) AS it${columns ? `, ${columns}` : ''}
        FROM sessions
        WHERE website_id = {w:UUID}
          AND start_ts >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AND start_ts < {end:DateTime64(3, 'UTC')} + INTERVAL 1 DAY${sessionFilterSql(filters, params)}
        GROUP BY session_id
        HAVING s >= {start:DateTime64(3, 'UTC')} AND s < {end:DateTime64(3, 'UTC')} AND pv > 0`;
}

async function rows<T>(clickhouse: ClickHouseClient, query: string, params: Record<string, unknown>): Promise<T[]> {
  return (await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

/** Runs a query; one row per key (a single '' key without a dimension). */
export async function runStats(clickhouse: ClickHouseClient, q: StatsQuery): Promise<StatsRow[]> {
  const base = { w: q.websiteId, tz: q.timeZone, start: q.start / 1000, end: q.end / 1000 };
  const merged = new Map<string, MetricValues>();
  const put = (key: string, values: MetricValues) => merged.set(key, { ...merged.get(key), ...values });

  const bySessions = q.dimension !== undefined && SESSION_DIMENSIONS.has(q.dimension);
  if (!bySessions && q.metrics.some((m) => EVENT_METRICS.includes(m))) {
    const params: Record<string, unknown> = { ...base };
    // Filter on the page dimension means pageviews only: every other event has no page.
    const onlyPageviews = q.dimension === 'page' ? " AND type = 'pageview'" : '';
    const sql = `SELECT ${eventKey(q.dimension)} AS k,
        uniqIf(visitor_id, type IN ('pageview', 'event') AND visitor_id != '') AS visitors,
        countIf(type = 'pageview') AS pageviews,
        countIf(type IN ('pageview', 'event')) AS events
      FROM events
      WHERE website_id = {w:UUID} AND ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
        AND type IN ('pageview', 'event')${onlyPageviews}${filterSql(q.filters, params)}
      GROUP BY k`;
    for (const r of await rows<{ k: string; visitors: string; pageviews: string; events: string }>(clickhouse, sql, params)) {
      put(r.k, { visitors: Number(r.visitors), pageviews: Number(r.pageviews), events: Number(r.events) });
    }
  }

  // By page, a visit's score counts for every page it viewed (not only its entry page).
  const scoreByViews = q.dimension === 'page' && q.metrics.includes('value_score');
  if (bySessions || q.metrics.some((m) => SESSION_METRICS.includes(m) && !(scoreByViews && m === 'value_score'))) {
    const params: Record<string, unknown> = { ...base };
    const score = q.metrics.includes('value_score') && !scoreByViews;
    const dimensionColumn = sessionDimensionColumn(q.dimension);
    const columns = [
      bySessions ? 'sum(events) AS ev, any(visitor_id) AS visitor' : '',
      score ? SCORE_COLUMNS : '',
      dimensionColumn ?? '',
    ].filter(Boolean);
    const sql = `SELECT ${sessionKey(q.dimension)} AS k,
        ${bySessions ? "uniqIf(visitor, visitor != '') AS visitors, sum(pv) AS pageviews, sum(ev) AS events," : ''}
        ${score ? `round(avg(${VALUE_SCORE_SQL}), 1) AS value_score,` : ''}
        count() AS visits,
        round(avg(dateDiff('second', s, e))) AS visit_duration,
        round(100 * countIf(pv = 1 AND it = 0) / count()) AS bounce_rate
      FROM (${sessionFold(columns.join(', '), q.filters, params)})
      GROUP BY k`;
    type SessionRow = { k: string; visitors: string; pageviews: string; events: string; visits: string; value_score: number; visit_duration: number; bounce_rate: number };
    for (const r of await rows<SessionRow>(clickhouse, sql, params)) {
      put(r.k, {
        ...(bySessions ? { visitors: Number(r.visitors), pageviews: Number(r.pageviews), events: Number(r.events) } : {}),
        ...(score ? { value_score: Number(r.value_score) } : {}),
        visits: Number(r.visits),
        visit_duration: Number(r.visit_duration),
        bounce_rate: Number(r.bounce_rate),
      });
    }
  }

  if (scoreByViews) {
    const params: Record<string, unknown> = { ...base };
    const sql = `SELECT v.pathname AS k, round(avg(${VALUE_SCORE_SQL}), 1) AS value_score
      FROM (
        SELECT DISTINCT pathname, session_id FROM events
        WHERE website_id = {w:UUID} AND ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
          AND type = 'pageview' AND session_id != ''${filterSql(q.filters, params)}
      ) AS v
      INNER JOIN (${sessionFold(SCORE_COLUMNS, [], params)}) AS f ON f.session_id = v.session_id
      GROUP BY k`;
    for (const r of await rows<{ k: string; value_score: number }>(clickhouse, sql, params)) put(r.k, { value_score: Number(r.value_score) });
  }

  return [...merged.entries()].map(([key, values]) => ({ key, values: pick(values, q.metrics) }));
}

function pick(values: MetricValues, metrics: readonly ModelMetric[]): MetricValues {
  const out: MetricValues = {};
  for (const m of metrics) out[m] = values[m] ?? 0;
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
  q: Pick<StatsQuery, 'websiteId' | 'start' | 'end' | 'filters'>,
  page: { limit: number; offset: number },
): Promise<VisitRow[]> {
  const params: Record<string, unknown> = { w: q.websiteId, start: q.start / 1000, end: q.end / 1000, limit: page.limit, offset: page.offset };
  const columns = [
    SCORE_COLUMNS,
    'any(visitor_id) AS visitor',
    'any(country_code) AS country',
    'any(city) AS town',
    'any(device_type) AS device',
    'any(browser) AS br',
    'any(os) AS system',
    'argMinMerge(entry_page) AS landing',
    'argMinMerge(referrer) AS ref',
  ].join(', ');
  const sql = `SELECT session_id, visitor, toUnixTimestamp64Milli(s) AS started_ms, country, town, device, br, system, landing, ref,
      it > 0 AS interacted, ${VALUE_SCORE_SQL} AS score
    FROM (${sessionFold(columns, q.filters, params)})
    ORDER BY s DESC, session_id ASC
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`;
  type Row = { session_id: string; visitor: string; started_ms: string; country: string; town: string; device: string; br: string; system: string; landing: string; ref: string; interacted: number; score: number };
  return (await rows<Row>(clickhouse, sql, params)).map((r) => ({
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
