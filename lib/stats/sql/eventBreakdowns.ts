// The statement of several breakdowns' event metrics (visitors, pageviews, events) at once, plus the total:
// one read of the rollups and one scan of the raw rows instead of one per dimension.
import type { EventDimension, RangeQuery } from '../model';
import type { EventBreakdownsPlan } from '../plan';
import { EMPTY_SKETCH, inWindows } from './fragments';
import { rolledDaysSql, windowSql } from './rollupRows';
import { eventColumn, eventFilterSql, visitJoin, visitKeysOf } from './visits';

/** Rows of (d, k, visitors, pageviews, events): d is the dimension, '' for the total. */
export function eventBreakdownsStatement(
  q: RangeQuery,
  dimensions: readonly EventDimension[],
  plan: EventBreakdownsPlan,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { w: q.websiteId, tz: q.timeZone, dims: ['', ...dimensions] };
  const { days, raw: windows, run, sums, visits } = plan;
  const selects: string[] = [];
  if (windows.length) {
    // One grouping set per dimension plus the total: the rows are read and aggregated once per set, about
    // half the work of repeating every row once per dimension (ARRAY JOIN). GROUPING() sets the bit of
    // each column the row's set does not group by, so set i is the mask with only bit i clear.
    const columns = dimensions.map(eventColumn);
    const all = (1 << columns.length) - 1;
    const maskOf = (i: number) => all & ~(1 << (columns.length - 1 - i));
    const set = `grouping(${columns.join(', ')})`;
    const which = (value: (i: number) => string) =>
      `multiIf(${columns.map((_, i) => `${set} = ${maskOf(i)}, ${value(i)}`).join(', ')}, '')`;
    selects.push(`SELECT ${which((i) => `'${dimensions[i]}'`)} AS d, ${which((i) => `toString(${columns[i]})`)} AS k,
        uniqStateIf(visitor_id, visitor_id != '') AS v, countIf(type = 'pageview') AS pv, count() AS ev
      FROM events${visitJoin(visitKeysOf(dimensions), windows, params)}
      WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND type IN ('pageview', 'event')${eventFilterSql(q.filters, visits, params)}
      GROUP BY GROUPING SETS (${columns.map((c) => `(${c})`).join(', ')}, ())`);
  }
  if (days) {
    if (!sums) {
      selects.push(`SELECT dim AS d, value AS k, ${run !== undefined ? EMPTY_SKETCH : 'visitors'} AS v, pageviews AS pv, events AS ev FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim IN {dims:Array(String)} AND ${rolledDaysSql(days, params)}`);
    }
    if (run !== undefined) {
      selects.push(`SELECT dim AS d, value AS k, visitors AS v, ${sums ? 'pageviews' : '0'} AS pv, ${sums ? 'events' : '0'} AS ev FROM window_rollups_v2
      WHERE ${windowSql(days, run, params)} AND dim IN {dims:Array(String)}`);
    }
  }
  // Window, rollups, raw: larger sketches first, as in statsParts.
  const sql = `SELECT d, k, uniqMerge(v) AS visitors, sum(pv) AS pageviews, sum(ev) AS events FROM (
      ${[...selects].reverse().join('\n      UNION ALL\n      ')}
    ) GROUP BY d, k`;
  return { sql, params };
}
