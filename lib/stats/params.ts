// Stats API v1 parameters (spec "Stats API", DESIGN §3): one error code per failing request, checked in the
// documented order — site_id, period, metrics, property, metric names, property name, period value, custom
// syntax, custom length, interval, then limit/page and filters. A parameter given twice is refused first.

import { UUID } from '../checks';
import { regexError } from './patterns';
import {
  checkPeriod,
  DATE_RANGE_TEXT,
  FIRST_DATE,
  INTERVALS,
  type Interval,
  intervalAllowed,
  MAX_CUSTOM_DAYS,
  PERIODS,
  type PeriodError,
  previousPeriod,
  resolvePeriod,
  V2_INTERVALS,
  withinSupportedDates,
} from './period';
import { type LocalDate, parseDate } from './time';

const PERIOD_MESSAGES: Record<PeriodError, string> = {
  INVALID_PERIOD: `period must be one of ${PERIODS.join(', ')} or custom:YYYY-MM-DD,YYYY-MM-DD`,
  INVALID_CUSTOM_PERIOD: `custom periods are custom:YYYY-MM-DD,YYYY-MM-DD with real dates from ${DATE_RANGE_TEXT}, start not after end`,
  PERIOD_TOO_LONG: `a custom period covers at most ${MAX_CUSTOM_DAYS} days`,
};

export const METRICS = ['visitors', 'pageviews', 'visit_duration', 'bounce_rate', 'events'] as const;
/** Metrics of conversion questions (model.ts ConversionQuery); revenue is in the website's currency. */
export const CONVERSION_METRICS = [
  'visitors',
  'events',
  'conversion_rate',
  'total_revenue',
  'average_revenue',
] as const;
export type ConversionMetric = (typeof CONVERSION_METRICS)[number];
/**
 * Event-level keys of conversion questions (issue 22): the goal an event completes, a custom event's name and
 * its custom properties (`props:<key>`). Each is the event's own, never the visit's (DESIGN §3).
 */
export type ConversionKey = 'goal' | 'name' | `props:${string}`;

export interface ConversionFilter {
  key: ConversionKey;
  operator: 'is' | 'is_not' | 'contains';
  values: string[];
}

/** A property key: letters, digits and `_ . - :`, up to 64 characters (refused otherwise, never pasted into SQL). */
export const PROP_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;
export type Metric = (typeof METRICS)[number];
/** v2 adds visits (sessions), views per visit, time on page and the conversion metrics (goals, revenue). */
export const V2_METRICS = [
  ...METRICS,
  'visits',
  'views_per_visit',
  'time_on_page',
  ...CONVERSION_METRICS.filter((m) => !(METRICS as readonly string[]).includes(m)),
];
export type V2Metric = Metric | 'visits' | 'views_per_visit' | 'time_on_page' | ConversionMetric;

export const PROPERTIES = [
  'event:page',
  'visit:country',
  'visit:browser',
  'visit:device',
  'visit:os',
  'visit:source',
] as const;
/** v2 adds campaign and entry/exit page breakdowns. */
export const V2_PROPERTIES = [
  ...PROPERTIES,
  'visit:utm_source',
  'visit:utm_medium',
  'visit:utm_campaign',
  'visit:entry_page',
  'visit:exit_page',
  'visit:channel',
  'visit:referrer',
  'visit:city',
  'visit:region',
  'event:goal',
  'event:name',
] as const;
/** v2 also breaks down by a custom property: `event:props:<key>` (model.ts PROP_KEY). */
export type Property = (typeof V2_PROPERTIES)[number] | `event:props:${string}`;
export type StatsVersion = 'v1' | 'v2';

export const FILTER_KEYS = [
  'country',
  'browser',
  'device',
  'os',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'page',
] as const;
/** v2 filters also on the visit keys the rollups do not hold (model.ts RAW_VISIT_KEYS). */
export const V2_FILTER_KEYS = [...FILTER_KEYS, 'channel', 'referrer', 'city', 'region'] as const;
export type FilterKey = (typeof V2_FILTER_KEYS)[number];

