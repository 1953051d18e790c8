// The unsubscribe page of report and alert emails (docs/notifications.md): no credential but the signed token
// in the path; HTML in every answer.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { errorEnvelope } from '../external/schemas';
import { z } from '../zod';
import { SECURITY } from './common';

const html = z.string().openapi({ description: 'A small HTML page (no script, inline CSS).' });
const page = (description: string) => ({ description, content: { 'text/html': { schema: html } } });

export function registerNotifications(r: OpenAPIRegistry): void {
  const request = {
    params: z.object({
      token: z.string().openapi({ param: { description: 'The signed token of the email’s unsubscribe link.' } }),
    }),
  };
  const failures = {
    400: {
      description: 'A path that is not valid percent-encoded UTF-8 or holds a control character (VALIDATION_ERROR).',
      content: { 'application/json': { schema: errorEnvelope } },
    },
    404: page('A token that is malformed or not signed by this server.'),
    500: { description: 'Server error (INTERNAL_ERROR).', content: { 'application/json': { schema: errorEnvelope } } },
  };
  r.registerPath({
    method: 'get',
    path: '/unsubscribe/{token}',
    summary: 'The confirmation page of an email’s unsubscribe link: a form that POSTs to the same path.',
    tags: ['Notifications'],
    security: SECURITY.public,
    request,
    responses: { 200: page('The confirmation form'), ...failures },
  });
  r.registerPath({
    method: 'post',
    path: '/unsubscribe/{token}',
    summary:
      'Stops report and alert emails of the token’s website to its address (the form’s button, or a mail client’s one-click unsubscribe, RFC 8058). Idempotent.',
    tags: ['Notifications'],
    security: SECURITY.public,
    request,
    responses: { 200: page('Unsubscribed'), ...failures },
  });
}
