// Team invitations (DESIGN §5): admins create one-time links under /api/teams/:teamId/invites; the person who
// opens one previews it and accepts it under /api/invites/:token, signed in or registering on the way.
import { Router } from 'express';
import {
  acceptInvite,
  createInvite,
  inviteUrl,
  listInvites,
  previewInvite,
  revokeInvite,
} from '../../lib/accounts/invites';
import type { CreatedInviteView, InviteAcceptedView, RevokedView } from '../../lib/accounts/responses';
import { acceptInviteBody, createInviteBody } from '../../lib/accounts/schemas';
import { requireTeamRole } from '../../lib/accounts/teams';
import { getUser } from '../../lib/accounts/users';
import { takeAttempt, windowKeys } from '../../lib/auth/windows';
import { badRequest, orUnavailable, rateLimited, unauthorized } from '../../lib/errors';
import { sendInviteEmail } from '../../lib/notifications/inviteEmail';
import type { AppDeps } from '../deps';
import { jwtUser, requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';
import { signInResponder } from './signIn';

/** Invites one user may create per window, across teams. */
export const INVITES_PER_WINDOW = 50;
const INVITE_WINDOW_SECONDS = 10 * 60;

export function teamInviteRoutes(deps: AppDeps): Router {
  const { pool, config } = deps;
  const router = Router({ mergeParams: true });
  router.use(requireJwt(config.JWT_SECRET, pool));
  const limitKey = windowKeys(config.REDIS_PREFIX, config.JWT_SECRET, 'invite');
  const team = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'teamId', 'Team');

  router.post('/', async (req, res) => {
    const { team: t, role } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    const body = parseBody(createInviteBody, req);
    const wait = await orUnavailable(
      takeAttempt(deps.redis, [
        { key: limitKey('user', userId(res)), limit: INVITES_PER_WINDOW, seconds: INVITE_WINDOW_SECONDS },
      ]),
    );
    if (wait > 0) throw rateLimited('Too many invites; try again later', wait);
    const { invite, token } = await createInvite(pool, t.id, { role, userId: userId(res) }, body.email, body.role);
    const url = inviteUrl(config.PUBLIC_URL, token);
    sendData(res, { ...invite, url, token } satisfies CreatedInviteView, 201);
    // After the answer, in this process: the invite is made whatever becomes of the email (failures are logged).
    void sendInviteEmail(config, deps.logger, invite, url);
  });

  router.get('/', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    sendData(res, { invites: await listInvites(pool, t.id) });
  });

  router.delete('/:inviteId', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    await revokeInvite(pool, t.id, pathUuid(req, 'inviteId', 'Invite'));
    sendData(res, { revoked: true } satisfies RevokedView);
  });
  return router;
}

export function inviteRoutes(deps: AppDeps): Router {
  const { pool, config } = deps;
  const router = Router();
  const signIn = signInResponder(deps);
  const token = (req: { params: Record<string, unknown> }) => {
    const value = String(req.params.token ?? '');
    // Tokens are 32 random bytes in base64url: anything else is not one of ours.
    if (!/^[A-Za-z0-9_-]{43}$/.test(value)) throw badRequest('Malformed invite token');
    return value;
  };

  router.get('/:token', async (req, res) => {
    sendData(res, await previewInvite(pool, token(req)));
  });

  router.post('/:token/accept', async (req, res) => {
    // A signed-in person sends nothing: no body is an empty one here.
    const body = req.body === undefined ? {} : parseBody(acceptInviteBody, req);
    const signedIn = await jwtUser(config.JWT_SECRET, pool, req);
    if (signedIn) {
      const user = await getUser(pool, signedIn);
      if (!user) throw unauthorized('A valid Bearer token is required');
      const { member, teamId } = await acceptInvite(pool, token(req), { kind: 'user', user });
      sendData(res, { team_id: teamId, member: { id: member.id, role: member.role } } satisfies InviteAcceptedView);
      return;
    }
    if (!body.password) throw unauthorized('Sign in to accept, or give a password to create the invited account');
    const { created, member, teamId } = await acceptInvite(pool, token(req), {
      kind: 'register',
      password: body.password,
      full_name: body.full_name,
      plan: config.DEFAULT_PLAN,
    });
    await signIn(res, created!.user, 201, undefined, { team_id: teamId, member: { id: member.id, role: member.role } });
  });
  return router;
}
