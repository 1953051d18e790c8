// Teams' part of the OpenAPI document (Bearer JWT): API keys and their activity, permissions, usage, members
// and invites.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  apiKeyActivityView,
  apiKeyView,
  createdApiKeyView,
  createdInviteView,
  deletedView,
  inviteView,
  memberView,
  revokedView,
  teamPermissionsView,
  teamUsageView,
} from '../accounts/responses';
import { createApiKeyBody, createInviteBody } from '../accounts/schemas';
import { z } from '../zod';
import { dashboardErrors as errors, jwtOperations } from './common';

export function registerTeams(r: OpenAPIRegistry): void {
  const op = jwtOperations(r);
  const T = '/api/teams/{teamId}';

  const keys = op('API keys');
  const apiKey = apiKeyView.openapi('ApiKey');
  keys({
    method: 'post',
    path: `${T}/api-keys`,
    summary: 'Create an API key (admin, paid plans); the secret is in this answer only',
    body: createApiKeyBody,
    data: createdApiKeyView,
    status: 201,
    errors: errors([401, 403, 404], true),
  });
  keys({
    method: 'get',
    path: `${T}/api-keys`,
    summary: 'The team’s live API keys (admin)',
    data: z.object({ api_keys: z.array(apiKey) }),
    errors: errors([401, 403, 404]),
  });
  keys({
    method: 'delete',
    path: `${T}/api-keys/{keyId}`,
    summary: 'Revoke an API key (admin)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });
  keys({
    method: 'get',
    path: `${T}/api-keys/{keyId}/activity`,
    summary: 'A key’s accepted events: counts for 24 hours and 7 days, top types, the latest events (admin)',
    data: apiKeyActivityView.extend({ api_key: apiKey }),
    errors: errors([401, 403, 404]),
  });

  const teams = op('Teams');
  teams({
    method: 'get',
    path: `${T}/permissions`,
    summary: 'The caller’s role and what it allows, the plan’s limits and current use',
    data: teamPermissionsView,
    errors: errors([401, 404]),
  });
  teams({
    method: 'get',
    path: `${T}/usage`,
    summary: 'Events this calendar month (UTC), websites and members against the plan’s limits',
    data: teamUsageView,
    errors: errors([401, 404]),
  });
  teams({
    method: 'get',
    path: `${T}/members`,
    summary: 'The team’s members, with display names',
    data: z.array(memberView.openapi('TeamMember')),
    errors: errors([401, 404]),
  });

  const invites = op('Invites');
  const invite = inviteView.openapi('Invite');
  invites({
    method: 'post',
    path: `${T}/invites`,
    summary: 'Invite an email to the team (admin); the link is in this answer only',
    body: createInviteBody,
    data: createdInviteView,
    status: 201,
    errors: errors([401, 403, 404, 429], true),
  });
  invites({
    method: 'get',
    path: `${T}/invites`,
    summary: 'The team’s invites, newest first (admin)',
    data: z.object({ invites: z.array(invite) }),
    errors: errors([401, 403, 404]),
  });
  invites({
    method: 'delete',
    path: `${T}/invites/{inviteId}`,
    summary: 'Revoke an open invite (admin)',
    data: revokedView,
    errors: errors([401, 403, 404]),
  });
}
