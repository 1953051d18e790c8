// Visit keys in SQL: a visit's values folded from `sessions` (or, for rolled-up days, read from
// visit_values), joined onto its events, and the set of sessions a query's visit-key filters select; the fold
// of session parts into whole sessions that session metrics and the rollup job read.
import { channelSql } from '../channel';
import { isVisitKey, RAW_VISIT_KEYS, VISIT_KEYS, type VisitKey, type Window } from '../model';
import { type Filter, type FilterClause, isFilterGroup } from '../params';
import { ATTRIBUTE_KEYS, type VisitSource } from '../plan';
import { condition, emptyMatches, FILTER_COLUMNS, groupCondition, referrerValue } from './filters';
import { inWindows } from './fragments';
import { rolledDaysSql } from './rollupRows';

/** The `sessions` column holding a visit key's first-pageview value (migrations 002, 016, 017). */
const SESSION_COLUMNS: Record<Exclude<VisitKey, 'channel' | 'referrer'>, string> = {
  country: 'visit_country',
  browser: 'visit_browser',
  device: 'visit_device',
  os: 'visit_os',
  source: 'source_name',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  city: 'visit_city',
  region: 'visit_region',
};
const REFERRER_DOMAIN = 'argMinMerge(visit_referrer)';

/** A visit key's value in a fold of `sessions` by session_id. */
export function visitValue(key: VisitKey): string {
  switch (key) {
    case 'referrer':
      return referrerValue('argMinMerge(source_name)', 'argMinMerge(utm_source)', REFERRER_DOMAIN);
    case 'channel':
      return channelSql({
        source: 'argMinMerge(source_name)',
        utmSource: 'argMinMerge(utm_source)',
        utmMedium: 'argMinMerge(utm_medium)',
        utmCampaign: 'argMinMerge(utm_campaign)',
        referrer: REFERRER_DOMAIN,
      });
    default:
      return `argMinMerge(${SESSION_COLUMNS[key]})`;
  }
}

/** The expression of a filter key over `events`: a visit key from visitJoin's columns, the page as stored. */
export function eventColumn(key: Filter['key']): string {
  return isVisitKey(key) ? `if(session_id = '', toString(${FILTER_COLUMNS[key]}), v_${key})` : FILTER_COLUMNS[key];
}

/** The attributes as strings over `events` joined with their visits (visitJoin), in ATTRIBUTE_KEYS order. */
export const ATTRIBUTE_VALUES: readonly string[] = ATTRIBUTE_KEYS.map(eventColumn);

/** The visit keys among the dimensions: what a read of `events` must join (visitJoin). */
export function visitKeysOf(dimensions: readonly (string | undefined)[]): VisitKey[] {
  return [...VISIT_KEYS, ...RAW_VISIT_KEYS].filter((k) => dimensions.includes(k));
}

/** Sessions begun in the windows widened by a day on both sides: those an event of the windows can belong to. */
function visitsAround(windows: readonly Window[], params: Record<string, unknown>, prefix = 'w'): string {
  return `FROM sessions WHERE website_id = {w:UUID} AND ${inWindows('start_ts', windows, params, 'around', prefix)} GROUP BY session_id`;
}

/** A visit-key filter and the id of its bound parameters (f<i>). */
interface VisitFilter {
  f: Filter;
  i: number | string;
  key: VisitKey;
}

/** The top-level visit-key filters with their indexes (groups are conditions of their own: groupSql). */
const visitFilters = (filters: readonly FilterClause[]): VisitFilter[] =>
  filters.flatMap((f, i) => (!isFilterGroup(f) && isVisitKey(f.key) ? [{ f, i, key: f.key }] : []));

/** Every visit-key filter, as one condition on the expressions `column` gives for their keys. */
function visitConditions(
  filters: readonly VisitFilter[],
  params: Record<string, unknown>,
  column: (key: VisitKey) => string,
): string {
  return filters.map(({ f, i, key }) => condition(f, i, column(key), params)).join(' AND ');
}

/**
 * Whether a row's session_id is one whose visit values satisfy every visit-key filter ('' without one): one
 * set for all of them. A session the set cannot see (longer than a day) has no visit values, as in the
 * rollups, so the set holds the sessions that satisfy the filters when '' does not, else those that do not.
 */
function inVisitSet(filters: readonly VisitFilter[], visits: VisitSource, params: Record<string, unknown>): string {
  if (filters.length === 0) return '';
  const empty = filters.every(({ f }) => emptyMatches(f));
  const selected = (conditions: string) => (empty ? `NOT (${conditions})` : conditions);
  const folded = (more = '') =>
    `SELECT session_id ${visitsAround(visits.around, params, 'v')} HAVING ${selected(visitConditions(filters, params, visitValue))}${more}`;
  let set = folded();
  if (visits.days) {
    const plan = visits.days;
    const rolled = `SELECT session_id FROM visit_values
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${rolledDaysSql(plan, params)} AND ${selected(visitConditions(filters, params, (key) => FILTER_COLUMNS[key]))}`;
    // The fold skips sessions begun on a rolled day (visit_values has them whole; a window's edge inside a
    // 25-hour day could cut one's first part off), so no session is in both with two values.
    const start = 'toDate(min(start_ts), {tz:String})';
    const notRolled = ` AND (${start} < {rlo:Date} OR ${start} > {rhi:Date}${plan.skipDays.length ? ` OR ${start} IN {rskip:Array(Date)}` : ''})`;
    set = `${rolled}
      UNION ALL
      ${folded(notRolled)}`;
  }
  return `session_id ${empty ? 'NOT IN' : 'IN'} (${set})`;
}

