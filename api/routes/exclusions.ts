// /api/websites/:websiteId/exclusions (spec "Website settings") and /tracking (DESIGN §3). Every change
// clears the browser-ingestion cache entry, so new events see it at once on this process.
import { Router } from 'express';
import { addIpExclusion, addPathExclusion, deleteExclusion, listExclusions } from '../../lib/accounts/exclusions';
import type { DeletedView } from '../../lib/accounts/responses';
import { ipExclusionBody, pathExclusionBody, trackingSettingsBody } from '../../lib/accounts/schemas';
import { requireWebsiteRole, trackingSettingsView, updateTrackingSettings } from '../../lib/accounts/websites';
import type { SiteConfigCache } from '../../lib/ingest/accept/siteCache';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

export function exclusionRoutes({ pool }: AppDeps, sites: SiteConfigCache): Router {
  const router = Router({ mergeParams: true });
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');

  router.get('/exclusions', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, await listExclusions(pool, w.id));
  });

  router.post('/exclusions/ip', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const body = parseBody(ipExclusionBody, req);
    const created = await addIpExclusion(pool, w.id, body.ip_address, body.description);
    sites.invalidate(w.tracking_code);
    sendData(res, created, 201);
  });

  router.post('/exclusions/path', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const body = parseBody(pathExclusionBody, req);
    const created = await addPathExclusion(pool, w.id, body.path_pattern, body.description);
    sites.invalidate(w.tracking_code);
    sendData(res, created, 201);
  });

  for (const kind of ['ip', 'path'] as const) {
    router.delete(`/exclusions/${kind}/:exclusionId`, async (req, res) => {
      const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
      await deleteExclusion(pool, kind, w.id, pathUuid(req, 'exclusionId', 'Exclusion'));
      sites.invalidate(w.tracking_code);
      sendData(res, { deleted: true } satisfies DeletedView);
    });
  }

  router.put('/tracking', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const body = parseBody(trackingSettingsBody, req);
    const updated = await updateTrackingSettings(pool, w.id, body);
    sites.invalidate(w.tracking_code);
    sendData(res, trackingSettingsView(updated));
  });
  return router;
}
