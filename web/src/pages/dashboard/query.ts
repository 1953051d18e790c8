// Stats for the dashboard come from Plausible's Stats API v2 (POST /api/v2/query), the same endpoint a script
// uses, with the view state's range and filters. A shared dashboard calls it with its share token instead
// of a user's JWT (set in lib/api.ts); nothing here differs.
import type { Anomaly } from '../../../../lib/external/anomalySchemas';
import type { PlausibleQueryBody } from '../../../../lib/stats/plausible/query';
import { post } from '../../lib/api';
import { weekLabels } from './period';
import type { DashboardState, Filter, Interval } from './state';

export interface V2Result {
  results: { metrics: (number | { value: number; currency: string } | null)[]; dimensions: string[] }[];
  /** anomalies: a signed-in reader's question over time only (never a shared dashboard's). */
  meta: { time_labels?: string[]; total_rows?: number; anomalies?: Anomaly[] };
  query: { date_range: [string, string] };
}

type DateRange = PlausibleQueryBody['date_range'];

/** The state's range as v2's date_range; `24h` is the last 24 hours to the minute. */
export function dateRange(state: DashboardState, now = Date.now()): DateRange {
  switch (state.range) {
    case 'today':
      return 'day';
    case '24h':
      return [new Date(now - 86_400_000).toISOString(), new Date(now).toISOString()];
    case 'custom':
      return [state.from!, state.to!];
    default:
      return state.range;
  }
}

export function v2Filters(filters: Filter[]): unknown[] {
  return filters.map((f) => [f.op, f.dimension, f.values]);
}

export interface QueryParts {
  metrics: string[];
  dimensions?: string[];
  order_by?: [string, 'asc' | 'desc'][];
  limit?: number;
  /** Overrides the state's range (the comparison period). */
  date_range?: DateRange;
  include?: { time_labels?: boolean; total_rows?: boolean };
  /** Filters added to the state's (a panel's own). */
  filters?: Filter[];
}

export function runQuery(siteId: string, state: DashboardState, parts: QueryParts, signal?: AbortSignal) {
  return post<V2Result>(
    '/api/v2/query',
    {
      site_id: siteId,
      metrics: parts.metrics,
      date_range: parts.date_range ?? dateRange(state),
      dimensions: parts.dimensions ?? [],
      filters: v2Filters([...state.filters, ...(parts.filters ?? [])]),
      order_by: parts.order_by,
      include: parts.include,
      pagination: parts.limit ? { limit: parts.limit, offset: 0 } : undefined,
    },
    { signal },
  );
}

/** A metric's value as a number (revenue comes as {value, currency}). */
export function metricValue(v: V2Result['results'][number]['metrics'][number]): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : v.value;
}

/** The KPI row of an aggregate answer, by metric name, in the order the metrics were asked. */
export type Kpis = Record<string, number>;

export function kpisOf(result: V2Result, metrics: readonly string[]): Kpis {
  const row = result.results[0]?.metrics ?? [];
  return Object.fromEntries(metrics.map((m, i) => [m, metricValue(row[i])]));
}

export interface Series {
  /** Bucket labels as v2 gives them (`YYYY-MM-DD`, `YYYY-MM-DD HH:00:00`), in order. */
  labels: string[];
  values: number[];
  /** The website's anomalies overlapping the range, oldest first (signed-in readers). */
  anomalies?: Anomaly[];
}

/**
 * One metric over time. Every bucket is listed (v2 leaves empty buckets out of `results`): from
 * time_labels, or for weeks, whose labels v2 does not list, the week starts found in the results filled
 * in at 7-day steps.
 */
export async function timeSeries(
  siteId: string,
  state: DashboardState,
  interval: Interval,
  metric: string,
  range: DateRange | undefined,
  signal?: AbortSignal,
): Promise<Series & { resolved: [string, string] }> {
  const dimension = `time:${interval}`;
  const weeks = interval === 'week';
  const result = await runQuery(
    siteId,
    state,
    {
      metrics: [metric],
      dimensions: [dimension],
      date_range: range,
      include: weeks ? undefined : { time_labels: true },
    },
    signal,
  );
  const byLabel = new Map(result.results.map((r) => [r.dimensions[0], metricValue(r.metrics[0])]));
  const labels = weeks ? weekLabels(result.query.date_range, [...byLabel.keys()]) : (result.meta.time_labels ?? []);
  return {
    labels,
    values: labels.map((l) => byLabel.get(l) ?? 0),
    anomalies: result.meta.anomalies,
    resolved: result.query.date_range,
  };
}
