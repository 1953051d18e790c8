// The webhooks API (Bearer JWT, admin) and, in the document's `webhooks` section (OpenAPI 3.1), what Tidemark
// POSTs to a registered receiver for each event (docs/webhooks.md).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { deletedView } from '../accounts/responses';
import { WEBHOOK_EVENT_NAMES } from '../webhooks/events';
import { TEST_EVENT, testEventData, WEBHOOK_DATA } from '../webhooks/payloads';
import {
  createdWebhookView,
  createWebhookBody,
  deliveriesQuery,
  deliveriesView,
  testDeliveryView,
  updateWebhookBody,
  webhookListView,
  webhookOneView,
} from '../webhooks/schemas';
import { z } from '../zod';
import { dashboardErrors as errors, json, jwtOperations } from './common';

const WHEN: Record<string, string> = {
  'visitor.identified': 'A stored identify event identified a visitor.',
  'visitor.high_value': 'A visit’s value score reached 80 (at most once per visitor and day).',
  'event.tracked': 'An event was stored (only for webhooks subscribed to it, filtered by event_names when set).',
  'goal.completed': 'A goal was completed: a goal event, or a pageview matching a page goal.',
  'visitor.converted': 'A visitor’s first succeeded purchase was stored.',
  [TEST_EVENT]: 'POST …/webhooks/{webhookId}/test.',
};

const HEADERS = z.object({
  'X-Tidemark-Event': z.string().openapi({ description: 'The event name, as in the body.' }),
  'X-Tidemark-Delivery': z.string().openapi({ description: 'The delivery id (UUID), the same on every attempt.' }),
  'X-Tidemark-Signature': z.string().openapi({
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the webhook’s secret>.',
  }),
});

export function registerWebhooks(r: OpenAPIRegistry): void {
  const op = jwtOperations(r)('Webhooks');
  const W = '/api/websites/{websiteId}/webhooks';
  // The document shows the default rules (https on a public host); WEBHOOK_ALLOW_PRIVATE also admits http and
  // private hosts, and http is accepted outside production.
  const rules = { allowPrivate: false, production: true };

  op({
    method: 'post',
    path: W,
    summary:
      'Register a webhook (admin): an https URL on a public host, the events it takes, optionally event_names for event.tracked; the signing secret is generated when left out and answered this once',
    body: createWebhookBody(rules),
    data: createdWebhookView,
    status: 201,
    errors: errors([401, 403, 404, 409], true),
  });
  op({
    method: 'get',
    path: W,
    summary: 'The website’s webhooks (admin), without secrets',
    data: webhookListView,
    errors: errors([401, 403, 404]),
  });
  for (const method of ['put', 'patch'] as const) {
    op({
      method,
      path: `${W}/{webhookId}`,
      summary:
        'Change a webhook (admin): given fields replace the stored ones; is_active true turns it on again (also after it was disabled by failures)',
      body: updateWebhookBody(rules),
      data: webhookOneView,
      errors: errors([401, 403, 404], true),
    });
  }
  op({
    method: 'delete',
    path: `${W}/{webhookId}`,
    summary: 'Delete a webhook and its deliveries log (admin)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });
  op({
    method: 'get',
    path: `${W}/{webhookId}/deliveries`,
    summary:
      'The webhook’s deliveries log (admin), newest first: status, attempts, last response status, error and duration',
    query: deliveriesQuery,
    data: deliveriesView,
    errors: errors([401, 403, 404]),
  });
  op({
    method: 'post',
    path: `${W}/{webhookId}/test`,
    summary:
      'Send a signed webhook.test delivery now and answer its outcome (admin); one attempt, logged, not counted against the failure run',
    data: testDeliveryView,
    errors: errors([401, 403, 404]),
  });

  for (const event of [...WEBHOOK_EVENT_NAMES, TEST_EVENT]) {
    const data = event === TEST_EVENT ? testEventData : WEBHOOK_DATA[event as keyof typeof WEBHOOK_DATA];
    r.registerWebhook({
      method: 'post',
      path: event,
      summary: WHEN[event],
      description:
        'POSTed to each subscribed webhook. Answer 2xx within 10 s; anything else (redirects included) is a failed attempt, retried after 1 min, 5 min, 30 min, 1 h, 2 h, 4 h and 8 h.',
      request: {
        headers: HEADERS,
        body: {
          content: json(
            z.object({
              event: z.literal(event),
              timestamp: z.string().openapi({ format: 'date-time', description: 'When the event happened.' }),
              data,
            }),
          ),
        },
      },
      responses: { 200: { description: 'Any 2xx: received.' } },
    });
  }
}
