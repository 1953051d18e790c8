// Rows of the rollup tables over a plan's rolled-up days: daily rows (pinned to their versions), a merged
// window's rows, and the visits of the `s:attrs` combinations that match filters.
import type { Dimension } from '../model';
import type { FilterClause } from '../params';
import type { RollupPlan } from '../plan';
import { attrsFilterSql } from './filters';
import { bindDim, onlyKeys } from './fragments';

/** The conditions on `date` and `version` that select a plan's rows of a rollup table (binds r*). */
export function rolledDaysSql(
  plan: Pick<RollupPlan, 'firstDay' | 'lastDay' | 'skipDays' | 'pinned' | 'newest'>,
  params: Record<string, unknown>,
): string {
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
    sql +=
      ' AND (date NOT IN {rpinned:Array(Date)} OR version = {rversions:Array(UInt64)}[indexOf({rpinned:Array(Date)}, date)])';
  }
  return sql;
}

/** The key of a rollup row for a query dimension. */
export function rollupKey(d: Dimension | undefined): string {
  switch (d) {
    case undefined:
      return "''";
    case 'time:day':
      return 'toString(date)';
    case 'time:month':
      return 'toString(toStartOfMonth(date))';
    case 'time:week':
      return 'toString(toMonday(date))';
    default:
      return 'value';
  }
}

/** Rows of one rollup dimension over the plan's days (`where`: more ` AND …` conditions). */
export function rollupRows(
  columns: string,
  dim: string,
  plan: RollupPlan,
  d: Dimension | undefined,
  params: Record<string, unknown>,
  where = '',
): string {
  return `SELECT ${rollupKey(d)} AS k, ${columns} FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = ${bindDim(params, dim)} AND ${rolledDaysSql(plan, params)}${onlyKeys('value', params)}${where}`;
}

/** The rows of one run (windowRun) of the merged window over the plan's days (binds wfirst, wlast, wrun). */
export function windowSql(plan: RollupPlan, run: string, params: Record<string, unknown>): string {
  params.wfirst = plan.firstDay;
  params.wlast = plan.lastDay;
  params.wrun = run;
  return 'website_id = {w:UUID} AND tz = {tz:String} AND last = {wlast:Date} AND first = {wfirst:Date} AND run = {wrun:UInt64}';
}

/**
 * Rows of one dimension of a run of the merged window over the plan's days: visit dimensions (`s:…`) from
 * window_visits, the others from window_rollups_v2.
 */
export function windowRows(
  columns: string,
  dim: string,
  plan: RollupPlan,
  run: string,
  key: string,
  params: Record<string, unknown>,
  where = '',
): string {
  return `SELECT ${key} AS k, ${columns} FROM ${dim.startsWith('s:') ? 'window_visits' : 'window_rollups_v2'}
      WHERE ${windowSql(plan, run, params)} AND dim = ${bindDim(params, dim)}${onlyKeys('value', params)}${where}`;
}

/** Session metrics of the plan's days for the visits whose attributes match the filters (`s:attrs`, or a run of its window). */
export function filteredVisitRows(
  plan: RollupPlan,
  d: Dimension | undefined,
  filters: readonly FilterClause[],
  params: Record<string, unknown>,
  run: string | undefined,
): string {
  const columns = 'visits, bounces, duration_s, score_sum, 0 AS eng_ms, 0 AS pvs, 0 AS evs';
  return run !== undefined
    ? windowRows(columns, 's:attrs', plan, run, rollupKey(d), params, attrsFilterSql(filters, params))
    : rollupRows(columns, 's:attrs', plan, d, params, attrsFilterSql(filters, params));
}
