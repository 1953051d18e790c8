// GET /anomalies/{websiteId} (spec "External API" and "Anomaly"): its query and its records, which the route
// validates with, lib/anomalies returns, and lib/openapi documents.
import { ANOMALY_SEVERITIES } from '../accounts/settingsSchemas';
import { ANOMALY_METRICS } from '../anomalies/detect';
import { z } from '../zod';
import { queryInt, RANGES, rangeParam } from './schemas';

export const anomaliesQuery = z.object({
  range: rangeParam(RANGES),
  severity: z
    .enum(ANOMALY_SEVERITIES)
    .optional()
    .openapi({ param: { description: 'Only anomalies of this severity (worst seen while open).' } }),
  metric: z
    .enum(ANOMALY_METRICS)
    .optional()
    .openapi({ param: { description: `Only this metric: ${ANOMALY_METRICS.join(', ')}.` } }),
  resolved: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ param: { description: "'true': resolved ones only; 'false': open ones only; omitted: both." } }),
  limit: queryInt('limit', 1, 200, 50, 'Anomalies per page (1-200, default 50).'),
  offset: queryInt('offset', 0, 100_000_000, 0, 'Anomalies to skip (default 0).'),
});

const isoTime = z.string().datetime();

export const suspectAnnotation = z
  .object({
    id: z.string(),
    type: z.string(),
    message: z.string(),
    occurred_at: isoTime,
  })
  .openapi('SuspectAnnotation');

export const anomaly = z
  .object({
    id: z.string(),
    metric_name: z.enum(ANOMALY_METRICS).openapi({
      description:
        'visitors, pageviews, bounce_rate (%), visit_duration (seconds), error_rate (error events per pageview) or goal_conversions (completions of `goal`), of one UTC hour.',
    }),
    goal: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .openapi({ description: 'The goal of a goal_conversions anomaly; null for the other metrics.' }),
    expected_value: z.number().openapi({
      description: 'The median of the same hour of the week over the 4 previous weeks (the latest hour seen outside).',
    }),
    actual_value: z.number().openapi({ description: 'The value of the latest hour seen outside the band.' }),
    deviation_percentage: z
      .number()
      .min(0)
      .openapi({ description: '|actual − expected| / expected × 100, two decimals (the latest hour seen outside).' }),
    direction: z.enum(['spike', 'drop']),
    severity: z.enum(ANOMALY_SEVERITIES).openapi({
      description: 'The worst band the anomaly reached: info 50–100 %, warning 100–200 %, critical over 200 %.',
    }),
    started_at: isoTime.openapi({ description: 'Start of the first UTC hour outside the band.' }),
    last_seen_at: isoTime.openapi({ description: 'Start of the latest UTC hour outside the band.' }),
    detected_at: isoTime.openapi({ description: 'End of the first hour outside the band, when it could be seen.' }),
    is_resolved: z.boolean().openapi({ description: 'True once the metric was back inside the band for a full hour.' }),
    resolved_at: isoTime.nullable().openapi({ description: 'End of that full hour; null while open.' }),
    suspect_annotations: z.array(suspectAnnotation).openapi({
      description:
        'Annotations of the website within ±2 hours of started_at (changes that may explain it), oldest first.',
    }),
  })
  .openapi('Anomaly');
export type Anomaly = z.infer<typeof anomaly>;

export const anomaliesData = z.object({
  anomalies: z.array(anomaly),
  pagination: z.object({
    total: z.number().int().min(0),
    limit: z.number().int().min(0),
    offset: z.number().int().min(0),
    has_more: z.boolean(),
  }),
});
