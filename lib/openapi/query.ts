// The natural-language query endpoint's part of the OpenAPI document (spec "POST /query/{websiteId}").
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { envelope, websiteIdParams } from '../external/schemas';
import { queryBody, queryData } from '../nlquery/schemas';
import { errorResponses, json, READER_SECURITY } from './common';
import { rateHeaders } from './external';

const TEXT: Record<number, string> = {
  400: 'The body is not valid: question missing, empty or over 500 characters, or an unknown context value (VALIDATION_ERROR).',
  401: 'Missing or invalid API key or token (UNAUTHORIZED).',
  403: 'API_PAID_PLAN_REQUIRED for a free-plan team; PLAN_REQUIRED below Scale; FORBIDDEN for a site_access key on another website.',
  404: 'The website does not exist or belongs to another team (NOT_FOUND).',
  422: 'The question cannot be interpreted (QUERY_UNPROCESSABLE); the message names questions that can.',
  429: 'Per-minute rate limit or monthly quota exceeded (RATE_LIMITED).',
  500: 'Server error (INTERNAL_ERROR).',
  503: 'A backing store or the answering worker did not answer in time (SERVICE_UNAVAILABLE); the credits are refunded.',
};

export function registerQuery(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'post',
    path: '/api/external/v1/query/{websiteId}',
    summary:
      'Answer a natural-language question about the website from a typed query plan run on the stats model (Scale or higher; 3 credits)',
    tags: ['External API'],
    security: READER_SECURITY,
    request: { params: websiteIdParams, body: { content: json(queryBody) } },
    responses: {
      200: { description: 'Success', headers: rateHeaders, content: json(envelope(queryData)) },
      ...errorResponses(TEXT, [400, 401, 403, 404, 422, 429, 500, 503]),
    },
  });
}
