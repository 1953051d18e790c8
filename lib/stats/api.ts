// Stats API responses (spec "Stats API"): aggregate, timeseries and breakdown over the query model. v1 keeps
// the spec's V1 limitation — with filters only visitors is computed, other metrics are null and meta.note
// says so — and approximates events by pageviews; v2 computes every metric under any filter, counts events
// truly, and can compare with the previous period.
import type { ClickHouseClient } from '../clickhouse/client';
import type { Dimension, MetricValues, StatsRow } from './model';
import {
  type FilterClause,
  isFilterGroup,
  type Property,
  type StatsEndpoint,
  type StatsParams,
  type StatsVersion,
  type V2Metric,
} from './params';
import { bucketLabels, previousPeriod, type ResolvedPeriod, resolvePeriod } from './period';
import { byMetricDesc, runStats } from './run';
import { today } from './time';

export const V1_FILTER_NOTE =
  'V1 limitation: with filters only visitors is computed; other metrics are null. Use /api/external/v2 for every metric under filters.';

/** The breakdown row key of each property (DESIGN §3: its short name). */
export const PROPERTY_KEYS: Record<Property, { key: string; dimension: Dimension }> = {
  'event:page': { key: 'page', dimension: 'page' },
  'visit:country': { key: 'country', dimension: 'country' },
  'visit:browser': { key: 'browser', dimension: 'browser' },
  'visit:device': { key: 'device', dimension: 'device' },
  'visit:os': { key: 'os', dimension: 'os' },
  'visit:source': { key: 'source', dimension: 'source' },
  'visit:utm_source': { key: 'utm_source', dimension: 'utm_source' },
  'visit:utm_medium': { key: 'utm_medium', dimension: 'utm_medium' },
  'visit:utm_campaign': { key: 'utm_campaign', dimension: 'utm_campaign' },
  'visit:entry_page': { key: 'entry_page', dimension: 'entry_page' },
  'visit:exit_page': { key: 'exit_page', dimension: 'exit_page' },
  'visit:channel': { key: 'channel', dimension: 'channel' },
  'visit:referrer': { key: 'referrer', dimension: 'referrer' },
  'visit:city': { key: 'city', dimension: 'city' },
  'visit:region': { key: 'region', dimension: 'region' },
};

export interface WebsiteRef {
  id: string;
  timezone: string;
}

type AppliedFilter =
  | { key: string; operator: string; values: string[] }
  | { operator: string; clauses: AppliedFilter[] };

/** The filters as applied: `{key, operator, values}` clauses, groups as `{operator, clauses}`. */
function filtersApplied(filters: readonly FilterClause[]): AppliedFilter[] {
  return filters.map((f) =>
    isFilterGroup(f)
      ? { operator: f.operator, clauses: filtersApplied(f.clauses) }
      : { key: f.key, operator: f.operator, values: f.values },
  );
}

/** The version's rules: which metrics are computed, and how a requested metric is presented. */
interface Rules {
  computed(metrics: readonly V2Metric[]): V2Metric[];
  present(metrics: readonly V2Metric[], values: MetricValues | undefined): Record<string, number | null>;
  note?: string;
}

function rulesFor(version: StatsVersion, filtered: boolean): Rules {
  if (version === 'v2') {
    return {
      computed: (metrics) => [...metrics],
      present: (metrics, values) => Object.fromEntries(metrics.map((m) => [m, values?.[m] ?? 0])),
    };
  }
  return {
    computed: (metrics) =>
      filtered
        ? metrics.includes('visitors')
          ? ['visitors']
          : []
        : [...new Set(metrics.map((m) => (m === 'events' ? 'pageviews' : m)))],
    present: (metrics, values) =>
      Object.fromEntries(
        metrics.map((m) => [
          m,
          filtered && m !== 'visitors' ? null : ((m === 'events' ? values?.pageviews : values?.[m]) ?? 0),
        ]),
      ),
    note: filtered ? V1_FILTER_NOTE : undefined,
  };
}

