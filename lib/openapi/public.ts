// The public endpoints' part of the OpenAPI document (spec "Public endpoints"): widgets and real-time counters
// by tracking code, no credential, CORS for any origin, a per-address limit.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { envelope, errorEnvelope } from '../external/schemas';
import { PUBLIC_LIMIT_PER_MINUTE } from '../public/limit';
import { MIN_PUBLIC_PAGE_VISITORS } from '../public/reads';
import {
  liveData,
  previewWidgetData,
  publicRealtimeData,
  publicStatsData,
  realtimeWidgetData,
  recentWidgetData,
  trackingStatusData,
} from '../public/schemas';
import { z } from '../zod';
import { errorResponses, operations, SECURITY } from './common';

const STATUS_TEXT: Record<number, string> = {
  400: 'A path that is not valid percent-encoded UTF-8 or holds a control character (VALIDATION_ERROR).',
  404: 'Unknown tracking code (NOT_FOUND); for /e/realtime also a website whose public dashboard is off, or a malformed id.',
  429: `More than ${PUBLIC_LIMIT_PER_MINUTE} requests a minute from one address (IPv4, or IPv6 /64) across the public endpoints (RATE_LIMITED); see Retry-After.`,
  500: 'Server error (INTERNAL_ERROR).',
  503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
};
const PARAMS = {
  trackingCode: 'The website’s tracking code (tm-…).',
  websiteId: 'Website UUID.',
};
const TAG = 'Public';
const PAUSED = ' A website whose tracking is paused answers {active: false, message} instead of numbers.';
const cacheHeader = (seconds: number) =>
  z.object({ 'Cache-Control': z.string().openapi({ description: `public, max-age=${seconds}` }) });
const html = z.string().openapi({ description: 'A self-contained HTML document (no script, inline CSS).' });

export function registerPublic(r: OpenAPIRegistry): void {
  const op = operations(r, STATUS_TEXT, PARAMS);
  const errors = [400, 404, 429, 500, 503];
  op({
    method: 'get',
    path: '/e/live/{trackingCode}',
    summary: `Current live visitors (seen in the last 5 minutes); cached up to 10 s.${PAUSED}`,
    tag: TAG,
    security: SECURITY.public,
    data: liveData,
    errors,
  });
  op({
    method: 'get',
    path: '/e/stats/{trackingCode}',
    summary: `Visitors and pageviews over the last 24 hours, 7 and 30 days; figures up to a minute old.${PAUSED}`,
    tag: TAG,
    security: SECURITY.public,
    data: publicStatsData,
    errors,
  });
  op({
    method: 'get',
    path: '/e/{trackingCode}/status',
    summary: 'Tracking status: active, domain verified, and whether a pageview arrived in the last 30 minutes.',
    tag: TAG,
    security: SECURITY.public,
    data: trackingStatusData,
    errors,
  });
  op({
    method: 'get',
    path: '/e/realtime/{websiteId}',
    summary:
      `Real-time data, only while the website’s public dashboard is on (404 otherwise). Pages are listed only ` +
      `with at least ${MIN_PUBLIC_PAGE_VISITORS} live visitors. Countries: IP Geolocation by DB-IP (https://db-ip.com).` +
      ' A paused website answers {website_id, active: false, message}.',
    tag: TAG,
    security: SECURITY.public,
    data: publicRealtimeData,
    errors,
  });

  const widgets: [string, string, z.ZodType, number][] = [
    ['realtime', 'Live visitor count widget (reloads itself every 30 s)', realtimeWidgetData, 10],
    ['preview', '24-hour timeline widget: pageviews per UTC hour', previewWidgetData, 60],
    [
      'recent',
      'Country breakdown widget: visitors by country over the last 24 hours, credited “IP Geolocation by DB-IP”',
      recentWidgetData,
      60,
    ],
  ];
  for (const [kind, summary, data, maxAge] of widgets) {
    const failures = errorResponses(STATUS_TEXT, errors) ?? {};
    r.registerPath({
      method: 'get',
      path: `/widgets/{trackingCode}/${kind}`,
      summary: `${summary}. An embeddable HTML document for an iframe (any origin may frame it); JSON with Accept: application/json.${PAUSED}`,
      tags: [TAG],
      security: SECURITY.public,
      request: {
        params: z.object({ trackingCode: z.string().openapi({ param: { description: PARAMS.trackingCode } }) }),
      },
      responses: {
        200: {
          description: 'The widget',
          headers: cacheHeader(maxAge),
          content: { 'text/html': { schema: html }, 'application/json': { schema: envelope(data) } },
        },
        ...Object.fromEntries(
          Object.entries(failures).map(([status, response]) => [
            status,
            {
              ...response,
              content: {
                'application/json': { schema: errorEnvelope },
                ...(status === '400' || status === '500' ? {} : { 'text/html': { schema: html } }),
              },
            },
          ]),
        ),
      },
    });
  }
}
