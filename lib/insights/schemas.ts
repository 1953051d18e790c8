// The insights endpoint's request and response (spec "Insight", External API /insights/{websiteId}): the route
// validates with the request schema, lib/insights/store.ts returns the response type, lib/openapi documents both.
import { queryInt, RANGES, rangeParam } from '../external/schemas';
import { z } from '../zod';

export const INSIGHT_TYPES = ['anomaly', 'trend', 'recommendation', 'prediction'] as const;
export type InsightType = (typeof INSIGHT_TYPES)[number];
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const insightsQuery = z.object({
  range: rangeParam(RANGES),
  type: z
    .enum(INSIGHT_TYPES)
    .optional()
    .openapi({ param: { description: 'Only insights of this type; omitted = all.' } }),
  severity: z
    .enum(SEVERITIES)
    .optional()
    .openapi({ param: { description: 'Only insights of this severity; omitted = all.' } }),
  limit: queryInt('limit', 1, 200, 50, 'Insights per page (1-200, default 50).'),
  offset: queryInt('offset', 0, 100_000_000, 0, 'Insights to skip (default 0).'),
});
export type InsightsQuery = z.infer<typeof insightsQuery>;

export const insight = z
  .object({
    id: z.string(),
    type: z.enum(INSIGHT_TYPES),
    severity: z.enum(SEVERITIES),
    title: z.string(),
    description: z.string().openapi({ description: 'What happened, with the numbers.' }),
    metric_name: z.string().openapi({
      description:
        'visitors, pageviews, bounce_rate, visit_duration, error_rate, goal_conversions, error_visitors, revenue, …',
    }),
    metric_value: z.number(),
    metric_change: z.number().nullable().openapi({
      description:
        'Percent change from the comparison the insight names (previous week, the site as a whole, last month, the expected value); null when that comparison is zero.',
    }),
    recommendation: z.string().openapi({ description: 'What to do about it, in plain language.' }),
    created_at: z.string().datetime().openapi({
      description: 'When the insight became known: the end of the day its data covers, or the anomaly’s detection.',
    }),
  })
  .openapi('Insight');
export type Insight = z.infer<typeof insight>;

export const insightsData = z.object({
  insights: z.array(insight).openapi({ description: 'Newest first; critical before warning before info.' }),
  pagination: z.object({
    total: z.number().int().min(0),
    limit: z.number().int().min(0),
    offset: z.number().int().min(0),
    has_more: z.boolean(),
  }),
});
export type InsightsData = z.infer<typeof insightsData>;