/** v1 has is and is_not; the rest are v2 only (JSON filters). matches: RE2 via ClickHouse match(). */
export const FILTER_OPERATORS = ['is', 'is_not', 'contains', 'contains_not', 'matches', 'matches_not'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** One filter clause on one key. */
export interface Filter {
  key: FilterKey;
  operator: FilterOperator;
  values: string[];
}

/** v2 groups of clauses: any of them (`or`), all of them (`and`), or not the one clause (`not`). */
export type FilterGroup =
  | { operator: 'or' | 'and'; clauses: FilterClause[] }
  | { operator: 'not'; clauses: [FilterClause] };
/** A top-level filter list ANDs its clauses. */
export type FilterClause = Filter | FilterGroup;
export const isFilterGroup = (c: FilterClause): c is FilterGroup => !('key' in c);
/** Every clause on a key, however deep in groups. */
export const filterLeaves = (clauses: readonly FilterClause[]): Filter[] =>
  clauses.flatMap((c) => (isFilterGroup(c) ? filterLeaves(c.clauses) : [c]));
/** Groups nest at most this deep (a group at the top is depth 1). */
export const MAX_FILTER_DEPTH = 3;
/** v2 JSON filter keys of conversions: `goal`, `name` (a custom event's) and `props:<key>`. */
function conversionKey(key: string): ConversionKey | StatsParamError | undefined {
  if (key === 'goal' || key === 'name') return key;
  if (!key.startsWith('props:')) return undefined;
  if (!PROP_KEY.test(key.slice('props:'.length)))
    return {
      code: 'INVALID_PROPERTY_KEY',
      message: 'a property key is 1 to 64 letters, digits or _ . - : characters',
    };
  return key as ConversionKey;
}

export type StatsEndpoint = 'aggregate' | 'timeseries' | 'breakdown';

export interface StatsParams {
  siteId: string;
  period: string;
  /** The anchor date; undefined = today in the website's time zone. */
  date?: LocalDate;
  metrics: V2Metric[];
  property?: Property;
  interval: Interval;
  limit: number;
  page: number;
  filters: FilterClause[];
  /** v2: filters on goals, custom event names and properties. */
  conversionFilters: ConversionFilter[];
  /** v2, aggregate: also compute the period before (previousPeriod in period.ts). */
  compare?: 'previous_period';
}

export interface StatsParamError {
  code: string;
  message: string;
}

function fail(code: string, message: string): { error: StatsParamError } {
  return { error: { code, message } };
}

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The query parameters the Stats endpoints read; each may be given once. */
const PARAMETERS = [
  'site_id',
  'period',
  'date',
  'metrics',
  'property',
  'interval',
  'limit',
  'page',
  'filters',
  'compare',
] as const;

function positiveInt(
  raw: string | undefined,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number | StatsParamError {
  if (raw === undefined) return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    return { code: 'VALIDATION_ERROR', message: `${name} must be a whole number from ${min} to ${max}` };
  }
  return Number(raw);
}

/** Parses the filter grammar: `;` joins clauses; `key==value`, `key==v1,v2` (one of), `key!=value`. */
export function parseFilters(raw: string): Filter[] | StatsParamError {
  const filters: Filter[] = [];
  for (const clause of raw.split(';')) {
    if (clause.trim() === '') continue;
    const m = /^([^=!]*)(==|!=)(.*)$/.exec(clause);
    if (!m) return { code: 'VALIDATION_ERROR', message: `filter "${clause.slice(0, 50)}" has no operator (== or !=)` };
    const key = m[1].trim();
    if (!(FILTER_KEYS as readonly string[]).includes(key)) {
      return {
        code: 'UNKNOWN_FILTER_KEY',
        message: `unknown filter key "${key.slice(0, 50)}"; use one of ${FILTER_KEYS.join(', ')}`,
      };
    }
    const values = m[3].split(',').map((v) => v.trim());
    if (values.some((v) => v === ''))
      return { code: 'EMPTY_FILTER_VALUE', message: `filter ${key} has an empty value` };
    filters.push({ key: key as FilterKey, operator: m[2] === '==' ? 'is' : 'is_not', values });
  }
  return filters;
}

/**
 * v2 JSON filters: `[["is","country",["US","DE"]],["is_not","browser",["Chrome"]],["contains","page",["/blog"]]]`,
 * and groups `["or", [clause, …]]`, `["and", [clause, …]]`, `["not", clause]` nested up to MAX_FILTER_DEPTH.
 * Top-level filters on conversion keys go to `conversions` when given (else their keys are unknown).
 */
export function parseJsonFilters(raw: string, conversions?: ConversionFilter[]): FilterClause[] | StatsParamError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { code: 'VALIDATION_ERROR', message: 'filters is not valid JSON' };
  }
  if (!Array.isArray(parsed) || parsed.length > 20)
    return {
      code: 'VALIDATION_ERROR',
      message: 'filters must be an array of at most 20 [operator, key, values] clauses',
    };
  let count = 0;
  const clause = (c: unknown, depth: number): FilterClause | StatsParamError | null => {
    if (++count > 50) return { code: 'VALIDATION_ERROR', message: 'filters hold at most 50 clauses and groups' };
    if (Array.isArray(c) && (c[0] === 'or' || c[0] === 'and' || c[0] === 'not')) {
      if (depth >= MAX_FILTER_DEPTH)
        return { code: 'FILTER_TOO_DEEP', message: `filter groups nest at most ${MAX_FILTER_DEPTH} deep` };
      const inner = c[0] === 'not' ? [c[1]] : c[1];
      if (c.length !== 2 || !Array.isArray(inner) || inner.length === 0 || inner.length > 20) {
        return {
          code: 'VALIDATION_ERROR',
          message: 'a filter group is ["or", [clauses]], ["and", [clauses]] (1 to 20) or ["not", clause]',
        };
      }
      const clauses: FilterClause[] = [];
      for (const x of inner) {
        const parsedClause = clause(x, depth + 1); // never null: no conversion key inside a group
        if (parsedClause === null || 'code' in parsedClause) return parsedClause;
        clauses.push(parsedClause);
      }
      return c[0] === 'not' ? { operator: 'not', clauses: [clauses[0]] } : { operator: c[0] as 'or' | 'and', clauses };
    }
    return leaf(c, depth, conversions);
  };
  const filters: FilterClause[] = [];
  for (const c of parsed) {
    const parsedClause = clause(c, 0);
    if (parsedClause === null) continue; // taken by `conversions`
    if ('code' in parsedClause) return parsedClause;
    filters.push(parsedClause);
  }
  return filters;
}

