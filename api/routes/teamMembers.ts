// /api/websites/:websiteId/team-members: the members of the website's team, with the spec's minimum roles.
import { Router } from 'express';
import { addMember, changeMemberRole, deactivateMember, listMembers, memberView } from '../../lib/accounts/members';
import type { DeletedView } from '../../lib/accounts/responses';
import { addMemberBody, changeRoleBody } from '../../lib/accounts/schemas';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { takeAttempt, windowKeys } from '../../lib/auth/windows';
import { orUnavailable, rateLimited } from '../../lib/errors';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

/** Add-member attempts one user may make per window, on any website (each answer tells a little about an email). */
export const MEMBER_ADDS_PER_WINDOW = 20;
export const MEMBER_ADD_WINDOW_SECONDS = 10 * 60;

export function teamMemberRoutes({ pool, redis, config }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  const addKey = windowKeys(config.REDIS_PREFIX, config.JWT_SECRET, 'member-add');
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(
      res,
      (await listMembers(pool, w.team_id)).map((m) => memberView(m)),
    );
  });

  router.post('/', async (req, res) => {
    const { website: w, role } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    const wait = await orUnavailable(
      takeAttempt(redis, [
        { key: addKey('user', userId(res)), limit: MEMBER_ADDS_PER_WINDOW, seconds: MEMBER_ADD_WINDOW_SECONDS },
      ]),
    );
    if (wait > 0) throw rateLimited('Too many team-member additions; try again later', wait);
    const body = parseBody(addMemberBody, req);
    sendData(res, memberView(await addMember(pool, w.team_id, role, body.email, body.role)), 201);
  });

  router.put('/:memberId', async (req, res) => {
    const { website: w, role } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    const body = parseBody(changeRoleBody, req);
    const member = await changeMemberRole(pool, w.team_id, role, pathUuid(req, 'memberId', 'Team member'), body.role);
    sendData(res, memberView(member));
  });

  router.delete('/:memberId', async (req, res) => {
    const { website: w, role } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    await deactivateMember(pool, w.team_id, role, pathUuid(req, 'memberId', 'Team member'));
    sendData(res, { deleted: true } satisfies DeletedView);
  });
  return router;
}
