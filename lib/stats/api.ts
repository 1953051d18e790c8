// Stats API responses (spec "Stats API"): aggregate, timeseries and breakdown over the query model. v1 keeps
// the spec's V1 limitation — with filters only visitors is computed, other metrics are null and meta.note
// says so — and approximates events by pageviews; v2 computes every metric under any filter, counts events
// truly, and can compare with the previous period.
import type { ClickHouseClient } from '../clickhouse/client';
import { HttpError } from '../errors';
import { runConversions } from './conversions';
import type { Dimension, GoalDefinition, MetricValues, StatsRow } from './model';
import {
  CONVERSION_METRICS,
  type ConversionFilter,
  type ConversionKey,
  type ConversionMetric,
  type FilterClause,
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
export const PROPERTY_KEYS: Record<Exclude<Property, ConversionProperty>, { key: string; dimension: Dimension }> = {
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

type ConversionProperty = 'event:goal' | 'event:name' | `event:props:${string}`;

/** The conversion key a property breaks down by, and its row key (a property's own name), or undefined. */
function conversionProperty(p: Property | undefined): { key: string; dimension: ConversionKey } | undefined {
  if (p === 'event:goal') return { key: 'goal', dimension: 'goal' };
  if (p === 'event:name') return { key: 'name', dimension: 'name' };
  if (p?.startsWith('event:props:')) return { key: p.slice(12), dimension: `props:${p.slice(12)}` };
  return undefined;
}

/** What conversion questions need of a website, read only when one is asked. */
export interface ConversionContext {
  goals: GoalDefinition[];
  currency: string;
}

export interface WebsiteRef {
  id: string;
  timezone: string;
  conversions?: () => Promise<ConversionContext>;
}

type AppliedFilter =
  | { key: string; operator: string; values: string[] }
  | { operator: string; clauses: AppliedFilter[] };

/** The filters as applied: `{key, operator, values}` clauses, groups as `{operator, clauses}`. */
function filtersApplied(filters: readonly (FilterClause | ConversionFilter)[]): AppliedFilter[] {
  return filters.map((f) =>
    'clauses' in f
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

/** Whether a question is about conversions: a goal, custom event or property, or a conversion metric. */
function asksConversions(params: StatsParams): boolean {
  return (
    conversionProperty(params.property) !== undefined ||
    params.conversionFilters.length > 0 ||
    params.metrics.some(
      (m) => (CONVERSION_METRICS as readonly string[]).includes(m) && m !== 'visitors' && m !== 'events',
    )
  );
}

export async function statsResponse(
  clickhouse: ClickHouseClient,
  website: WebsiteRef,
  endpoint: StatsEndpoint,
  statsParams: StatsParams,
  version: StatsVersion,
) {
  if (asksConversions(statsParams)) return conversionResponse(clickhouse, website, endpoint, statsParams);
  // Without conversions every metric is a StatsQuery one.
  const params = statsParams;
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
  const property = PROPERTY_KEYS[params.property as keyof typeof PROPERTY_KEYS];
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

/** Revenue metrics are money: the value (two decimals) and the website's currency. */
function presentConversions(
  metrics: readonly ConversionMetric[],
  values: MetricValues | undefined,
  currency: string,
): Record<string, number | { value: number; currency: string }> {
  return Object.fromEntries(
    metrics.map((m) => {
      const v = values?.[m] ?? 0;
      return [m, m === 'total_revenue' || m === 'average_revenue' ? { value: v, currency } : v];
    }),
  );
}

/**
 * v2 questions about conversions (lib/stats/conversions.ts): metrics visitors, events, conversion_rate,
 * total_revenue, average_revenue; by goal, custom event name or property, or by time, page or visit key
 * with conversion filters. Refused with 400 when a metric is not one of these, a conversion rate has no
 * goal, custom event or property to convert on, or a goal filter names no goal of the website.
 */
async function conversionResponse(
  clickhouse: ClickHouseClient,
  website: WebsiteRef,
  endpoint: StatsEndpoint,
  params: StatsParams,
) {
  const other = params.metrics.find((m) => !(CONVERSION_METRICS as readonly string[]).includes(m));
  if (other)
    throw new HttpError(
      400,
      'METRIC_NOT_SUPPORTED',
      `metric ${other} is not available with goals, custom events or revenue; use ${CONVERSION_METRICS.join(', ')}`,
    );
  const metrics = params.metrics as ConversionMetric[];
  const byConversion = conversionProperty(params.property);
  if (metrics.includes('conversion_rate') && !byConversion && params.conversionFilters.length === 0)
    throw new HttpError(
      400,
      'CONVERSION_RATE_NEEDS_GOAL',
      'conversion_rate needs a goal, custom event or property: filter or break down by one',
    );
  const context = website.conversions ? await website.conversions() : { goals: [], currency: 'USD' };
  const names = new Set(context.goals.map((g) => g.name));
  for (const f of params.conversionFilters) {
    const unknown = f.key === 'goal' && f.operator !== 'contains' && f.values.find((v) => !names.has(v));
    if (unknown) throw new HttpError(400, 'UNKNOWN_GOAL', `no goal named "${unknown.slice(0, 100)}" on this website`);
  }
  const anchor = params.date ?? today(website.timezone);
  const period = resolvePeriod(params.period, anchor, website.timezone) as ResolvedPeriod;
  const base = {
    websiteId: website.id,
    timeZone: website.timezone,
    start: period.start,
    end: period.end,
    filters: params.filters,
    conversionFilters: params.conversionFilters,
    goals: context.goals,
    currency: context.currency,
  };
  const applied = filtersApplied([...params.filters, ...params.conversionFilters]);
  const present = (values: MetricValues | undefined) =>
    presentConversions(params.metrics as ConversionMetric[], values, context.currency);

  if (endpoint === 'aggregate') {
    const [row] = await runConversions(clickhouse, { ...base, metrics });
    const before = params.compare === 'previous_period' ? previousPeriod(period, website.timezone) : undefined;
    const [prev] = before
      ? await runConversions(clickhouse, { ...base, start: before.start, end: before.end, metrics })
      : [];
    return {
      results: Object.fromEntries(
        Object.entries(present(row?.values)).map(([m, value]) => [
          m,
          before
            ? {
                value,
                change: percentChange(
                  row?.values[m as ConversionMetric] ?? 0,
                  prev?.values[m as ConversionMetric] ?? 0,
                ),
              }
            : { value },
        ]),
      ),
      meta: {
        ...periodMeta(period, [], undefined),
        filters_applied: applied,
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
    const dimension = `time:${params.interval}` as Dimension;
    const byKey = new Map(
      (await runConversions(clickhouse, { ...base, metrics, dimension })).map((r) => [r.key, r.values]),
    );
    return {
      results: bucketLabels(period, params.interval, website.timezone).map((date) => ({
        date,
        ...present(byKey.get(date)),
      })),
      meta: { ...periodMeta(period, [], undefined), filters_applied: applied, interval: params.interval },
    };
  }

  const property = byConversion ?? PROPERTY_KEYS[params.property as keyof typeof PROPERTY_KEYS];
  const ranked = [...new Set<ConversionMetric>(['visitors', ...metrics])];
  const rows = (await runConversions(clickhouse, { ...base, metrics: ranked, dimension: property.dimension }))
    .filter((r) => r.key !== '')
    .sort(byMetricDesc('visitors'));
  const offset = (params.page - 1) * params.limit;
  const pageRows = rows.slice(offset, offset + params.limit);
  return {
    results: pageRows.map((r) => ({ [property.key]: r.key, ...present(r.values) })),
    meta: {
      period: period.period,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      property: params.property,
      filters_applied: applied,
      pagination: {
        page: params.page,
        limit: params.limit,
        total: rows.length,
        has_more: offset + pageRows.length < rows.length,
      },
    },
  };
}
