// The lifetime-value endpoint's part of the OpenAPI document (issue 25), from the schemas its route validates
// with and its lib function returns.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { envelope, websiteIdParams } from '../external/schemas';
import { ltvData, ltvQuery } from '../ltv/schemas';
import { json, READER_SECURITY } from './common';
import { errors, rateHeaders } from './external';

export function registerLtv(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'get',
    path: '/api/external/v1/revenue/{websiteId}/ltv',
    summary:
      'Lifetime value by customer cohort (first succeeded purchase, by week or month): cumulative net revenue per customer per period, in the website’s revenue currency, from the nightly job (Pro or higher; 1 credit)',
    tags: ['External API'],
    security: READER_SECURITY,
    request: { params: websiteIdParams, query: ltvQuery },
    responses: {
      200: { description: 'Success', headers: rateHeaders, content: json(envelope(ltvData)) },
      ...errors([400, 401, 403, 404, 429, 500, 503]),
    },
  });
}
