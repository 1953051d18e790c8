// Annotations' part of the OpenAPI document (issue 23): /api/annotations with the session cookie only.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { annotationView, createAnnotationBody, listAnnotationsQuery } from '../accounts/annotationSchemas';
import { deletedView } from '../accounts/responses';
import { z } from '../zod';
import { DASHBOARD_STATUS_TEXT, dashboardErrors as errors, operations, SECURITY } from './common';

const STATUS_TEXT: Record<number, string> = {
  ...DASHBOARD_STATUS_TEXT,
  401: 'No valid session cookie (UNAUTHORIZED); API keys and Bearer tokens are refused here.',
  402: 'The free plan’s 10 annotations of this calendar month (UTC) are used (PAYMENT_REQUIRED).',
  403: 'The session has no access to the website, or its role is below the one needed (FORBIDDEN); also a cross-site write: an Origin other than the server’s, or Sec-Fetch-Site: cross-site.',
  404: 'Website not found; for DELETE, an annotation that does not exist or is not in one of the caller’s teams (NOT_FOUND).',
  409: 'A same-type annotation of the website already has an occurred_at within 5 minutes (inclusive) of this one (CONFLICT).',
};

export function registerAnnotations(r: OpenAPIRegistry): void {
  const register = operations(r, STATUS_TEXT, { annotationId: 'Annotation UUID.' });
  const op = (o: Omit<Parameters<typeof register>[0], 'tag' | 'security'>) =>
    register({ ...o, tag: 'Annotations', security: SECURITY.session });
  op({
    method: 'post',
    path: '/api/annotations',
    summary: 'Create a chart annotation (editor or higher; free plan: 10 per calendar month)',
    body: createAnnotationBody,
    data: z.object({ annotation: annotationView }),
    status: 201,
    errors: errors([401, 402, 403, 404, 409], true),
  });
  op({
    method: 'get',
    path: '/api/annotations',
    summary: 'A website’s annotations with occurred_at in [from, to], newest first, at most 500 (viewer or higher)',
    query: listAnnotationsQuery,
    data: z.object({ annotations: z.array(annotationView) }),
    errors: errors([401, 403, 404]),
  });
  op({
    method: 'delete',
    path: '/api/annotations/{annotationId}',
    summary: 'Delete an annotation permanently (editor or higher)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });
}
