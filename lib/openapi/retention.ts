// Retention's part of the OpenAPI document (issue 25): GET /api/external/v1/retention/{websiteId}.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { retentionData, retentionQuery } from '../intelligence/retentionSchemas';
import { operations, READER_SECURITY } from './common';

export function registerRetention(r: OpenAPIRegistry): void {
  const external = operations(
    r,
    {
      400: 'Invalid range, granularity or periods (VALIDATION_ERROR; periods above 12 included); the message names the parameter.',
      401: 'Missing or invalid API key (UNAUTHORIZED).',
      403: 'API_PAID_PLAN_REQUIRED for a free-plan team’s key (every paid plan is Pro or higher); FORBIDDEN for a site_access key on another website.',
      404: 'The website does not exist or belongs to another team (NOT_FOUND).',
      429: 'Per-minute rate limit or monthly quota exceeded (RATE_LIMITED); see Retry-After and X-RateLimit-*.',
      500: 'Server error (INTERNAL_ERROR).',
      503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
    },
    { websiteId: 'Website UUID.' },
  );
  external({
    method: 'get',
    path: '/api/external/v1/retention/{websiteId}',
    summary:
      'Retention cohorts, computed nightly: visitors grouped by the period of their first-ever visit (website time zone), and how many came back in each later period. Only persistent visitor ids count (server-sent visitorIds, identified users, page-supplied browser visitor_ids); cookieless browser visitors are new each day and are left out (1 credit)',
    tag: 'External API',
    security: READER_SECURITY,
    query: retentionQuery,
    data: retentionData,
    errors: [400, 401, 403, 404, 429, 500, 503],
  });
}
