// A funnel's statement (issue 22): per visit (session_id) the furthest step reached in order, by ClickHouse's
// windowFunnel, then per visitor the furthest of their visits, then per step the visitors who got that far.
import type { GoalDefinition, Window } from '../model';
import type { Filter } from '../params';
import type { VisitSource } from '../plan';
import { inWindows } from './fragments';
import { goalCondition } from './goals';
import { eventFilterSql, visitSetSql } from './visits';

/**
 * The statement answering one row, `reached`: visitors per step, in step order. Only the rows that match a
 * step are read, so windowFunnel's strict_order judges the steps alone: after the first step, a visit stops
 * at the first event of a step whose previous step it has not reached (a skipped step, or two steps taken in
 * reverse order); repeating a step already reached does not stop it, nor do other pages in between. Events
 * without a session belong to no visit and are left out. Page filters narrow the pageviews that pageview
 * steps match; visit-key filters select the visits.
 */
export function funnelStatement(
  steps: readonly GoalDefinition[],
  filters: readonly Filter[],
  range: Window,
  visits: VisitSource,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  const pageFilters = eventFilterSql(filters, visits, params, false);
  const conditions = steps.map((goal, i) => {
    const matches = goalCondition(goal, `s${i}`, params);
    return goal.kind === 'page' && pageFilters ? `(${matches}${pageFilters})` : matches;
  });
  const visitSet = visitSetSql(filters, visits, params);
  // Wide enough for any visit of the range: the range itself (timestamps in milliseconds).
  params.fw = range.end - range.start;
  const reached = steps.map((_, i) => `countIf(level >= ${i + 1})`).join(', ');
  // Each row's steps as bits (8 steps fit a UInt8), so every condition is evaluated once per row; visits and
  // visitors are grouped by 64-bit hashes of their ids, not the strings (a collision among a million visits
  // has a chance of about 1 in 30 million). Both measured to save CPU against conditions repeated in the
  // WHERE and string keys.
  const bits = conditions.map((c, i) => `${c} * ${1 << i}`).join(' + ');
  const sql = `SELECT [${reached}] AS reached
    FROM (
      SELECT v, max(level) AS level
      FROM (
        SELECT v, windowFunnel({fw:UInt64}, 'strict_order')(t, ${steps.map((_, i) => `bitTest(m, ${i})`).join(', ')}) AS level
        FROM (
          SELECT cityHash64(visitor_id) AS v, cityHash64(session_id) AS sh, toUInt64(toUnixTimestamp64Milli(ts)) AS t,
            toUInt8(${bits}) AS m
          FROM events
          WHERE website_id = {w:UUID} AND ${inWindows('ts', [range], params)} AND session_id != '' AND m > 0${visitSet ? ` AND ${visitSet}` : ''}
        )
        GROUP BY v, sh
        HAVING level > 0
      )
      GROUP BY v
    )`;
  return { sql, params };
}
