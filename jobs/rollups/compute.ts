// Computes a website's daily rollups of some local days (sql/clickhouse/004_rollups.sql, 007, 011, 014, 016):
// event metrics by dimension value, visit metrics by the visit's values, value scores by page, the visits of
// each combination of attributes, and every session's visit values, as one new version of those days.
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import { VISIT_KEYS } from '../../lib/stats/model';
import { EMPTY_SKETCH, T } from '../../lib/stats/sql/fragments';
import { SCORE_COLUMNS, VALUE_SCORE_SQL } from '../../lib/stats/sql/valueScore';
import {
  ATTRIBUTE_VALUES,
  customEventsJoin,
  eventColumn,
  sessionFold,
  visitJoin,
  visitValue,
} from '../../lib/stats/sql/visits';
import { addDays, daysBetween, formatDate, type LocalDate, startOfDay } from '../../lib/stats/time';
import { deleteOrphans, storeNow } from './versions';

const COLUMNS =
  'website_id, tz, date, dim, value, visitors, visitors_n, pageviews, events, visits, bounces, duration_s, score_sum, scored, expire_at, version';
/**
 * Event columns by which event metrics are rolled up ('' = totals; page counts pageviews only; the visit keys
 * the event's visit's values, through visitJoin; `attrs` the visit's country, browser, os and device as one
 * JSON array, also kept in the row's a_* columns for filters: ATTRIBUTE_KEYS in lib/stats/plan.ts).
 */
const EVENT_DIMS = `[('', ''), ('page', pathname), ${VISIT_KEYS.map((k) => `('${k}', ${eventColumn(k)})`).join(', ')},
  ('attrs', toJSONString([${ATTRIBUTE_VALUES.join(', ')}]))]`;
/** A visit's values (visit_values' columns, the `s:…` dimensions), the same expressions the query model folds. */
const VISIT_VALUES = `${visitValue('source')} AS src, ${visitValue('utm_source')} AS us, ${visitValue('utm_medium')} AS um, ${visitValue('utm_campaign')} AS uc,
  ${visitValue('country')} AS country, ${visitValue('device')} AS device, ${visitValue('browser')} AS br, ${visitValue('os')} AS os_`;
const SESSION_VALUES = `argMinMerge(entry_page) AS entry, argMaxMerge(exit_page) AS exit_, ${VISIT_VALUES}, any(visitor_id) AS visitor, max(expire_at) AS exp`;
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
  const events = `SELECT ${row([
    '{w:UUID}',
    '{tz:String}',
    'toDate(ts, {tz:String})',
    'd.1',
    'd.2',
    "uniqStateIf(visitor_id, visitor_id != '')",
    "uniqIf(visitor_id, visitor_id != '')",
    "countIf(type = 'pageview')",
    'count()',
    '0',
    '0',
    '0',
    'toFloat64(0)',
    '0',
    'max(expire_at)',
    '{version:UInt64}',
    ...ATTRIBUTE_VALUES.map((v) => `any(if(d.1 = 'attrs', ${v}, ''))`),
  ])}
      FROM events${visitJoin(VISIT_KEYS, [window], params)} ARRAY JOIN ${EVENT_DIMS} AS d
      WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} AND type IN ('pageview', 'event') AND (d.1 != 'page' OR type = 'pageview')
      GROUP BY c2, c3, c4`;
  const visits = `SELECT ${row([
    '{w:UUID}',
    '{tz:String}',
    'toDate(s, {tz:String})',
    'd.1',
    'd.2',
    "uniqStateIf(visitor, visitor != '')",
    "uniqIf(visitor, visitor != '')",
    'sum(pv)',
    'sum(pv + ce)',
    'count()',
    'countIf(pv = 1 AND it = 0)',
    "toUInt64(sum(dateDiff('second', s, e)))",
    `toFloat64(sum(${VALUE_SCORE_SQL}))`,
    'count()',
    'max(exp)',
    '{version:UInt64}',
    ...NONE,
  ])}
      FROM (${sessionFold(`${SCORE_COLUMNS}, ${SESSION_VALUES}`, [], [window], params)}) AS f${customEventsJoin([window], params)} ARRAY JOIN ${SESSION_DIMS} AS d
      GROUP BY c2, c3, c4`;
  // A visit counts for every page it viewed, up to a day after its day (it may run on past midnight).
  const pageScores = `SELECT ${row([
    '{w:UUID}',
    '{tz:String}',
    'toDate(f.s, {tz:String})',
    "'page_scores'",
    'page',
    EMPTY_SKETCH,
    '0',
    '0',
    '0',
    '0',
    '0',
    '0',
    `toFloat64(sum(${VALUE_SCORE_SQL}))`,
    'count()',
    'max(f.exp)',
    '{version:UInt64}',
    ...NONE,
  ])}
      FROM (
        SELECT session_id, groupUniqArray(pathname) AS pages FROM events
        WHERE website_id = {w:UUID} AND ts >= {a:${T}} AND ts < {b:${T}} + INTERVAL 1 DAY AND type = 'pageview' AND session_id != ''
        GROUP BY session_id
      ) AS v
      INNER JOIN (${sessionFold(`${SCORE_COLUMNS}, max(expire_at) AS exp`, [], [window], params)}) AS f ON f.session_id = v.session_id
      ARRAY JOIN v.pages AS page
      GROUP BY c2, c4`;
  // Visits by their combination of attributes, for filters on them alone (a visit without pageviews is not one).
  const attrVisits = `SELECT ${row([
    '{w:UUID}',
    '{tz:String}',
    'toDate(s, {tz:String})',
    "'s:attrs'",
    'toJSONString([country, br, os_, device])',
    EMPTY_SKETCH,
    '0',
    '0',
    '0',
    'count()',
    'countIf(pv = 1 AND it = 0)',
    "toUInt64(sum(dateDiff('second', s, e)))",
    `toFloat64(sum(${VALUE_SCORE_SQL}))`,
    'count()',
    'max(exp)',
    '{version:UInt64}',
    'any(country)',
    'any(br)',
    'any(os_)',
    'any(device)',
  ])}
      FROM (${sessionFold(`${SCORE_COLUMNS}, ${VISIT_VALUES}, max(expire_at) AS exp`, [], [window], params)})
      GROUP BY c2, c4`;
  // Every session begun on the day with its visit values ('' without a pageview), for visit-key filters.
  await clickhouse.command({
    query: `INSERT INTO visit_values (website_id, tz, date, session_id, source_name, utm_source, utm_medium, utm_campaign, country_code, browser,
        device_type, os, expire_at, version)
      SELECT {w:UUID}, {tz:String}, toDate(s, {tz:String}), session_id, src, us, um, uc, country, br, device, os_, exp, {version:UInt64}
      FROM (
        SELECT session_id, min(start_ts) AS s, ${VISIT_VALUES}, max(expire_at) AS exp
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
    query_params: {
      first: firstDay,
      n: daysBetween(first, last) + 1,
      ...base,
      final: opts.final ? 1 : 0,
      reach: opts.reach ?? 0,
    },
  });
  return version;
}
