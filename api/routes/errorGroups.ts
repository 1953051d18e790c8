// /api/websites/:websiteId/errors: the website's error groups (viewers read) and their triage status
// (editors move a group between unresolved, resolved and ignored).
import { Router } from 'express';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { listErrorGroups, setErrorGroupStatus } from '../../lib/errorGroups';
import { errorGroupStatusBody, errorGroupsQuery } from '../../lib/external/schemas';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';

export function errorGroupRoutes({ pool }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    const query = parseQuery(errorGroupsQuery, req);
    sendData(res, await listErrorGroups(pool, w.id, { limit: query.limit, status: query.status }));
  });

  router.put('/:groupId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const groupId = pathUuid(req, 'groupId', 'Error group');
    const { status } = parseBody(errorGroupStatusBody, req);
    sendData(res, { error_group: await setErrorGroupStatus(pool, w.id, groupId, status) });
  });
  return router;
}
