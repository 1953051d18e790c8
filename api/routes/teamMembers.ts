// /api/websites/:websiteId/team-members: the members of the website's team, with the spec's minimum roles.
import { Router } from 'express';
import { addMember, changeMemberRole, deactivateMember, listMembers, memberView } from '../../lib/accounts/members';
import { addMemberBody, changeRoleBody } from '../../lib/accounts/schemas';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

export function teamMemberRoutes({ pool }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, (await listMembers(pool, w.team_id)).map((m) => memberView(m)));
  });

  router.post('/', async (req, res) => {
    const { website: w, role } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
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
    sendData(res, { deleted: true });
  });
  return router;
}
