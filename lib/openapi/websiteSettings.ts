// A website's notification, revenue and domain settings in the OpenAPI document (Bearer JWT).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  domainsBody,
  domainsView,
  notificationsBody,
  notificationsView,
  revenueBody,
  revenueView,
} from '../accounts/settingsSchemas';
import { dashboardErrors as errors, jwtOperations } from './common';

export function registerWebsiteSettings(r: OpenAPIRegistry): void {
  const settings = jwtOperations(r)('Website settings');
  const W = '/api/websites/{websiteId}';

  settings({
    method: 'get',
    path: `${W}/notifications`,
    summary:
      'Notification preferences (viewer): email reports, anomaly alerts, whether a Slack-compatible webhook is set (never its URL); only website_id when none were saved',
    data: notificationsView,
    errors: errors([401, 403, 404]),
  });
  settings({
    method: 'put',
    path: `${W}/notifications`,
    summary:
      'Save notification preferences (editor): upsert; given fields replace the stored ones, the others are kept (defaults on the first save); slack_webhook_url null removes the webhook, which must be https on a public host',
    // The document shows the default rule; WEBHOOK_ALLOW_PRIVATE also admits http and private hosts.
    body: notificationsBody(false),
    data: notificationsView,
    errors: errors([401, 403, 404], true),
  });
  settings({
    method: 'put',
    path: `${W}/revenue`,
    summary:
      'Revenue settings (admin): the payment provider (null clears it) and the ISO 4217 currency revenue is reported in',
    body: revenueBody,
    data: revenueView,
    errors: errors([401, 403, 404], true),
  });
  settings({
    method: 'get',
    path: `${W}/domains`,
    summary:
      'Primary and allowed domains and verification_status (viewer): verified once the tracker reported a page on one of them, unverified until then',
    data: domainsView,
    errors: errors([401, 403, 404]),
  });
  settings({
    method: 'put',
    path: `${W}/domains`,
    summary:
      'Change the primary domain and/or the allowed domains (admin); a new primary domain makes the website unverified again',
    body: domainsBody,
    data: domainsView,
    errors: errors([401, 403, 404], true),
  });
}