/** One `[operator, key, [values]]` clause; a top-level one on a conversion key goes to `conversions` (null). */
function leaf(
  clause: unknown,
  depth: number,
  conversions: ConversionFilter[] | undefined,
): Filter | StatsParamError | null {
  if (
    !Array.isArray(clause) ||
    clause.length !== 3 ||
    !(FILTER_OPERATORS as readonly unknown[]).includes(clause[0]) ||
    typeof clause[1] !== 'string'
  ) {
    return {
      code: 'VALIDATION_ERROR',
      message: `each filter is [operator (${FILTER_OPERATORS.join(', ')}), key, [values]] or a group (or, and, not)`,
    };
  }
  const [operator, key, values] = clause as [FilterOperator, string, unknown];
  const conversion = conversions ? conversionKey(key) : undefined;
  if (conversion !== undefined && typeof conversion !== 'string') return conversion;
  if (conversion !== undefined && (depth > 0 || !['is', 'is_not', 'contains'].includes(operator))) {
    return {
      code: 'VALIDATION_ERROR',
      message: `filters on ${key.slice(0, 50)} take is, is_not or contains, outside groups`,
    };
  }
  if (conversion === undefined && !(V2_FILTER_KEYS as readonly string[]).includes(key)) {
    return {
      code: 'UNKNOWN_FILTER_KEY',
      message: `unknown filter key "${key.slice(0, 50)}"; use one of ${V2_FILTER_KEYS.join(', ')}`,
    };
  }
  if (Array.isArray(values) && values.length === 0)
    return { code: 'EMPTY_FILTER_VALUE', message: `filter ${key} has no value` };
  if (!Array.isArray(values) || values.length > 100 || values.some((v) => typeof v !== 'string' || v.length > 500)) {
    return { code: 'VALIDATION_ERROR', message: `filter ${key} needs 1 to 100 string values` };
  }
  if ((values as string[]).some((v) => v.trim() === ''))
    return { code: 'EMPTY_FILTER_VALUE', message: `filter ${key} has an empty value` };
  if (operator === 'matches' || operator === 'matches_not') {
    for (const v of values as string[]) {
      const why = regexError(v);
      if (why) return { code: 'INVALID_REGEX', message: `filter ${key}: ${why}` };
    }
  }
  if (conversion) {
    conversions?.push({
      key: conversion,
      operator: operator as ConversionFilter['operator'],
      values: values as string[],
    });
    return null;
  }
  return { key: key as FilterKey, operator, values: values as string[] };
}