/** The set condition (no ` AND `) selecting the sessions that the top-level visit-key filters select, or ''. */
export function visitSetSql(
  filters: readonly FilterClause[],
  visits: VisitSource,
  params: Record<string, unknown>,
): string {
  return inVisitSet(visitFilters(filters), visits, params);
}

/** ` AND …` selecting the sessions (column session_id) that the visit-key filters select. */
function visitFilterSql(
  filters: readonly FilterClause[],
  visits: VisitSource,
  params: Record<string, unknown>,
): string {
  const set = inVisitSet(visitFilters(filters), visits, params);
  return set ? ` AND ${set}` : '';
}

/**
 * ` LEFT JOIN` onto `events` of the visit values of `keys` (columns v_<key>) of visitsAround, or '' for no
 * keys; an event whose session is not among them reads ''.
 */
export function visitJoin(
  keys: readonly VisitKey[],
  windows: readonly Window[],
  params: Record<string, unknown>,
): string {
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

/**
 * A filter group's condition on an `events` row: a page clause on the row's page, a visit-key clause on its
 * session's visit values (a set of sessions per clause, as inVisitSet), an event without a session on its own.
 */
function groupSql(c: FilterClause, i: number, visits: VisitSource, params: Record<string, unknown>): string {
  return groupCondition(c, String(i), (f, id) => {
    if (!isVisitKey(f.key)) return condition(f, id, FILTER_COLUMNS[f.key], params);
    const own = condition(f, id, `toString(${FILTER_COLUMNS[f.key]})`, params);
    return `if(session_id = '', ${own}, ${inVisitSet([{ f, i: id, key: f.key }], visits, params)})`;
  });
}

/**
 * The filters as ` AND …` conditions on `events` rows. The visit keys select the events of the sessions whose
 * visit values match (a set, inVisitSet: measured 3.7× cheaper than joining every event's visit value, 30
 * days raw), an event without a session by its own values; `visitKeys: false` leaves top-level visit keys out.
 */
export function eventFilterSql(
  filters: readonly FilterClause[],
  visits: VisitSource,
  params: Record<string, unknown>,
  visitKeys = true,
): string {
  const pages = filters
    .map((f, i) =>
      isFilterGroup(f)
        ? ` AND ${groupSql(f, i, visits, params)}`
        : isVisitKey(f.key)
          ? ''
          : ` AND ${condition(f, i, FILTER_COLUMNS[f.key], params)}`,
    )
    .join('');
  const visitKeyFilters = visitFilters(filters);
  const set = visitKeys ? inVisitSet(visitKeyFilters, visits, params) : '';
  if (!set) return pages;
  return `${pages} AND if(session_id = '', ${visitConditions(visitKeyFilters, params, (key) => `toString(${FILTER_COLUMNS[key]})`)}, ${set})`;
}

/**
 * Under filters, session metrics count the sessions whose visit values match the visit-key filters and that
 * hold a pageview matching the page filters and the groups (their visit-key clauses read the session's values).
 */
function sessionFilterSql(
  filters: readonly FilterClause[],
  windows: readonly Window[],
  visits: VisitSource,
  params: Record<string, unknown>,
): string {
  const byPageview = filters.some((f) => isFilterGroup(f) || !isVisitKey(f.key))
    ? ` AND session_id IN (
    SELECT session_id FROM events
    WHERE website_id = {w:UUID} AND type = 'pageview' AND ${inWindows('ts', windows, params, 'after')}${eventFilterSql(filters, visits, params, false)})`
    : '';
  return `${byPageview}${visitFilterSql(filters, visits, params)}`;
}

/**
 * The fold of a website's session parts into whole sessions that began in one of the windows and hold a
 * pageview. Parts are read from each window widened by a day on both sides, so a session that began before
 * it (or continues after it) is folded whole; only a session longer than a day could be misplaced. (Leaving
 * out the sessions begun the day before by a NOT IN set of their ids instead of folding that day was
 * measured slower: 32 vs 19 ms for a 26-hour tail, 53 vs 39 with entry pages and sources.)
 */
export function sessionFold(
  columns: string,
  filters: readonly FilterClause[],
  windows: readonly Window[],
  params: Record<string, unknown>,
  visits: VisitSource = { around: windows },
): string {
  return `SELECT session_id, min(start_ts) AS s, max(end_ts) AS e, sum(pageviews) AS pv, sum(interactions) AS it${columns ? `, ${columns}` : ''}
        FROM sessions
        WHERE website_id = {w:UUID} AND ${inWindows('start_ts', windows, params, 'around')}${sessionFilterSql(filters, windows, visits, params)}
        GROUP BY session_id
        HAVING ${inWindows('s', windows, params)} AND pv > 0`;
}
