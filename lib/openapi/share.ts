// Shared dashboards in the OpenAPI document: the sharing settings (Bearer JWT) and the public side a shared
// link's page uses (no credential). The share token they hand out is documented as POST /api/v2/query's
// ShareToken credential (lib/openapi/plausible.ts).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { PUBLIC_LIMIT_PER_MINUTE } from '../public/limit';
import { SHARE_TOKEN_TTL_SECONDS } from '../public/share';
import { shareInfoView, shareTokenBody, shareTokenView, sharingBody, sharingView } from '../public/shareSchemas';
import {
  DASHBOARD_PARAMS,
  DASHBOARD_STATUS_TEXT,
  dashboardErrors,
  jwtOperations,
  operations,
  SECURITY,
} from './common';

const PUBLIC_TEXT: Record<number, string> = {
  ...DASHBOARD_STATUS_TEXT,
  401: 'The dashboard has a password and none or a wrong one was given (UNAUTHORIZED).',
  404: 'No such website, or its dashboard is not shared (NOT_FOUND): the two answer the same.',
  429: `Too many requests from one address (${PUBLIC_LIMIT_PER_MINUTE} a minute across the public endpoints), or too many password attempts for this dashboard (RATE_LIMITED); see Retry-After.`,
};

export function registerShare(r: OpenAPIRegistry): void {
  const settings = jwtOperations(r)('Website settings');
  settings({
    method: 'get',
    path: '/api/websites/{websiteId}/sharing',
    summary: 'Whether the website’s dashboard is shared, whether its link asks for a password, and its path (viewer)',
    data: sharingView,
    errors: dashboardErrors([401, 403, 404]),
  });
  settings({
    method: 'put',
    path: '/api/websites/{websiteId}/sharing',
    summary:
      'Turn the shared dashboard on or off and set or remove its password (admin). A new or removed password, and turning sharing off, end every share token issued before',
    body: sharingBody,
    data: sharingView,
    errors: dashboardErrors([401, 403, 404], true),
  });

  const op = operations(r, PUBLIC_TEXT, DASHBOARD_PARAMS);
  op({
    method: 'get',
    path: '/api/share/{websiteId}',
    summary: 'A shared dashboard’s website: name, domain, time zone and whether its link asks for a password',
    tag: 'Shared dashboards',
    security: SECURITY.public,
    data: shareInfoView,
    errors: [400, 404, 429, 500, 503],
  });
  op({
    method: 'post',
    path: '/api/share/{websiteId}/token',
    summary: `A share token (valid ${SHARE_TOKEN_TTL_SECONDS / 60} minutes) for reading the shared website’s aggregates with POST /api/v2/query; the password when the link has one. Password attempts are limited per address and per dashboard`,
    tag: 'Shared dashboards',
    security: SECURITY.public,
    body: shareTokenBody,
    bodyOptional: true,
    data: shareTokenView,
    errors: [400, 401, 404, 413, 415, 429, 500, 503],
  });
}
