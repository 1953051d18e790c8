// Funnels' part of the OpenAPI document (issue 22): the dashboard's CRUD and results under a website (Bearer
// JWT), and the External API's results (API key or a signed-in reader).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  createFunnelBody,
  externalFunnelData,
  externalFunnelQuery,
  funnelResultsQuery,
  funnelResultsView,
  funnelView,
  updateFunnelBody,
} from '../accounts/funnelSchemas';
import { deletedView } from '../accounts/responses';
import { z } from '../zod';
import {
  DASHBOARD_PARAMS,
  DASHBOARD_STATUS_TEXT,
  dashboardErrors as errors,
  operations,
  READER_SECURITY,
  SECURITY,
} from './common';

const STEPS_400 =
  'INVALID_FUNNEL_STEPS: fewer than 2 or more than 8 steps, a step repeated, a step with both or neither of goal_id and path, a bad path pattern, or a goal_id that is not a goal of this website; the message names the step (steps.<index>). VALIDATION_ERROR for any other field.';
const RESULTS_400 =
  'A Stats API code naming the parameter: INVALID_PERIOD, INVALID_CUSTOM_PERIOD, PERIOD_TOO_LONG, UNKNOWN_FILTER_KEY, EMPTY_FILTER_VALUE, or VALIDATION_ERROR (date, filters syntax).';
const PARAMS = { ...DASHBOARD_PARAMS, funnelId: 'Funnel UUID.' };

export function registerFunnels(r: OpenAPIRegistry): void {
  const dashboard = (text400: string) => {
    const register = operations(r, { ...DASHBOARD_STATUS_TEXT, 400: text400 }, PARAMS);
    return (op: Omit<Parameters<typeof register>[0], 'tag' | 'security'>) =>
      register({ ...op, tag: 'Funnels', security: SECURITY.jwt });
  };
  const funnels = dashboard(STEPS_400);
  const reads = dashboard(DASHBOARD_STATUS_TEXT[400]);
  const results = dashboard(RESULTS_400);
  const F = '/api/websites/{websiteId}/funnels';

  reads({
    method: 'get',
    path: F,
    summary: 'The website’s saved funnels (viewer)',
    data: z.object({ funnels: z.array(funnelView) }),
    errors: errors([401, 403, 404]),
  });
  funnels({
    method: 'post',
    path: F,
    summary: 'Save a funnel of 2 to 8 steps, each a goal of the website or a path pattern (editor)',
    body: createFunnelBody,
    data: z.object({ funnel: funnelView }),
    status: 201,
    errors: errors([401, 403, 404, 409], true),
  });
  reads({
    method: 'get',
    path: `${F}/{funnelId}`,
    summary: 'One funnel (viewer)',
    data: z.object({ funnel: funnelView }),
    errors: errors([401, 403, 404]),
  });
  funnels({
    method: 'put',
    path: `${F}/{funnelId}`,
    summary: 'Rename a funnel and/or replace its steps (editor)',
    body: updateFunnelBody,
    data: z.object({ funnel: funnelView }),
    errors: errors([401, 403, 404, 409], true),
  });
  reads({
    method: 'delete',
    path: `${F}/{funnelId}`,
    summary: 'Delete a funnel (editor)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });
  results({
    method: 'get',
    path: `${F}/{funnelId}/results`,
    summary:
      'A funnel’s results over a Stats API period: per step the visitors who reached it in order within one visit, conversion from the first and the previous step, drop-off (viewer)',
    query: funnelResultsQuery,
    data: funnelResultsView,
    errors: errors([401, 403, 404]),
  });

  const external = operations(
    r,
    {
      400: `Invalid range or filters (VALIDATION_ERROR, UNKNOWN_FILTER_KEY, EMPTY_FILTER_VALUE); the message names the parameter.`,
      401: 'Missing or invalid API key (UNAUTHORIZED).',
      403: 'API_PAID_PLAN_REQUIRED for a free-plan team; FORBIDDEN for a site_access key on another website.',
      404: 'The website or funnel does not exist or belongs to another team (NOT_FOUND).',
      429: 'Per-minute rate limit or monthly quota exceeded (RATE_LIMITED); see Retry-After and X-RateLimit-*.',
      500: 'Server error (INTERNAL_ERROR).',
      503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
    },
    { websiteId: 'Website UUID.', funnelId: 'Funnel UUID.' },
  );
  external({
    method: 'get',
    path: '/api/external/v1/analytics/{websiteId}/funnels/{funnelId}',
    summary:
      'A saved funnel’s results over a range: per step the visitors who reached it in order within one visit, conversion and drop-off (1 credit)',
    tag: 'External API',
    security: READER_SECURITY,
    query: externalFunnelQuery,
    data: externalFunnelData,
    errors: [400, 401, 403, 404, 429, 500, 503],
  });
}
