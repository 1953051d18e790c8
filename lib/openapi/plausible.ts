// The Plausible-compatible query endpoint's part of the OpenAPI document: POST /api/v2/query takes Plausible's
// Stats API v2 body and answers in its shape, bare (no envelope); errors are Plausible's {error} plus a code.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { anomaly } from '../external/anomalySchemas';
import { DIMENSIONS, FILTER_DIMENSIONS, METRICS, OPERATORS, TIME_DIMENSIONS } from '../stats/plausible/names';
import { plausibleQueryBody } from '../stats/plausible/query';
import { z } from '../zod';
import { json, READER_SECURITY } from './common';

const supported = (table: Record<string, unknown>) =>
  Object.entries(table)
    .filter(([, model]) => model !== undefined)
    .map(([name]) => name)
    .join(', ');

const STATUS_TEXT: Record<number, string> = {
  400: 'The query cannot be answered; `error` names the part at fault and `code` the problem (INVALID_QUERY, UNKNOWN_METRIC, UNSUPPORTED_METRIC, UNKNOWN_DIMENSION, UNSUPPORTED_DIMENSIONS, UNKNOWN_FILTER_OPERATOR, UNSUPPORTED_FILTER, INVALID_FILTER, FILTERS_TOO_DEEP, INVALID_DATE_RANGE, INVALID_ORDER_BY, INVALID_PROPERTY_KEY, UNSUPPORTED_INCLUDE, CONVERSION_RATE_NEEDS_GOAL, UNKNOWN_GOAL, AMBIGUOUS_SITE_ID, VALIDATION_ERROR for an unreadable body).',
  401: 'Missing or invalid API key or token, or a share token whose sharing was turned off or password changed since (UNAUTHORIZED).',
  403: 'API_PAID_PLAN_REQUIRED for a free-plan team; FORBIDDEN for a site_access key on another website.',
  404: 'No website with that domain or UUID among the caller’s (NOT_FOUND); with a share token, any website but its own.',
  413: 'Request body too large (PAYLOAD_TOO_LARGE).',
  415: 'Content-Encoding other than gzip, deflate or br (UNSUPPORTED_MEDIA_TYPE).',
  429: 'Per-minute rate limit or monthly quota exceeded (RATE_LIMITED); with a share token, the public per-address limit; see Retry-After.',
  500: 'Server error (INTERNAL_ERROR).',
  503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
};

const plausibleError = z
  .object({ error: z.string(), code: z.string().openapi({ description: 'This API’s error code.' }) })
  .openapi('PlausibleError');

const plausibleResult = z.object({
  results: z.array(
    z.object({
      metrics: z.array(z.union([z.number(), z.object({ value: z.number(), currency: z.string() })])).openapi({
        description:
          'One value per requested metric, in their order; total_revenue and average_revenue as {value, currency} in the website’s currency.',
      }),
      dimensions: z
        .array(z.string())
        .openapi({ description: 'One value per requested dimension, in their order; an unset one is "(not set)".' }),
    }),
  ),
  meta: z.object({
    imports_included: z.boolean().optional(),
    time_labels: z.array(z.string()).optional(),
    total_rows: z.number().int().optional(),
    anomalies: z.array(anomaly).optional().openapi({
      description:
        'Tidemark’s addition for signed-in readers (JWT or session cookie) asking with a time dimension: the website’s anomalies whose hours overlap date_range, oldest first, at most 200, as GET /api/external/v1/anomalies/{websiteId} lists them. Never with an API key or a share token.',
    }),
  }),
  query: z.object({
    site_id: z.string(),
    metrics: z.array(z.string()),
    date_range: z.tuple([z.string(), z.string()]),
    filters: z.array(z.unknown()),
    dimensions: z.array(z.string()),
    order_by: z.array(z.tuple([z.string(), z.enum(['asc', 'desc'])])),
    include: z.record(z.string(), z.boolean()),
    pagination: z.object({ limit: z.number().int(), offset: z.number().int() }),
  }),
});

export function registerPlausibleApi(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'post',
    path: '/api/v2/query',
    tags: ['Plausible-compatible API'],
    security: [...READER_SECURITY, { ShareToken: [] }],
    summary: 'Plausible Stats API v2 query',
    description: [
      'Plausible’s Stats API v2 request and response shapes (docs/api.md lists what differs).',
      `Metrics: ${supported(METRICS)}. Dimensions: ${supported(DIMENSIONS)}, ${supported(TIME_DIMENSIONS)}; one besides time.`,
      `Filters on ${supported(FILTER_DIMENSIONS)} (event:props:<key>) with ${supported(OPERATORS)}, joined by and, negated by not.`,
      'Credentials, rate limits and credits as the Stats API v2; a shared dashboard’s share token reads its own website without credits, under the public per-address limit.',
    ].join(' '),
    request: { body: { content: json(plausibleQueryBody), required: true } },
    responses: {
      200: { description: 'Success', content: json(plausibleResult) },
      ...Object.fromEntries(
        Object.entries(STATUS_TEXT).map(([status, description]) => [
          status,
          { description, content: json(plausibleError) },
        ]),
      ),
    },
  });
}
