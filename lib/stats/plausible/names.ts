// Plausible's Stats API v2 names and the query model's: one table per kind. A Plausible name mapped to
// `undefined` is one Plausible has and the model does not answer yet (a 400 naming it); a name missing from
// a table is not Plausible's at all. Supporting a new one is one line here.
import type { Dimension, ModelMetric } from '../model';
import type { ConversionFilter, ConversionKey, FilterKey } from '../params';

export const METRICS: Record<string, ModelMetric | undefined> = {
  visitors: 'visitors',
  visits: 'visits',
  pageviews: 'pageviews',
  events: 'events',
  bounce_rate: 'bounce_rate',
  visit_duration: 'visit_duration',
  views_per_visit: 'views_per_visit',
  conversion_rate: 'conversion_rate',
  group_conversion_rate: undefined,
  total_revenue: 'total_revenue',
  average_revenue: 'average_revenue',
  time_on_page: 'time_on_page',
  scroll_depth: undefined,
  percentage: undefined,
  exit_rate: undefined,
};

/**
 * Breakdown dimensions (time ones are TIME_DIMENSIONS). `event:props:<key>` is looked up as `event:props:*`,
 * and `props:*` becomes `props:<key>`. Goals, custom event names and properties are conversion keys
 * (lib/stats/conversions.ts).
 */
export const DIMENSIONS: Record<string, Exclude<Dimension, `time:${string}`> | ConversionKey | undefined> = {
  'event:page': 'page',
  'visit:entry_page': 'entry_page',
  'visit:exit_page': 'exit_page',
  'visit:source': 'source',
  'visit:country': 'country',
  'visit:device': 'device',
  'visit:browser': 'browser',
  'visit:os': 'os',
  'visit:utm_source': 'utm_source',
  'visit:utm_medium': 'utm_medium',
  'visit:utm_campaign': 'utm_campaign',
  'visit:utm_content': undefined,
  'visit:utm_term': undefined,
  'visit:referrer': 'referrer',
  'visit:channel': 'channel',
  'visit:region': 'region',
  'visit:city': 'city',
  'visit:country_name': undefined,
  'visit:region_name': undefined,
  'visit:city_name': undefined,
  'visit:browser_version': undefined,
  'visit:os_version': undefined,
  'visit:screen': undefined,
  'visit:entry_page_hostname': undefined,
  'visit:exit_page_hostname': undefined,
  'event:goal': 'goal',
  'event:name': 'name',
  'event:hostname': undefined,
  'event:props:*': 'props:*',
};

/** Time dimensions; `time` picks one from the date range (resolveTime in query.ts). */
export const TIME_DIMENSIONS: Record<string, Extract<Dimension, `time:${string}`> | 'time' | undefined> = {
  time: 'time',
  'time:hour': 'time:hour',
  'time:day': 'time:day',
  'time:month': 'time:month',
  'time:week': 'time:week',
};

/**
 * Filter keys: what a filter on each dimension reads — the dimension's own key, but entry and exit pages
 * (visit values the filters do not take yet), and Plausible's segments.
 */
const filterKey = (key: (typeof DIMENSIONS)[string]): FilterKey | ConversionKey | undefined =>
  key === 'entry_page' || key === 'exit_page' ? undefined : key;

export const FILTER_DIMENSIONS: Record<string, FilterKey | ConversionKey | undefined> = {
  ...Object.fromEntries(Object.entries(DIMENSIONS).map(([name, key]) => [name, filterKey(key)] as const)),
  segment: undefined,
};

// The operators both the model's filters and its conversion filters take (matches and the negated forms are
// the Stats API v2's filters only, not wired here yet).
type Operator = ConversionFilter['operator'];

/** Simple filter operators, and the operator that is their negation (`not` of one), when the model has both. */
export const OPERATORS: Record<string, { model: Operator; negated?: Operator } | undefined> = {
  is: { model: 'is', negated: 'is_not' },
  is_not: { model: 'is_not', negated: 'is' },
  contains: { model: 'contains' },
  contains_not: undefined,
  matches: undefined,
  matches_not: undefined,
  matches_wildcard: undefined,
  matches_wildcard_not: undefined,
  has_done: undefined,
  has_not_done: undefined,
};

/** Logical operators: `and` flattens into the query's filters; `not` negates a simple filter that has a negation. */
export const LOGICAL_OPERATORS: Record<string, 'and' | 'not' | undefined> = { and: 'and', not: 'not', or: undefined };

const PROPS = 'event:props:';

/** The table entry of a name: found (mapped or not yet supported), or unknown. A property's key is put in. */
export function lookup<T>(table: Record<string, T | undefined>, name: string): { known: boolean; value?: T } {
  const prop = name.startsWith(PROPS) && name.length > PROPS.length ? name.slice(PROPS.length) : undefined;
  const key = prop === undefined ? name : `${PROPS}*`;
  if (!Object.hasOwn(table, key)) return { known: false };
  const value = table[key];
  return { known: true, value: prop !== undefined && value === 'props:*' ? (`props:${prop}` as T) : value };
}

/** Whether a mapped dimension or filter key is a conversion key (goal, custom event name, property). */
export const isConversionKey = (key: string): key is ConversionKey =>
  key === 'goal' || key === 'name' || key.startsWith('props:');
