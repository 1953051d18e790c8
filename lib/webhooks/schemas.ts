// Request bodies and views of the webhooks API (DESIGN §3 "Webhooks"; docs/webhooks.md). Unknown fields are
// stripped, every string and array capped. The URL's rules depend on the install (targetUrlProblem).
import { text } from '../accounts/storable';
import { z } from '../zod';
import { WEBHOOK_EVENT_NAMES } from './events';
import { type TargetRules, targetUrlProblem } from './target';

export const MAX_WEBHOOKS_PER_WEBSITE = 20;
const MAX_EVENT_NAMES = 50;
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const;

const events = z
  .array(z.enum(WEBHOOK_EVENT_NAMES))
  .min(1, 'must name at least one event')
  .max(WEBHOOK_EVENT_NAMES.length)
  .transform((list) => [...new Set(list)]);

const eventNames = z
  .array(text().max(200))
  .min(1, 'must name at least one event name (null: every tracked event)')
  .max(MAX_EVENT_NAMES, `may hold at most ${MAX_EVENT_NAMES} names`)
  .transform((list) => [...new Set(list)])
  .nullable()
  .openapi({ description: 'For event.tracked: only events with these names ("" = pageviews); null = all.' });

function url(rules: TargetRules) {
  return text()
    .trim()
    .max(2048)
    .superRefine((value, ctx) => {
      const problem = targetUrlProblem(value, rules);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

export function createWebhookBody(rules: TargetRules) {
  return z.object({
    url: url(rules),
    events,
    secret: text()
      .min(16, 'must be at least 16 characters')
      .max(256)
      .optional()
      .openapi({ description: 'The signing secret; generated (and answered once) when left out.' }),
    event_names: eventNames.optional(),
  });
}

export function updateWebhookBody(rules: TargetRules) {
  return z.object({
    url: url(rules).optional(),
    events: events.optional(),
    event_names: eventNames.optional(),
    is_active: z
      .boolean()
      .optional()
      .openapi({ description: 'true also re-enables a webhook disabled after failures (its failure run restarts).' }),
  });
}
export type CreateWebhookBody = z.infer<ReturnType<typeof createWebhookBody>>;
export type UpdateWebhookBody = z.infer<ReturnType<typeof updateWebhookBody>>;

const isoTime = z.string().openapi({ format: 'date-time' });

export const webhookView = z.object({
  id: z.string().uuid(),
  website_id: z.string().uuid(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_NAMES)),
  event_names: z.array(z.string()).nullable(),
  is_active: z.boolean(),
  failure_streak: z.number().int().openapi({ description: 'Consecutive failed attempts; reset by a success.' }),
  disabled_at: isoTime.nullable().openapi({ description: 'When a run of failures disabled the webhook.' }),
  disabled_reason: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type WebhookView = z.infer<typeof webhookView>;

export const createdWebhookView = z.object({
  webhook: webhookView,
  secret: z.string().openapi({ description: 'The signing secret, shown this once.' }),
});
export const webhookListView = z.object({ webhooks: z.array(webhookView) });
export const webhookOneView = z.object({ webhook: webhookView });

export const deliveryView = z.object({
  id: z.string().uuid().openapi({ description: 'The X-Tidemark-Delivery header, the same on every attempt.' }),
  event: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  response_status: z.number().int().nullable().openapi({ description: 'The last attempt’s HTTP status.' }),
  last_error: z.string().nullable(),
  duration_ms: z.number().int().nullable().openapi({ description: 'The last attempt’s duration.' }),
  created_at: isoTime,
  last_attempt_at: isoTime.nullable(),
  next_attempt_at: isoTime.nullable(),
  completed_at: isoTime.nullable(),
});
export type DeliveryView = z.infer<typeof deliveryView>;

export const deliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(100_000).default(0),
});
export const deliveriesView = z.object({
  deliveries: z.array(deliveryView),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
export const testDeliveryView = z.object({ delivery: deliveryView });
