// The spec's webhook events (spec "Events") as they travel from the ingest writer's fan-out to delivery: one
// job on the `webhook-events` queue per event that happened, whose id is the event's key, so a retried or
// regrouped ingest job adds the same job again and BullMQ keeps one. Delivery turns each into one signed POST
// per subscribed webhook.
import { z } from '../zod';

export const WEBHOOK_EVENT_NAMES = [
  'visitor.identified',
  'visitor.high_value',
  'event.tracked',
  'goal.completed',
  'visitor.converted',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const webhookEventJob = z.object({
  websiteId: z.string().uuid(),
  event: z.enum(WEBHOOK_EVENT_NAMES),
  /**
   * Unique per happening and stable across retries: the stored event's id (event.tracked, goal.completed,
   * visitor.identified), the first purchase's id (visitor.converted), or visitor and day (visitor.high_value).
   * BullMQ job ids may not hold ':'.
   */
  key: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^:]+$/),
  /** ISO 8601: when it happened (the event's time). */
  timestamp: z.string(),
  /** The payload's `data`, documented per event in the OpenAPI document's webhooks section. */
  data: z.record(z.string(), z.unknown()),
  /** For event.tracked subscriptions filtered by event name: the tracked event's name ('' for a pageview). */
  eventName: z.string().optional(),
});
export type WebhookEventJob = z.infer<typeof webhookEventJob>;
