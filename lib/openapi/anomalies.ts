// GET /api/external/v1/anomalies/{websiteId}'s part of the OpenAPI document (issue 25), from the schemas the
// route validates with and lib/anomalies returns.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { anomaliesData, anomaliesQuery } from '../external/anomalySchemas';
import { envelope, websiteIdParams } from '../external/schemas';
import { json, READER_SECURITY } from './common';
import { errors, rateHeaders } from './external';

export function registerAnomalies(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'get',
    path: '/api/external/v1/anomalies/{websiteId}',
    tags: ['External API'],
    security: READER_SECURITY,
    summary:
      'Anomalies whose hours overlap the range, newest first: metrics of an hour far from the same hour of the previous weeks, with the annotations around their start (Pro or higher; 1 credit)',
    description:
      'Found hourly by the anomaly job for visitors, pageviews, bounce_rate, visit_duration, error_rate and each active goal’s conversions (docs/intelligence.md). At most one open anomaly per metric (and goal); it is resolved once the metric has been back inside its band for a full hour. `pagination.total` counts every anomaly the filters match.',
    request: { params: websiteIdParams, query: anomaliesQuery },
    responses: {
      200: { description: 'Success', headers: rateHeaders, content: json(envelope(anomaliesData)) },
      ...errors([400, 401, 403, 404, 429, 500, 503]),
    },
  });
}
