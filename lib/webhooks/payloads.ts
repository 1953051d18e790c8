// The `data` of each webhook event (spec "Events"; the spec fixes visitor.high_value's, the others are decided
// here). The fan-out builds data to match; the OpenAPI document's webhooks section is generated from these.
import { z } from '../zod';
import type { WebhookEventName } from './events';

const props = z.record(z.string(), z.unknown());

export const WEBHOOK_DATA = {
  'visitor.identified': z.object({
    visitor_id: z.string(),
    user_id: z.string().openapi({ description: 'The identified user: customer_id, else email, else the visitor id.' }),
    traits: props.optional().openapi({ description: 'The identify event’s attributes (email, name, company, …).' }),
  }),
  'visitor.high_value': z.object({
    visitor_id: z.string(),
    score: z.number().openapi({ description: 'The visit’s value_score (0–100) when it reached 80.' }),
    current_page: z.string(),
    time_on_site: z.number().openapi({ description: 'Seconds since the visit began.' }),
  }),
  'event.tracked': z.object({
    event_id: z.string(),
    type: z.string().openapi({ description: 'pageview, event, identify, goal or purchase.' }),
    name: z.string().openapi({ description: 'The custom event’s name; empty for a pageview.' }),
    visitor_id: z.string(),
    session_id: z.string(),
    url: z.string().optional(),
    props: props.optional(),
  }),
  'goal.completed': z.object({
    goal_id: z.string(),
    goal_name: z.string(),
    visitor_id: z.string(),
    session_id: z.string(),
    page: z.string().optional(),
    value: z.number().optional(),
  }),
  'visitor.converted': z.object({
    visitor_id: z.string(),
    order_id: z.string().optional().openapi({ description: 'The purchase’s provider_event_id, when it had one.' }),
    amount: z.number(),
    currency: z.string().openapi({ description: 'ISO 4217.' }),
  }),
} satisfies Record<WebhookEventName, z.ZodType>;

/** What POST …/webhooks/:id/test sends: a delivery of its own kind, never one of the five events. */
export const TEST_EVENT = 'webhook.test';
export const testEventData = z.object({
  webhook_id: z.string(),
  website_id: z.string(),
  message: z.string(),
});
