// /api/websites: create, list, read, delete, and the spec's PUT /:websiteId/general.
import { Router } from 'express';
import type { DeletedView, WebsiteListView } from '../../lib/accounts/responses';
import { createWebsiteBody, updateGeneralBody } from '../../lib/accounts/schemas';
import { snippetQuery, trackingSnippet } from '../../lib/accounts/snippet';
import { requireTeamRole } from '../../lib/accounts/teams';
import { getUser } from '../../lib/accounts/users';
import {
  createWebsite,
  deleteWebsiteRow,
  generalSettingsView,
  listWebsitesForUser,
  requireWebsiteRole,
  updateGeneral,
  websiteDetail,
} from '../../lib/accounts/websites';
import { purgeWebsiteData } from '../../lib/clickhouse/purge';
import { badRequest } from '../../lib/errors';
import type { SiteConfigCache } from '../../lib/ingest/accept/siteCache';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';
import { errorGroupRoutes } from './errorGroups';
import { exclusionRoutes } from './exclusions';
import { funnelRoutes } from './funnels';
import { goalRoutes } from './goals';
import { teamMemberRoutes } from './teamMembers';
import { webhookRoutes } from './webhooks';
import { websiteSettingsRoutes } from './websiteSettings';

export function websiteRoutes(deps: AppDeps, sites: SiteConfigCache): Router {
  const { pool } = deps;
  const router = Router();
  router.use(requireJwt(deps.config.JWT_SECRET, deps.pool));

  router.post('/', async (req, res) => {
    const body = parseBody(createWebsiteBody, req);
    const teamId = body.team_id ?? (await getUser(pool, userId(res)))?.default_team_id;
    if (!teamId) throw badRequest('team_id: required (the account has no default team)');
    await requireTeamRole(pool, teamId, userId(res), 'admin');
    const website = await createWebsite(pool, teamId, userId(res), body);
    sendData(res, { website: websiteDetail(website) }, 201);
  });

  router.get('/', async (_req, res) => {
    const websites = await listWebsitesForUser(pool, userId(res));
    sendData(res, { websites: websites.map(websiteDetail), total: websites.length } satisfies WebsiteListView);
  });

  router.get('/:websiteId', async (req, res) => {
    const { website } = await requireWebsiteRole(pool, pathUuid(req, 'websiteId', 'Website'), userId(res), 'viewer');
    sendData(res, { website: websiteDetail(website) });
  });

  router.get('/:websiteId/snippet', async (req, res) => {
    const { website } = await requireWebsiteRole(pool, pathUuid(req, 'websiteId', 'Website'), userId(res), 'viewer');
    sendData(res, trackingSnippet(deps.config.PUBLIC_URL, website, parseQuery(snippetQuery, req)));
  });

  router.delete('/:websiteId', async (req, res) => {
    const { website } = await requireWebsiteRole(pool, pathUuid(req, 'websiteId', 'Website'), userId(res), 'admin');
    // Analytics first: if that fails the website still exists and the delete can simply be retried.
    await purgeWebsiteData(deps.clickhouse, website.id);
    await deleteWebsiteRow(pool, website.id);
    sites.invalidate(website.tracking_code);
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  router.put('/:websiteId/general', async (req, res) => {
    const { website } = await requireWebsiteRole(pool, pathUuid(req, 'websiteId', 'Website'), userId(res), 'editor');
    const body = parseBody(updateGeneralBody, req);
    const updated = await updateGeneral(pool, website.id, body);
    sites.invalidate(website.tracking_code);
    sendData(res, generalSettingsView(updated));
  });

  router.use('/:websiteId/goals', goalRoutes(deps));
  router.use('/:websiteId/funnels', funnelRoutes(deps));
  router.use('/:websiteId/errors', errorGroupRoutes(deps));
  router.use('/:websiteId', exclusionRoutes(deps, sites));
  router.use('/:websiteId', websiteSettingsRoutes(deps, sites));
  router.use('/:websiteId/team-members', teamMemberRoutes(deps));
  router.use('/:websiteId/webhooks', webhookRoutes(deps));
  return router;
}
