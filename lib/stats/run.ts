// Runs stats queries: reads the coverage facts a query needs (coverage.ts), plans it (plan.ts), builds its
// statement (sql/), runs it and shapes the rows.
import { type ClickHouseClient, selectRows } from '../clickhouse/client';
import { cachedCoverage, cachedMarks, marksSince, windowRun } from './coverage';
import {
  type EventDimension,
  isVisitKey,
  type MetricValues,
  type ModelMetric,
  type RangeQuery,
  type StatsQuery,
  type StatsRow,
} from './model';
import { filterLeaves } from './params';
import {
  bySessions,
  type CoverageFacts,
  factsNeeded,
  planDays,
  planEventBreakdowns,
  planStats,
  type RollupPlan,
  scoresByViews,
} from './plan';
import { eventBreakdownsStatement } from './sql/eventBreakdowns';
import { type PartKind, statsParts, statsStatement, WINDOW_KEY } from './sql/stats';

/**
 * The coverage facts of a query's range: the rollups' coverage and late marks (remembered briefly), and,
 * when `window`, the run of the merged window over the rolled-up days the range would read.
 */
export async function coverageFacts(
  clickhouse: ClickHouseClient,
  q: RangeQuery,
  needs: { coverage: boolean; window: boolean },
): Promise<CoverageFacts> {
  if (!needs.coverage) return {};
  const coverage = await cachedCoverage(clickhouse, q.websiteId, q.timeZone);
  if (!coverage) return {};
  const marks = await cachedMarks(clickhouse, q.websiteId, marksSince(coverage));
  const days = needs.window ? planDays(q, { coverage, marks }) : undefined;
  if (!days) return { coverage, marks };
  return {
    coverage,
    marks,
    windowRun: await windowRun(clickhouse, q.websiteId, q.timeZone, days.firstDay, days.lastDay, days.newestInRange),
  };
}

/** Which whole days of [start, end) the rollups answer; undefined when none (or the range is not whole days). */
export async function rollupPlan(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  start: number,
  end: number,
): Promise<RollupPlan | undefined> {
  const q = { websiteId, timeZone, start, end, filters: [] };
  return planDays(q, await coverageFacts(clickhouse, q, { coverage: true, window: false }));
}

/** What a part's row gives the answer's row with key k (undefined: nothing). */
function shape(kind: PartKind, q: StatsQuery, k: string, r: Record<string, number>): MetricValues | undefined {
  switch (kind) {
    case 'events':
      if (k === WINDOW_KEY) return undefined;
      // A total row counts its visitors from sketches only; day rows add the days' own counts.
      return { visitors: q.total && k === '' ? r.vm : r.vm + r.vs, pageviews: r.pageviews, events: r.events };
    case 'sessions': {
      const score = q.metrics.includes('value_score') && !scoresByViews(q);
      return {
        ...(bySessions(q) ? { visitors: r.visitors, pageviews: r.pageviews, events: r.events } : {}),
        ...(score ? { value_score: r.value_score } : {}),
        ...(bySessions(q) && q.metrics.includes('time_on_page') ? { time_on_page: r.time_on_page } : {}),
        visits: r.n,
        visit_duration: r.visit_duration,
        bounce_rate: r.bounce_rate,
      };
    }
    case 'pageScores':
      return { value_score: r.value_score };
    case 'engagement':
      return { time_on_page: r.time_on_page };
  }
}

/** Runs a query; one row per key (a single '' key without a dimension). */
export async function runStats(clickhouse: ClickHouseClient, q: StatsQuery): Promise<StatsRow[]> {
  const facts = await coverageFacts(clickhouse, q, factsNeeded(q));
  const parts = statsParts(q, planStats(q, facts));
  const merged = new Map<string, MetricValues>();
  if (parts.length) {
    const { sql, params } = statsStatement(parts);
    for (const row of await selectRows<{ part: number; k: string; x: number[] }>(clickhouse, sql, params)) {
      const part = parts[row.part];
      const values = shape(part.kind, q, row.k, Object.fromEntries(part.columns.map((c, j) => [c, row.x[j]])));
      if (values) merged.set(row.k, { ...merged.get(row.k), ...values });
    }
  }
  return [...merged.entries()].map(([key, values]) => ({ key, values: pick(withRatios(values), q.metrics) }));
}

/** Views per visit: the row's pageviews over its visits, two decimals (0 without visits). */
function withRatios(values: MetricValues): MetricValues {
  const visits = values.visits ?? 0;
  return { ...values, views_per_visit: visits ? Math.round(((values.pageviews ?? 0) / visits) * 100) / 100 : 0 };
}

/** Breakdown order: by a metric, largest first, ties by the row's value ascending. */
export function byMetricDesc(metric: ModelMetric) {
  return (a: StatsRow, b: StatsRow) =>
    (b.values[metric] ?? 0) - (a.values[metric] ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function pick(values: MetricValues, metrics: readonly ModelMetric[]): MetricValues {
  const out: MetricValues = {};
  for (const m of metrics) out[m] = values[m] ?? 0;
  return out;
}

/**
 * Event metrics (visitors, pageviews, events) by several dimensions at once, plus the total under key ''
 * of dimension 'total'.
 */
export async function runEventBreakdowns(
  clickhouse: ClickHouseClient,
  q: RangeQuery,
  dimensions: readonly EventDimension[],
): Promise<Record<EventDimension | 'total', StatsRow[]>> {
  const unfiltered = q.filters.length === 0;
  const facts = await coverageFacts(clickhouse, q, {
    coverage: unfiltered || filterLeaves(q.filters).some((f) => isVisitKey(f.key)),
    window: unfiltered,
  });
  const { sql, params } = eventBreakdownsStatement(q, dimensions, planEventBreakdowns(q, facts));
  const out = Object.fromEntries([...dimensions, 'total'].map((d) => [d, [] as StatsRow[]])) as Record<
    EventDimension | 'total',
    StatsRow[]
  >;
  for (const r of await selectRows<{ d: string; k: string; visitors: string; pageviews: string; events: string }>(
    clickhouse,
    sql,
    params,
  )) {
    out[(r.d === '' ? 'total' : r.d) as EventDimension | 'total'].push({
      key: r.k,
      values: { visitors: Number(r.visitors), pageviews: Number(r.pageviews), events: Number(r.events) },
    });
  }
  return out;
}
