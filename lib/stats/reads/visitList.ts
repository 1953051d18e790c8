// The External API's visitor list: the visits that began in a range, newest first, one page of them, each
// with its visit's values (not a metric query: rows of sessions, not counts).
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { isVisitKey, type RangeQuery } from '../model';
import { filterLeaves } from '../params';
import { visitSource } from '../plan';
import { coverageFacts } from '../run';
import { inWindows } from '../sql/fragments';
import { SCORE_COLUMNS, VALUE_SCORE_SQL } from '../sql/valueScore';
import { sessionFold, visitValue } from '../sql/visits';

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
  q: RangeQuery,
  page: { limit: number; offset: number },
): Promise<VisitRow[]> {
  const needs = { coverage: filterLeaves(q.filters).some((f) => isVisitKey(f.key)), window: false };
  const visits = visitSource(q, await coverageFacts(clickhouse, q, needs));
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
        SELECT session_id FROM (${sessionFold('', q.filters, [{ start: q.start, end: q.end }], params, visits)})
        ORDER BY s DESC, session_id ASC
        LIMIT {limit:UInt32} OFFSET {offset:UInt64})
      GROUP BY session_id
    )
    ORDER BY s DESC, session_id ASC`;
  type Row = {
    session_id: string;
    visitor: string;
    started_ms: string;
    country: string;
    town: string;
    device: string;
    br: string;
    system: string;
    landing: string;
    ref: string;
    interacted: number;
    score: number;
  };
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