/** Whether the local dates a period anchored at `date` covers (and the period before, for compare) are supported
 *  ones (period.ts FIRST_DATE, LAST_DATE). Without a date the anchor is today, well inside the range; a custom
 *  period's own dates were checked with its syntax, the period before it is checked here. */
function anchoredWithin(period: string, date: LocalDate | undefined, compare: boolean): boolean {
  const custom = period.startsWith('custom:');
  if (!date && !custom) return true;
  if (custom && !compare) return true;
  const resolved = resolvePeriod(period, date ?? FIRST_DATE, 'UTC'); // dates only: the zone does not move them
  if ('error' in resolved) return true; // refused by checkPeriod already
  const first = compare ? previousPeriod(resolved, 'UTC').first : resolved.first;
  return withinSupportedDates(first, resolved.last);
}

/** Validates a request's query string for one endpoint (v1 by default; v2 widens filters, properties, compare). */
export function parseStatsParams(
  query: Record<string, unknown>,
  endpoint: StatsEndpoint,
  version: StatsVersion = 'v1',
): StatsParams | { error: StatsParamError } {
  // A parameter given twice (or as a nested object) is refused before anything else: reading one of the
  // copies would answer a question the client may not have asked (say, without its filters).
  const repeated = PARAMETERS.find((name) => query[name] !== undefined && typeof query[name] !== 'string');
  if (repeated) return fail('VALIDATION_ERROR', `${repeated} must be given once, as a plain value`);
  const siteId = single(query.site_id);
  const period = single(query.period);
  const metricsRaw = single(query.metrics);
  const propertyRaw = single(query.property);

  if (!siteId) return fail('MISSING_SITE_ID', 'site_id is required');
  if (!UUID.test(siteId)) return fail('VALIDATION_ERROR', 'site_id must be a website UUID');
  if (!period) return fail('MISSING_PERIOD', 'period is required');
  if (!metricsRaw) return fail('MISSING_METRICS', 'metrics is required');
  if (endpoint === 'breakdown' && !propertyRaw) return fail('MISSING_PROPERTY', 'property is required');

  const metrics = metricsRaw.split(',').map((m) => m.trim());
  const known: readonly string[] = version === 'v2' ? V2_METRICS : METRICS;
  const badMetric = metrics.find((m) => !known.includes(m));
  if (badMetric !== undefined)
    return fail('INVALID_METRIC', `unknown metric "${badMetric.slice(0, 50)}"; use ${known.join(', ')}`);
  const properties: readonly string[] = version === 'v2' ? V2_PROPERTIES : PROPERTIES;
  const propsKey = version === 'v2' && propertyRaw?.startsWith('event:props:') ? propertyRaw.slice(12) : undefined;
  if (endpoint === 'breakdown' && propsKey === undefined && !properties.includes(propertyRaw!)) {
    return fail(
      'INVALID_PROPERTY',
      `property must be one of ${properties.join(', ')}${version === 'v2' ? ', event:props:<key>' : ''}`,
    );
  }
  if (endpoint === 'breakdown' && propsKey !== undefined && !PROP_KEY.test(propsKey))
    return fail('INVALID_PROPERTY_KEY', 'a property key is 1 to 64 letters, digits or _ . - : characters');

  const periodError = checkPeriod(period);
  if (periodError) return fail(periodError, PERIOD_MESSAGES[periodError]);

  const dateRaw = single(query.date);
  const date = dateRaw === undefined ? undefined : parseDate(dateRaw.slice(0, 10));
  if (dateRaw !== undefined && (!date || !/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(dateRaw))) {
    return fail('VALIDATION_ERROR', 'date must be an ISO 8601 date (YYYY-MM-DD)');
  }
  if (!anchoredWithin(period, date, false))
    return fail('VALIDATION_ERROR', `date: the period must lie within ${DATE_RANGE_TEXT}`);

  const intervalRaw = endpoint === 'timeseries' ? (single(query.interval) ?? 'day') : 'day';
  const intervals: readonly string[] = version === 'v2' ? V2_INTERVALS : INTERVALS;
  if (!intervals.includes(intervalRaw))
    return fail('VALIDATION_ERROR', `interval must be one of ${intervals.join(', ')}`);
  const interval = intervalRaw as Interval;
  if (!intervalAllowed(interval, period)) {
    return fail(
      'INTERVAL_PERIOD_MISMATCH',
      interval === 'hour'
        ? 'interval hour needs period day'
        : interval === 'week'
          ? 'interval week needs a period longer than a day'
          : 'interval month needs period month, 6mo, 12mo or custom',
    );
  }

  const limit = endpoint === 'breakdown' ? positiveInt(single(query.limit), 'limit', 1, 1000, 100) : 100;
  if (typeof limit !== 'number') return { error: limit };
  const page = endpoint === 'breakdown' ? positiveInt(single(query.page), 'page', 1, 1_000_000, 1) : 1;
  if (typeof page !== 'number') return { error: page };

  const filtersRaw = single(query.filters);
  const conversionFilters: ConversionFilter[] = [];
  const filters =
    filtersRaw === undefined
      ? []
      : version === 'v2' && filtersRaw.trim().startsWith('[')
        ? parseJsonFilters(filtersRaw, conversionFilters)
        : parseFilters(filtersRaw);
  if (!Array.isArray(filters)) return { error: filters };

  const compareRaw = version === 'v2' ? single(query.compare) : undefined;
  if (compareRaw !== undefined && compareRaw !== 'previous_period')
    return fail('VALIDATION_ERROR', 'compare must be previous_period');
  if (compareRaw !== undefined && endpoint !== 'aggregate')
    return fail('VALIDATION_ERROR', 'compare is available on aggregate only');
  if (compareRaw !== undefined && !anchoredWithin(period, date, true)) {
    return fail('VALIDATION_ERROR', `date: the period compared with must lie within ${DATE_RANGE_TEXT}`);
  }

  return {
    siteId: siteId.toLowerCase(),
    period,
    date,
    metrics: [...new Set(metrics)] as V2Metric[],
    property: propertyRaw as Property | undefined,
    interval,
    limit,
    page,
    filters,
    conversionFilters,
    ...(compareRaw ? { compare: 'previous_period' as const } : {}),
  };
}
