// Accounts' part of the OpenAPI document: sign-up and sign-in, the caller's profile, and opening and
// accepting an invite link.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  deletedView,
  inviteAcceptedView,
  invitePreviewView,
  inviteRegisteredView,
  loggedOutView,
  passwordChangedView,
  setupView,
  signInView,
  tokenView,
  userView,
} from '../accounts/responses';
import {
  acceptInviteBody,
  changePasswordBody,
  deleteAccountBody,
  loginBody,
  registerBody,
  updateProfileBody,
} from '../accounts/schemas';
import { DASHBOARD_PARAMS, DASHBOARD_STATUS_TEXT, dashboardErrors as errors, operations, SECURITY } from './common';

export function registerAccounts(r: OpenAPIRegistry): void {
  const op = operations(r, DASHBOARD_STATUS_TEXT, DASHBOARD_PARAMS);
  const user = userView.openapi('User');
  const signIn = signInView.extend({ user }).openapi('SignIn');

  const auth = { tag: 'Auth', security: SECURITY.public };
  op({
    ...auth,
    method: 'get',
    path: '/api/auth/setup',
    summary:
      'Whether the instance has an owner yet (the dashboard’s first-run screen registers the owner when not) and whether sign-up is open',
    data: setupView,
    errors: errors([]),
  });
  op({
    ...auth,
    method: 'post',
    path: '/api/auth/register',
    summary:
      'Create an account with a personal team and sign in (sets the session cookie; 403 when sign-up is disabled or the request is cross-site)',
    body: registerBody,
    data: signIn,
    status: 201,
    errors: errors([403, 409, 429], true),
  });
  op({
    ...auth,
    method: 'post',
    path: '/api/auth/login',
    summary: 'Sign in with email and password (sets the session cookie; 403 for a cross-site request)',
    body: loginBody,
    data: signIn,
    errors: errors([401, 403, 429], true),
  });
  op({
    ...auth,
    method: 'post',
    path: '/api/auth/logout',
    summary: 'End the session and revoke every JWT of its user (and of the Bearer token’s user, when given)',
    security: [...SECURITY.session, ...SECURITY.jwt, {}],
    data: loggedOutView,
    errors: errors([403]),
  });
  op({
    ...auth,
    method: 'post',
    path: '/api/auth/token',
    summary: 'A fresh JWT from the session cookie (403 for a cross-site request)',
    security: SECURITY.session,
    data: tokenView,
    errors: errors([401, 403]),
  });

  const me = { tag: 'Users', security: SECURITY.jwt };
  op({
    ...me,
    method: 'get',
    path: '/api/users/me',
    summary: 'The caller’s profile',
    data: user,
    errors: errors([401, 404]),
  });
  op({
    ...me,
    method: 'put',
    path: '/api/users/me',
    summary: 'Change the caller’s name or avatar',
    body: updateProfileBody,
    data: user,
    errors: errors([401, 404], true),
  });
  op({
    ...me,
    method: 'put',
    path: '/api/users/me/password',
    summary:
      'Change the password: every earlier JWT is revoked and other sessions end; the answer holds a fresh token. Wrong current passwords are limited per user like sign-in failures (429 with Retry-After)',
    body: changePasswordBody,
    data: passwordChangedView,
    errors: errors([401, 404, 429], true),
  });
  op({
    ...me,
    method: 'delete',
    path: '/api/users/me',
    summary:
      'Delete the caller’s account (the password again in the body; a wrong one is 401): the user, their sessions and memberships, and every team left without another active member, with its websites and their analytics, API keys and conversations. 409 LAST_OWNER while the caller is the last owner of a team with other active members; 409 INSTANCE_OWNER for the instance owner. Wrong passwords are limited per user like sign-in failures (429 with Retry-After)',
    body: deleteAccountBody,
    data: deletedView,
    errors: errors([401, 404, 409, 429], true),
  });

  const invites = { tag: 'Invites' };
  op({
    ...invites,
    method: 'get',
    path: '/api/invites/{token}',
    summary: 'What an open invite offers, and whether its email has an account (public)',
    security: SECURITY.public,
    data: invitePreviewView,
    errors: errors([404]),
  });
  op({
    ...invites,
    method: 'post',
    path: '/api/invites/{token}/accept',
    summary:
      'Accept an invite: signed in (Bearer JWT, no body) the caller joins (200); otherwise the body’s password creates the invited account, which joins and is signed in (201)',
    security: [...SECURITY.jwt, {}],
    body: acceptInviteBody,
    bodyOptional: true,
    data: inviteAcceptedView,
    alsoOk: { 201: inviteRegisteredView.extend({ user }) },
    errors: errors([401, 403, 404, 409], true),
  });
}
