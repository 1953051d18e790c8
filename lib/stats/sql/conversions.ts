// The statement of a conversion question (model.ts ConversionQuery): the events that complete goals, custom
// events by name or property, and purchases, grouped by the question's dimension, read raw. Goals are
// matched by their conditions (goals.ts), several at once by one array of goal numbers per row.
import type { ConversionQuery, Dimension, GoalDefinition, Window } from '../model';
import type { ConversionFilter } from '../params';
import type { ConversionPlan, VisitSource } from '../plan';
import { condition } from './filters';
import { inWindows } from './fragments';
import { goalCondition, pathMatches, REFUNDED } from './goals';
import { rollupRows, windowRows } from './rollupRows';
import { eventKey } from './stats';
import { eventFilterSql, visitJoin, visitKeysOf } from './visits';

const REFUND = `(type = 'purchase' AND ${REFUNDED})`;
const CUSTOM_EVENT = "type IN ('event', 'goal')";

/** The `props` value of a property key (bound as `param`). */
function propValue(key: string, param: string, params: Record<string, unknown>): string {
  params[param] = key.slice('props:'.length);
  return `JSONExtractString(props, {${param}:String})`;
}

/** The goals a question reads: those its goal filters select, or, by goal, all; undefined: no goal asked. */
export function goalsAsked(q: Pick<ConversionQuery, 'goals' | 'conversionFilters' | 'dimension'>) {
  const filters = q.conversionFilters.filter((f) => f.key === 'goal');
  if (filters.length === 0) return q.dimension === 'goal' ? q.goals : undefined;
  return q.goals.filter((g) => filters.every((f) => goalSelected(g, f)));
}

function goalSelected(g: GoalDefinition, f: ConversionFilter): boolean {
  const hit =
    f.operator === 'contains'
      ? f.values.some((v) => g.name.toLowerCase().includes(v.toLowerCase()))
      : f.values.includes(g.name);
  return f.operator === 'is_not' ? !hit : hit;
}

/** Which rows a question counts: completions of its goals, custom events, or purchases. */
function rowsSql(q: ConversionQuery, goals: readonly GoalDefinition[] | undefined, params: Record<string, unknown>) {
  const keys = [q.dimension, ...q.conversionFilters.map((f) => f.key)];
  const conditions: string[] = [];
  if (goals) conditions.push(`(${goals.map((g, i) => goalCondition(g, `g${i}`, params, true)).join(' OR ')})`);
  if (keys.includes('name')) conditions.push(CUSTOM_EVENT);
  else if (keys.some((k) => k?.startsWith('props:'))) conditions.push("type IN ('event', 'goal', 'purchase')");
  // Revenue alone: the purchases, refunds with them.
  if (conditions.length === 0) conditions.push(`type = 'purchase'`);
  return conditions.join(' AND ');
}

/** The conversion filters but goals (which choose the rows) as ` AND …`; bound as fc<i> (filters use f<i>). */
function conversionFilterSql(filters: readonly ConversionFilter[], params: Record<string, unknown>): string {
  return filters
    .map((f, i) => {
      if (f.key === 'goal') return '';
      const expr = f.key === 'name' ? 'name' : propValue(f.key, `pk${i}`, params);
      return ` AND ${condition(f, `c${i}`, expr, params)}`;
    })
    .join('');
}

/** The key of a row: a goal's number in `goals` (1-based), a name, a property value, or a StatsQuery key. */
function keySql(q: ConversionQuery, goals: readonly GoalDefinition[] | undefined, params: Record<string, unknown>) {
  const d = q.dimension;
  if (d === 'goal') return goalNumbers(goals ?? [], (g, i) => goalCondition(g, `g${i}`, params, true));
  if (d === 'name') return 'name';
  if (d?.startsWith('props:')) return propValue(d, 'pkd', params);
  return eventKey(d as Dimension | undefined);
}

/** A goal breakdown's key: the numbers (1-based in `goals`) of the goals `matches(goal, i)` says a row completes. */
function goalNumbers(goals: readonly GoalDefinition[], matches: (g: GoalDefinition, i: number) => string | undefined) {
  const numbers = goals.flatMap((g, i) => {
    const c = matches(g, i);
    return c === undefined ? [] : [`if(${c}, ${i + 1}, 0)`];
  });
  return `toString(arrayJoin(arrayFilter(x -> x > 0, [${numbers.join(', ')}])))`;
}

