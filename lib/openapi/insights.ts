// The insights endpoint's part of the OpenAPI document (spec "Insight", External API /insights/{websiteId}).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { envelope, websiteIdParams } from '../external/schemas';
import { insightsData, insightsQuery } from '../insights/schemas';
import { json, READER_SECURITY } from './common';
import { errors, rateHeaders } from './external';

export function registerInsights(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'get',
    path: '/api/external/v1/insights/{websiteId}',
    summary:
      'Insights created within the range: anomalies in words, significant week-over-week trends, rule-based recommendations and this month’s forecasts, newest first (Pro or higher; 1 credit)',
    tags: ['External API'],
    security: READER_SECURITY,
    request: { params: websiteIdParams, query: insightsQuery },
    responses: {
      200: { description: 'Success', headers: rateHeaders, content: json(envelope(insightsData)) },
      ...errors([400, 401, 403, 404, 429, 500, 503]),
    },
  });
}
