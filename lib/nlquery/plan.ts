// The query plan of a natural-language question (issue 27, DESIGN "Natural-language questions"): a typed,
// bounded description of one stats question that lib/stats answers. The interpreter (and, later, the LLM
// worker) only ever fills this; nothing in it is pasted into SQL, and the website is never part of it.
import { z } from '../zod';

export const PLAN_INTENTS = [
  'total',
  'comparison',
  'breakdown',
  'trend',
  'conversions',
  'revenue',
  'realtime',
] as const;
export const PLAN_METRICS = [
  'visitors',
  'visits',
  'pageviews',
  'bounce_rate',
  'visit_duration',
  'events',
  'conversions',
  'conversion_rate',
  'revenue',
] as const;
export const PLAN_DIMENSIONS = [
  'page',
  'entry_page',
  'exit_page',
  'country',
  'browser',
  'device',
  'os',
  'source',
  'channel',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'goal',
  'event',
] as const;
export const PLAN_FILTER_KEYS = [
  'page',
  'country',
  'browser',
  'device',
  'os',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'goal',
  'event',
] as const;
/** The spec's four ranges plus calendar ones a question names ("yesterday", "last month"). */
export const PLAN_RANGES = [
  '24h',
  'today',
  'yesterday',
  '7d',
  '30d',
  '90d',
  '1y',
  'this_week',
  'last_week',
  'this_month',
  'last_month',
] as const;
export const PLAN_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export const RESULT_TYPES = ['table', 'number', 'timeseries', 'list'] as const;
export const COMPARE_TO = ['previous_period', 'previous_year'] as const;
export const MAX_PLAN_LIMIT = 100;

export const planFilter = z.object({
  key: z.enum(PLAN_FILTER_KEYS),
  operator: z.enum(['is', 'is_not', 'contains']),
  value: z.string().min(1).max(200),
});

export const queryPlan = z
  .object({
    intent: z.enum(PLAN_INTENTS),
    metrics: z.array(z.enum(PLAN_METRICS)).min(1).max(3),
    dimension: z.enum(PLAN_DIMENSIONS).nullable(),
    filters: z.array(planFilter).max(5),
    range: z.enum(PLAN_RANGES),
    compare_to: z.enum(COMPARE_TO).nullable(),
    interval: z.enum(PLAN_INTERVALS).nullable(),
    limit: z.number().int().min(1).max(MAX_PLAN_LIMIT),
    result: z.enum(RESULT_TYPES),
  })
  .strict();
export type QueryPlan = z.infer<typeof queryPlan>;
export type PlanFilter = z.infer<typeof planFilter>;
export type PlanMetric = (typeof PLAN_METRICS)[number];
export type PlanDimension = (typeof PLAN_DIMENSIONS)[number];
export type PlanRange = (typeof PLAN_RANGES)[number];
