// The statement of a stats query from its plan (plan.ts): one SELECT per part the plan names — event
// metrics, session metrics, value scores by page — each merging the plan's rollup rows, merged window and
// raw rows, run as one statement (statsStatement).
import type { Dimension, StatsQuery } from '../model';
import { type StatsPlan, bySessions as sessionsOnly } from '../plan';
import { attrsFilterSql } from './filters';
import { EMPTY_SKETCH, inWindows, onlyKeys, unionAll } from './fragments';
import { filteredVisitRows, rollupKey, rollupRows, windowRows } from './rollupRows';
import { SCORE_COLUMNS, VALUE_SCORE_SQL } from './valueScore';
import {
  customEventsJoin,
  eventColumn,
  eventFilterSql,
  sessionFold,
  visitJoin,
  visitKeysOf,
  visitValue,
} from './visits';

/** Per dimension: the key expression over `events`, and over a finished session (columns of the inner query). */
export function eventKey(d: Dimension | undefined): string {
  switch (d) {
    case undefined:
      return "''";
    case 'time:day':
      return 'toString(toDate(ts, {tz:String}))';
    case 'time:hour':
      return "formatDateTime(toStartOfHour(ts, {tz:String}), '%Y-%m-%d %H:00:00', {tz:String})";
    case 'time:month':
      return 'toString(toStartOfMonth(ts, {tz:String}))';
    case 'time:week':
      return 'toString(toMonday(ts, {tz:String}))';
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
    case 'time:week':
      return 'toString(toMonday(s, {tz:String}))';
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
    case 'time:week':
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

/** Which part of a query a SELECT computes; run.ts shapes its rows by it. */
export type PartKind = 'events' | 'sessions' | 'pageScores' | 'engagement';

/** One SELECT of a query's metrics: rows of a String `k` and the named numeric columns. */
export interface Part {
  kind: PartKind;
  sql: string;
  params: Record<string, unknown>;
  columns: readonly string[];
}

/**
 * The parts of a query as its plan reads them. Within a part, larger sketches come first: a group's state is
 * built from the rows that arrive first, and merging a merged window's sketch into a state started by the
 * raw tail costs more per hash than the other way round.
 */
export function statsParts(q: StatsQuery, plan: StatsPlan): Part[] {
  const base = { w: q.websiteId, tz: q.timeZone, ...(q.keys ? { keys: q.keys } : {}) };
  const { days, dims, raw: windows, run, visits } = plan;
  const filtered = q.filters.length > 0;
  const groupBy = q.total ? 'GROUP BY GROUPING SETS ((k), ())' : 'GROUP BY k';
  const bySessions = sessionsOnly(q);
  // Visitor sketches are the costly part of a rollup read: merged only when visitors are asked for.
  const wantVisitors = q.metrics.includes('visitors');
  const parts: Part[] = [];

  if (plan.events) {
    const { daily, window, direct } = plan.events;
    const params: Record<string, unknown> = { ...base };
    // Filter on the page dimension means pageviews only: every other event has no page.
    const onlyPageviews = q.dimension === 'page' ? " AND type = 'pageview'" : '';
    const rawRows = plan.events.raw
      ? `FROM events${visitJoinOf(q.dimension, windows, params)}
      WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND type IN ('pageview', 'event')${onlyPageviews}${eventFilterSql(q.filters, visits, params)}${onlyKeys(eventKey(q.dimension), params)}`
      : undefined;
    const rawSelect =
      rawRows &&
      `SELECT ${eventKey(q.dimension)} AS k, ${wantVisitors ? "uniqStateIf(visitor_id, visitor_id != '')" : EMPTY_SKETCH} AS v, 0 AS vn,
          countIf(type = 'pageview') AS pv, count() AS ev
      ${rawRows}
      GROUP BY k`;
    const where = filtered ? attrsFilterSql(q.filters, params) : '';
    const rolled =
      days && dims && daily
        ? rollupRows(
            `${daily === 'sketches' ? 'visitors' : EMPTY_SKETCH} AS v, ${daily === 'day counts' ? 'visitors_n' : '0'} AS vn, pageviews AS pv, events AS ev`,
            dims.events,
            days,
            q.dimension,
            params,
            where,
          )
        : undefined;
    // By day, the window only feeds the range total (GROUPING SETS' empty set); its own key row is dropped.
    const merged =
      days && dims && window
        ? windowRows(
            `${window.visitors ? 'visitors' : EMPTY_SKETCH} AS v, 0 AS vn, ${window.sums ? 'pageviews AS pv, events AS ev' : '0 AS pv, 0 AS ev'}`,
            dims.events,
            days,
            run!,
            window.totalOnly ? `'${WINDOW_KEY}'` : rollupKey(q.dimension),
            params,
            where,
          )
        : undefined;
    parts.push({
      kind: 'events',
      sql:
        direct && rawRows
          ? `SELECT ${eventKey(q.dimension)} AS k, ${wantVisitors ? "uniqIf(visitor_id, visitor_id != '')" : '0'} AS vm, 0 AS vs,
          countIf(type = 'pageview') AS pageviews, count() AS events
      ${rawRows}
    ${groupBy}`
          : `SELECT k, uniqMerge(v) AS vm, sum(vn) AS vs, sum(pv) AS pageviews, sum(ev) AS events FROM (
      ${unionAll([merged, rolled, rawSelect])}
    ) ${groupBy}`,
      params,
      columns: ['vm', 'vs', 'pageviews', 'events'],
    });
  }

  if (plan.sessions) {
    const params: Record<string, unknown> = { ...base };
    const score = q.metrics.includes('value_score') && !plan.pageScores;
    const dimensionColumn = sessionDimensionColumn(q.dimension);
    const countEvents = bySessions && q.metrics.includes('events');
    const engaged = bySessions && q.metrics.includes('time_on_page');
    const columns = [
      bySessions ? 'any(visitor_id) AS visitor' : '',
      engaged ? 'sum(engagement_ms) AS eng' : '',
      score ? SCORE_COLUMNS : '',
      dimensionColumn ?? '',
    ].filter(Boolean);
    const raw = plan.sessions.raw
      ? `SELECT ${sessionKey(q.dimension)} AS k, count() AS visits, countIf(pv = 1 AND it = 0) AS bounces, toUInt64(sum(dateDiff('second', s, e))) AS duration_s,
          toFloat64(${score ? `sum(${VALUE_SCORE_SQL})` : '0'}) AS score_sum, ${engaged ? 'sum(eng)' : '0'} AS eng_ms,
          ${bySessions && wantVisitors ? "uniqStateIf(visitor, visitor != '') AS v," : ''} ${bySessions ? `sum(pv) AS pvs, ${countEvents ? 'sum(pv + ce)' : '0'} AS evs` : '0 AS pvs, 0 AS evs'}
        FROM (${sessionFold(columns.join(', '), q.filters, windows, params, visits)}) AS f${countEvents ? customEventsJoin(windows, params) : ''}
        GROUP BY k`
      : undefined;
    const from = plan.sessions.rolled?.from;
    const rolled =
      days && dims && from
        ? plan.sessions.rolled!.filtered
          ? filteredVisitRows(days, q.dimension, q.filters, params, from === 'window' ? run : undefined)
          : from === 'window'
            ? windowRows(
                'visits, bounces, duration_s, score_sum, 0 AS eng_ms, 0 AS pvs, 0 AS evs',
                dims.sessions,
                days,
                run!,
                rollupKey(q.dimension),
                params,
              )
            : rollupRows(
                `visits, bounces, duration_s, score_sum, 0 AS eng_ms, ${bySessions && wantVisitors ? 'visitors AS v, ' : ''}pageviews AS pvs, events AS evs`,
                dims.sessions,
                days,
                q.dimension,
                params,
              )
        : undefined;
    parts.push({
      kind: 'sessions',
      sql: `SELECT k, sum(visits) AS n, round(sum(duration_s) / n) AS visit_duration,
        round(100 * sum(bounces) / n) AS bounce_rate, round(sum(score_sum) / n, 1) AS value_score,
        ${bySessions && wantVisitors ? 'uniqMerge(v)' : '0'} AS visitors, sum(pvs) AS pageviews, sum(evs) AS events,
        if(pageviews = 0, 0, round(sum(eng_ms) / 1000 / pageviews)) AS time_on_page
      FROM (
      ${unionAll([rolled, raw])}
      ) ${groupBy} HAVING n > 0${onlyKeys('k', params)}`,
      params,
      columns: ['n', 'visit_duration', 'bounce_rate', 'value_score', 'visitors', 'pageviews', 'events', 'time_on_page'],
    });
  }

  if (plan.engagement) {
    // Engaged time of the events on a page (engagement events carry it, sent with the page's address) per
    // pageview, under the same key and filters as the event metrics.
    const params: Record<string, unknown> = { ...base };
    const key = eventKey(q.dimension);
    parts.push({
      kind: 'engagement',
      sql: `SELECT ${key} AS k, countIf(type = 'pageview') AS pvs,
          if(pvs = 0, 0, round(sumIf(engagement_ms, type = 'engagement') / 1000 / pvs)) AS time_on_page
      FROM events${visitJoinOf(q.dimension, windows, params)}
      WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND type IN ('pageview', 'engagement')${eventFilterSql(q.filters, visits, params)}${onlyKeys(key, params)}
      ${groupBy}`,
      params,
      columns: ['time_on_page'],
    });
  }

  if (plan.pageScores) {
    const params: Record<string, unknown> = { ...base };
    // The pages a visit viewed, up to a day after its window (a visit may run on past the range's end).
    const raw = plan.pageScores.raw
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
    const rolled =
      days && plan.pageScores.daily
        ? rollupRows('score_sum, scored', 'page_scores', days, q.dimension, params)
        : undefined;
    parts.push({
      kind: 'pageScores',
      sql: `SELECT k, round(sum(score_sum) / sum(scored), 1) AS value_score FROM (
      ${unionAll([rolled, raw])}
    ) GROUP BY k HAVING sum(scored) > 0`,
      params,
      columns: ['value_score'],
    });
  }
  return parts;
}

/** The key of a merged window's row that only feeds a range total (by day): dropped from the answer. */
export const WINDOW_KEY = '~window';

/** The visit values a dimension's key reads from `events` (visitJoin), or ''. */
function visitJoinOf(d: Dimension | undefined, windows: StatsPlan['raw'], params: Record<string, unknown>): string {
  return visitJoin(visitKeysOf([d]), windows, params);
}

/**
 * The parts as one statement (UNION ALL, tagged by part): chDB runs one statement at a time, so separate
 * statements would wait for each other, while one lets the engine work on the parts in parallel. Every
 * metric value is a count, sum or rounded mean well inside Float64's exact integers.
 */
export function statsStatement(parts: readonly Part[]): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [name, value] of Object.entries(part.params)) {
      // The parts bind the same names to the same values (one website, window set and filter list).
      if (name in params && JSON.stringify(params[name]) !== JSON.stringify(value))
        throw new Error(`parameter ${name} bound twice`);
      params[name] = value;
    }
  }
  const sql = parts
    .map(
      (part, i) =>
        `SELECT ${i} AS part, k, [${part.columns.map((c) => `toFloat64(${c})`).join(', ')}] AS x FROM (\n${part.sql}\n)`,
    )
    .join('\nUNION ALL\n');
  return { sql, params };
}
