// Stats API v1 (spec "Stats API"): aggregate, timeseries and breakdown over the query model, with the V1
// limitation — with filters only visitors is computed, other metrics are null and meta.note says so — and
// the events metric approximated by pageviews.
import type { ClickHouseClient } from '../clickhouse/client';
import type { Filter, Metric, Property, StatsEndpoint, StatsParams } from './params';
import { bucketLabels, resolvePeriod, type ResolvedPeriod } from './period';
import { runStats, type Dimension, type MetricValues, type StatsRow } from './query';
import { today } from './time';

export const V1_FILTER_NOTE = 'V1 limitation: with filters only visitors is computed; other metrics are null. Use /api/external/v2 for every metric under filters.';

/** The breakdown row key of each property (DESIGN §3: its short name). */
export const PROPERTY_KEYS: Record<Property, { key: string; dimension: Dimension }> = {
  'event:page': { key: 'page', dimension: 'page' },
  'visit:country': { key: 'country', dimension: 'country' },
  'visit:browser': { key: 'browser', dimension: 'browser' },
  'visit:device': { key: 'device', dimension: 'device' },
  'visit:os': { key: 'os', dimension: 'os' },
  'visit:source': { key: 'source', dimension: 'source' },
};

export interface WebsiteRef {
  id: string;
  timezone: string;
}

function filtersApplied(filters: readonly Filter[]) {
  return filters.map((f) => ({ key: f.key, operator: f.operator, values: f.values }));
}

function periodMeta(p: ResolvedPeriod, filters: readonly Filter[]) {
  return {
    period: p.period,
    period_start: new Date(p.start).toISOString(),
    period_end: new Date(p.end).toISOString(),
    filters_applied: filtersApplied(filters),
    ...(filters.length ? { note: V1_FILTER_NOTE } : {}),
  };
}

/** What is computed for the requested metrics under v1 rules (events comes from pageviews). */
function computed(metrics: readonly Metric[], filtered: boolean): Metric[] {
  if (filtered) return metrics.includes('visitors') ? ['visitors'] : [];
  return [...new Set(metrics.map((m) => (m === 'events' ? 'pageviews' : m)))];
}

function present(metrics: readonly Metric[], values: MetricValues | undefined, filtered: boolean): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const m of metrics) {
    if (filtered && m !== 'visitors') out[m] = null;
    else out[m] = (m === 'events' ? values?.pageviews : values?.[m]) ?? 0;
  }
  return out;
}

export async function statsV1(clickhouse: ClickHouseClient, website: WebsiteRef, endpoint: StatsEndpoint, params: StatsParams) {
  const anchor = params.date ?? today(website.timezone);
  const period = resolvePeriod(params.period, anchor, website.timezone) as ResolvedPeriod; // syntax checked already
  const filtered = params.filters.length > 0;
  const base = { websiteId: website.id, timeZone: website.timezone, start: period.start, end: period.end, filters: params.filters };

  if (endpoint === 'aggregate') {
    const metrics = computed(params.metrics, filtered);
    const [row] = metrics.length ? await runStats(clickhouse, { ...base, metrics }) : [];
    const values = present(params.metrics, row?.values, filtered);
    return {
      results: Object.fromEntries(Object.entries(values).map(([m, value]) => [m, { value }])),
      meta: periodMeta(period, params.filters),
    };
  }

  if (endpoint === 'timeseries') {
    const metrics = computed(params.metrics, filtered);
    const dimension = `time:${params.interval}` as Dimension;
    const rows = metrics.length ? await runStats(clickhouse, { ...base, metrics, dimension }) : [];
    const byKey = new Map(rows.map((r) => [r.key, r.values]));
    return {
      results: bucketLabels(period, params.interval, website.timezone).map((date) => ({
        date,
        ...present(params.metrics, byKey.get(date), filtered),
      })),
      meta: { ...periodMeta(period, params.filters), interval: params.interval },
    };
  }

  // breakdown: sorted by visitors (always computed for the order), ties by the value ascending
  const property = PROPERTY_KEYS[params.property!];
  const metrics = [...new Set<Metric>(['visitors', ...computed(params.metrics, filtered)])];
  // A breakdown row names a value: events without one (no page, no geo) are not a row.
  const rows = (await runStats(clickhouse, { ...base, metrics, dimension: property.dimension })).filter((r) => r.key !== '');
  rows.sort((a, b) => (b.values.visitors ?? 0) - (a.values.visitors ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const offset = (params.page - 1) * params.limit;
  const pageRows: StatsRow[] = rows.slice(offset, offset + params.limit);
  return {
    results: pageRows.map((r) => ({ [property.key]: r.key, ...present(params.metrics, r.values, filtered) })),
    meta: {
      period: period.period,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      property: params.property,
      filters_applied: filtersApplied(params.filters),
      ...(filtered ? { note: V1_FILTER_NOTE } : {}),
      pagination: { page: params.page, limit: params.limit, total: rows.length, has_more: offset + pageRows.length < rows.length },
    },
  };
}
