// The declarative stats query model (DESIGN §2 rule 5): what a question asks — website, time range, metrics,
// one optional dimension, filters — and the rows it answers. Where each part is read from is decided in
// plan.ts, the statement built in sql/, and run.ts runs it.

import type { GoalKind } from '../accounts/schemas';
import type { ConversionFilter, ConversionKey, ConversionMetric, FilterClause, Metric } from './params';

/** A breakdown or time dimension; the column behind each is fixed in sql/, never taken from a request. */
export type Dimension =
  | 'time:day'
  | 'time:hour'
  | 'time:month'
  | 'time:week'
  | 'page'
  | 'country'
  | 'browser'
  | 'device'
  | 'os'
  | 'source'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'entry_page'
  | 'exit_page'
  | RawVisitKey;

/**
 * The Stats API's metrics plus two the External API reads: `visits` (sessions that began in the range or
 * bucket) and `value_score` (the mean value score of those visits, DESIGN §3; by page: of the visits that
 * viewed the page).
 */
export type ModelMetric = Metric | 'visits' | 'value_score' | 'views_per_visit' | 'time_on_page' | ConversionMetric;

export interface StatsQuery {
  websiteId: string;
  timeZone: string;
  /** [start, end) as UTC instants (ms). */
  start: number;
  end: number;
  metrics: readonly ModelMetric[];
  filters: readonly FilterClause[];
  dimension?: Dimension;
  /** With a time dimension: also the whole range's row, keyed '' (one read of the data for both). */
  total?: boolean;
  /**
   * With a breakdown dimension: only these values are computed and returned (e.g. a second metric for the
   * rows a first query ranked), and the raw and rollup reads skip the other values' rows.
   */
  keys?: readonly string[];
}

/** The part of a query that says which rows it reads, without what it computes from them. */
export type RangeQuery = Pick<StatsQuery, 'websiteId' | 'timeZone' | 'start' | 'end' | 'filters'>;

export type MetricValues = Partial<Record<ModelMetric, number>>;
export interface StatsRow {
  key: string;
  values: MetricValues;
}

/** Dimensions whose event metrics several breakdowns can share one pass for. */
export type EventDimension =
  | 'country'
  | 'device'
  | 'browser'
  | 'os'
  | 'source'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign';

/** [start, end) instants (ms) read from the raw tables; a query reads one or two of them. */
export interface Window {
  start: number;
  end: number;
}

/**
 * Keys a visit's first pageview decides (DESIGN §3 Source): every event of a session counts under its visit's
 * value (a pageview reached from inside the site has no source of its own, a server event no browser), in
 * filters, breakdowns and metrics alike; '' when the session has no pageview. An event without a session
 * keeps its own value. Every filter key but the page is one (docs/api.md).
 */
export const VISIT_KEYS = [
  'country',
  'browser',
  'device',
  'os',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
] as const;
/**
 * Visit keys the rollups do not hold (neither daily rows nor visit_values): a query that uses one in its
 * dimension or any filter reads raw events (plan.ts usesRawOnly). The channel and referrer are derived at
 * query time from the visit's source, utm values and referrer (channel.ts); city and region are the
 * first pageview's (sessions' visit_* columns, migration 017).
 */
export const RAW_VISIT_KEYS = ['channel', 'referrer', 'city', 'region'] as const;
export type RawVisitKey = (typeof RAW_VISIT_KEYS)[number];
export type VisitKey = (typeof VISIT_KEYS)[number] | RawVisitKey;
export const isVisitKey = (key: string): key is VisitKey =>
  (VISIT_KEYS as readonly string[]).includes(key) || (RAW_VISIT_KEYS as readonly string[]).includes(key);
export const isRawVisitKey = (key: string | undefined): key is RawVisitKey =>
  (RAW_VISIT_KEYS as readonly string[]).includes(key ?? '');

/** What a goal matches (its row in PostgreSQL, lib/accounts/goals.ts). */
export interface GoalDefinition {
  name: string;
  kind: GoalKind;
  path: string | null;
}

/**
 * A question about conversions: who completed which goals, custom events by name or property, and what
 * purchases brought. Read from the raw events (the rollups hold no event names or properties) but for page
 * goals over rolled-up days; the page and visit-key filters mean what they mean in a StatsQuery.
 */
export interface ConversionQuery extends RangeQuery {
  metrics: readonly ConversionMetric[];
  conversionFilters: readonly ConversionFilter[];
  /** A conversion key, or a time, page or visit-key dimension of the conversions. */
  dimension?: ConversionKey | Dimension;
  /** The website's goals, in their order (names and what each matches). */
  goals: readonly GoalDefinition[];
  /** The website's revenue currency: revenue sums the purchases in it. */
  currency: string;
}