/**
 * The page goals' completions over the plan's rolled-up days: `page` rollup rows (a merged window's, or the
 * daily ones) whose value a page goal matches, as rows of k, a visitor sketch v and completions e.
 */
function rolledPageGoals(
  q: ConversionQuery,
  goals: readonly GoalDefinition[],
  plan: ConversionPlan,
  params: Record<string, unknown>,
): string {
  const matches = (g: GoalDefinition, i: number, column: string) =>
    g.kind === 'page' ? pathMatches(g.path ?? '', column, `rg${i}`, params) : undefined;
  const any = goals.flatMap((g, i) => matches(g, i, 'value') ?? []).join(' OR ');
  const columns = 'visitors AS v, pageviews AS e';
  const byGoal = q.dimension === 'goal';
  const rows = plan.run
    ? windowRows(columns, 'page', plan.days, plan.run, byGoal ? 'value' : "''", params, ` AND (${any})`)
    : rollupRows(columns, 'page', plan.days, byGoal ? 'page' : (q.dimension as Dimension), params, ` AND (${any})`);
  return byGoal ? `SELECT ${goalNumbers(goals, (g, i) => matches(g, i, 'k'))} AS k, v, e FROM (${rows})` : rows;
}

/**
 * The statement: per key, converted visitors and completions (refunds complete nothing), the net revenue of
 * the purchases in the website's currency (a Decimal as text) and how many succeeded. With a plan, the page
 * goals' pageviews of its rolled-up days come from the rollups, merged with the raw rows by key.
 */
export function conversionsStatement(
  q: ConversionQuery,
  goals: readonly GoalDefinition[] | undefined,
  visits: VisitSource,
  plan?: ConversionPlan,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { w: q.websiteId, tz: q.timeZone, cur: q.currency };
  const windows = [{ start: q.start, end: q.end }];
  const visitDimension = visitKeysOf([q.dimension]);
  const rawPageviews = plan && rawPageviewsSql(plan.days.rawWindows, params);
  const rows = `FROM events${visitJoin(visitDimension, windows, params)}
    WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)} AND ${rowsSql(q, goals, params)}${rawPageviews ?? ''}${conversionFilterSql(q.conversionFilters, params)}${eventFilterSql(q.filters, visits, params)}`;
  const net = `sumIf(if(${REFUND}, -abs(revenue), revenue), type = 'purchase' AND currency = {cur:String})`;
  const succeeded = `countIf(type = 'purchase' AND NOT ${REFUND} AND currency = {cur:String})`;
  if (!plan || !goals) {
    const sql = `SELECT ${keySql(q, goals, params)} AS k,
      uniqIf(visitor_id, visitor_id != '' AND NOT ${REFUND}) AS visitors, countIf(NOT ${REFUND}) AS events,
      toString(${net}) AS revenue, ${succeeded} AS purchases
    ${rows}
    GROUP BY k`;
    return { sql, params };
  }
  // Rolled sketches first: a group's state is built from the rows that arrive first (see sql/stats.ts).
  const sql = `SELECT k, uniqMerge(v) AS visitors, sum(e) AS events, toString(sum(r)) AS revenue, sum(p) AS purchases
    FROM (
      SELECT k, v, e, toDecimal128(0, 4) AS r, toUInt64(0) AS p FROM (${rolledPageGoals(q, goals, plan, params)})
      UNION ALL
      SELECT ${keySql(q, goals, params)} AS k, uniqStateIf(visitor_id, visitor_id != '' AND NOT ${REFUND}) AS v,
        countIf(NOT ${REFUND}) AS e, ${net} AS r, ${succeeded} AS p
      ${rows}
      GROUP BY k
    )
    GROUP BY k`;
  return { sql, params };
}

/** ` AND …`: pageviews only within the raw windows (the rolled-up days' come from the rollups). */
function rawPageviewsSql(rawWindows: readonly Window[], params: Record<string, unknown>): string {
  if (rawWindows.length === 0) return " AND type != 'pageview'";
  return ` AND (type != 'pageview' OR ${inWindows('ts', rawWindows, params, 'none', 'rw')})`;
}