function periodMeta(p: ResolvedPeriod, filters: readonly FilterClause[], note: string | undefined) {
  return {
    period: p.period,
    period_start: new Date(p.start).toISOString(),
    period_end: new Date(p.end).toISOString(),
    filters_applied: filtersApplied(filters),
    ...(note ? { note } : {}),
  };
}

/** Percent change from the previous value, rounded; null when there is nothing to compare with. */
export function percentChange(current: number | null, previous: number | null): number | null {
  if (current === null || previous === null || previous === 0) return null;
  return Math.round(((current - previous) / previous) * 100);
}

export async function statsResponse(
  clickhouse: ClickHouseClient,
  website: WebsiteRef,
  endpoint: StatsEndpoint,
  params: StatsParams,
  version: StatsVersion,
) {
  const anchor = params.date ?? today(website.timezone);
  const period = resolvePeriod(params.period, anchor, website.timezone) as ResolvedPeriod; // syntax checked already
  const filtered = params.filters.length > 0;
  const rules = rulesFor(version, filtered);
  const base = {
    websiteId: website.id,
    timeZone: website.timezone,
    start: period.start,
    end: period.end,
    filters: params.filters,
  };

  if (endpoint === 'aggregate') {
    const metrics = rules.computed(params.metrics);
    const [row] = metrics.length ? await runStats(clickhouse, { ...base, metrics }) : [];
    const values = rules.present(params.metrics, row?.values);
    let previous: Record<string, number | null> | undefined;
    const before = params.compare === 'previous_period' ? previousPeriod(period, website.timezone) : undefined;
    if (before) {
      const [prev] = metrics.length
        ? await runStats(clickhouse, { ...base, start: before.start, end: before.end, metrics })
        : [];
      previous = rules.present(params.metrics, prev?.values);
    }
    return {
      results: Object.fromEntries(
        Object.entries(values).map(([m, value]) => [
          m,
          previous ? { value, change: percentChange(value, previous[m]) } : { value },
        ]),
      ),
      meta: {
        ...periodMeta(period, params.filters, rules.note),
        ...(before
          ? {
              compare: {
                period_start: new Date(before.start).toISOString(),
                period_end: new Date(before.end).toISOString(),
              },
            }
          : {}),
      },
    };
  }

  if (endpoint === 'timeseries') {
    const metrics = rules.computed(params.metrics);
    const dimension = `time:${params.interval}` as Dimension;
    const rows = metrics.length ? await runStats(clickhouse, { ...base, metrics, dimension }) : [];
    const byKey = new Map(rows.map((r) => [r.key, r.values]));
    return {
      results: bucketLabels(period, params.interval, website.timezone).map((date) => ({
        date,
        ...rules.present(params.metrics, byKey.get(date)),
      })),
      meta: { ...periodMeta(period, params.filters, rules.note), interval: params.interval },
    };
  }

  // breakdown: sorted by visitors (always computed for the order), ties by the value ascending
  const property = PROPERTY_KEYS[params.property!];
  const metrics = [...new Set<V2Metric>(['visitors', ...rules.computed(params.metrics)])];
  // A breakdown row names a value: events without one (no page, no geo) are not a row.
  const rows = (await runStats(clickhouse, { ...base, metrics, dimension: property.dimension })).filter(
    (r) => r.key !== '',
  );
  rows.sort(byMetricDesc('visitors'));
  const offset = (params.page - 1) * params.limit;
  const pageRows: StatsRow[] = rows.slice(offset, offset + params.limit);
  return {
    results: pageRows.map((r) => ({ [property.key]: r.key, ...rules.present(params.metrics, r.values) })),
    meta: {
      period: period.period,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      property: params.property,
      filters_applied: filtersApplied(params.filters),
      ...(rules.note ? { note: rules.note } : {}),
      pagination: {
        page: params.page,
        limit: params.limit,
        total: rows.length,
        has_more: offset + pageRows.length < rows.length,
      },
    },
  };
}
