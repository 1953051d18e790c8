// Ingestion's part of the OpenAPI document: server ingestion (POST /api/v1/events, API key, the bare ingest
// result) and browser ingestion (POST /api/events/{trackingCode} and its aliases, no credentials).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { browserEventSchema, browserIngestResultSchema, trackerConfigSchema } from '../ingest/accept/browserSchemas';
import {
  CONSENT_VALUES,
  EVENT_TYPES,
  ingestBatchSchema,
  ingestResultSchema,
  MAX_EVENTS,
  PROPS_SCHEMAS,
  REJECTION_REASONS,
} from '../ingest/accept/serverSchemas';
import { z } from '../zod';
import { operations, SECURITY } from './common';

const STATUS_TEXT: Record<number, string> = {
  400: 'The body is not JSON or not a valid batch or event (VALIDATION_ERROR); the message names the field. Also a path that is not valid percent-encoded UTF-8 or holds a control character.',
  401: 'Missing or invalid API key (UNAUTHORIZED).',
  403: 'API_PAID_PLAN_REQUIRED for a free-plan team; FORBIDDEN for a site_access key of another website, or a website whose tracking is disabled.',
  404: 'Unknown tracking code, or another team’s (NOT_FOUND).',
  413: 'Request body too large (PAYLOAD_TOO_LARGE).',
  415: 'Content-Encoding other than gzip, deflate or br, or an unsupported charset (UNSUPPORTED_MEDIA_TYPE).',
  429: 'Rate limit or monthly quota exceeded (RATE_LIMITED); see Retry-After.',
  500: 'Server error (INTERNAL_ERROR).',
  503: 'The queue or a backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After with the same idempotency keys.',
};
const PARAMS = { trackingCode: 'The website’s tracking code (tm-…).' };

// Each event of a batch is judged on its own (an invalid one is rejected with a reason, the rest go on), so
// the batch schema leaves events open; the document shows what a valid event looks like.
const serverEvent = z
  .object({
    type: z.enum(EVENT_TYPES),
    ts: z.number().openapi({ description: 'Unix milliseconds, within 24 hours of the server’s clock.' }),
    sessionId: z.string().optional().openapi({ description: 'Required for pageview (UUID) and goal.' }),
    visitorId: z.string().optional().openapi({ description: 'Required for pageview (UUID), identify and goal.' }),
    idempotencyKey: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: 'Recommended: a retried event with the same key is counted once.' }),
    consent: z.enum(CONSENT_VALUES).optional(),
    props: z
      .union(
        Object.values(PROPS_SCHEMAS).map((s) => s.loose()) as unknown as [z.ZodObject, z.ZodObject, ...z.ZodObject[]],
      )
      .openapi({
        description:
          'By type: pageview needs url; event and goal a name; identify one of email, name, customer_id, phone, company; purchase an amount. Further properties are kept as custom properties.',
      }),
  })
  .openapi('ServerEvent');
const serverBatch = ingestBatchSchema.extend({ events: z.array(serverEvent).min(1).max(MAX_EVENTS) });

export function registerIngestion(r: OpenAPIRegistry): void {
  const op = operations(r, STATUS_TEXT, PARAMS);
  op({
    method: 'post',
    path: '/api/v1/events',
    summary: `Server ingestion: a batch of up to ${MAX_EVENTS} events. Answers the bare ingest result (no envelope); each rejected event is listed with its reason (${REJECTION_REASONS.join(', ')}).`,
    tag: 'Ingestion',
    security: SECURITY.apiKey,
    body: serverBatch,
    data: ingestResultSchema.openapi('IngestResult'),
    bare: true,
    errors: [400, 401, 403, 404, 413, 415, 429, 500, 503],
  });

  const event = browserEventSchema.openapi('BrowserEvent');
  const beacon = z.string().openapi({ description: 'The same JSON, as navigator.sendBeacon sends it.' });
  for (const path of ['/api/events/{trackingCode}', '/api/track/{trackingCode}', '/e/{trackingCode}']) {
    op({
      method: 'post',
      path,
      summary: `Browser ingestion: one event from the tracker (public, CORS for any origin).${path === '/api/events/{trackingCode}' ? '' : ' An alias of /api/events/{trackingCode}.'}`,
      tag: 'Ingestion',
      security: SECURITY.public,
      body: event,
      bodyAlso: { 'text/plain': beacon },
      data: browserIngestResultSchema,
      errors: [400, 403, 404, 413, 415, 429, 500, 503],
    });
  }
  op({
    method: 'get',
    path: '/api/events/{trackingCode}/config',
    summary: 'The tracking settings the tracker reads (public, cached for a minute)',
    tag: 'Ingestion',
    security: SECURITY.public,
    data: trackerConfigSchema,
    errors: [400, 404, 500, 503],
  });
}
