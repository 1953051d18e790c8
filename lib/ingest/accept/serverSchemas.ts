// Shapes of server-side ingestion (spec "Server event", "Ingest result", DESIGN §3 "Ingestion decisions").
import { text } from '../../accounts/storable';
import { z } from '../../zod';

export const EVENT_TYPES = ['pageview', 'event', 'identify', 'goal', 'purchase'] as const;
export type ServerEventType = (typeof EVENT_TYPES)[number];

export const CONSENT_VALUES = ['opt-in', 'opt-out', 'unknown'] as const;
export const PAYMENT_PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy', 'server'] as const;
export const MAX_EVENTS = 1000;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
export const MAX_PROPS_BYTES = 32 * 1024;
/** Levels of objects and arrays in props, props itself the first: custom properties may nest a little, not
 *  thousands deep (serialising that overflows the stack, which made it an internal_error). */
export const MAX_PROPS_DEPTH = 8;
export const TS_SKEW_MS = 24 * 3600 * 1000;

export const REJECTION_REASONS = [
  'gpc_opted_out',
  'consent_opted_out',
  'invalid_consent',
  'invalid_ts',
  'invalid_event_type',
  'invalid_idempotency_key',
  'invalid_visitor_id',
  'invalid_session_id',
  'invalid_props',
  'unknown_goal',
  'invalid_payment_provider',
  'internal_error',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** The request envelope; events stay unknown here because each is judged on its own, in order. */
export const ingestBatchSchema = z.object({
  trackingCode: text().min(1).max(64), // looked up in PostgreSQL
  events: z
    .array(z.unknown())
    .min(1, 'must hold at least 1 event')
    .max(MAX_EVENTS, `must hold at most ${MAX_EVENTS} events`),
  serverContext: z
    .object({
      clientIp: z.string().max(64).optional(),
      userAgent: z.string().max(1024).optional(),
      acceptLanguage: z.string().max(256).optional(),
    })
    .optional(),
});
export type IngestBatch = z.infer<typeof ingestBatchSchema>;

export const ingestErrorSchema = z.object({
  index: z.number().int(),
  reason: z.enum(REJECTION_REASONS),
  message: z.string(),
});
export const ingestResultSchema = z.object({
  acceptedCount: z.number().int(),
  dedupedCount: z.number().int(),
  rejectedCount: z.number().int(),
  errors: z.array(ingestErrorSchema),
});
export type IngestError = z.infer<typeof ingestErrorSchema>;
export type IngestResult = z.infer<typeof ingestResultSchema>;

const shortText = (max: number) => z.string().max(max);
const optionalText = (max: number) => shortText(max).optional();
const dimension = z.number().int().min(0).max(65535).optional();

/** Props every pageview may carry, filling the same columns as browser data (DESIGN §3). */
const pageviewProps = z.object({
  url: z.string().min(1, 'is required').max(2048),
  referrer: optionalText(2048),
  device_type: optionalText(32),
  browser: optionalText(64),
  os: optionalText(64),
  country_code: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'must be a two-letter ISO code')
    .optional(),
  city: optionalText(128),
  screen_width: dimension,
  screen_height: dimension,
  language: optionalText(35),
  utm_source: optionalText(256),
  utm_medium: optionalText(256),
  utm_campaign: optionalText(256),
  utm_content: optionalText(256),
  utm_term: optionalText(256),
});

const nameProp = z.string().trim().min(1, 'is required').max(200);

const IDENTITY_FIELDS = ['email', 'name', 'customer_id', 'phone', 'company'] as const;
const identifyProps = z
  .object(
    Object.fromEntries(IDENTITY_FIELDS.map((f) => [f, z.string().max(320).optional()])) as Record<
      (typeof IDENTITY_FIELDS)[number],
      z.ZodOptional<z.ZodString>
    >,
  )
  .refine((p) => IDENTITY_FIELDS.some((f) => typeof p[f] === 'string' && p[f]!.trim() !== ''), {
    message: `needs at least one of ${IDENTITY_FIELDS.join(', ')}`,
  });

const purchaseProps = z.object({
  amount: z.number().finite().min(-1e12).max(1e12),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
    .transform((c) => c.toUpperCase())
    .optional(),
  payment_provider: z.string().max(64).optional(),
  status: optionalText(64),
  provider_event_id: optionalText(256),
  customer_email: optionalText(320),
  plan_name: optionalText(256),
});

/** Per type, the props that are checked; anything else in props is kept as custom properties. */
export const PROPS_SCHEMAS = {
  pageview: pageviewProps,
  event: z.object({ name: nameProp }),
  identify: identifyProps,
  goal: z.object({ name: nameProp, value: z.number().finite().min(-1e12).max(1e12).optional() }),
  purchase: purchaseProps,
} as const;

export type PageviewProps = z.infer<typeof pageviewProps>;
export { IDENTITY_FIELDS };
