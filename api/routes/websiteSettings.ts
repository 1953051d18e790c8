// /api/websites/:websiteId/notifications, /revenue and /domains (spec "Website settings", minimum role per
// row). A domain change clears the browser-ingestion cache entry: allowed domains filter events at once.
import { Router } from 'express';
import { domainsBody, notificationsBody, revenueBody } from '../../lib/accounts/settingsSchemas';
import {
  getDomains,
  getNotifications,
  notificationsView,
  saveNotifications,
  updateDomains,
  updateRevenue,
} from '../../lib/accounts/websiteSettings';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import type { SiteConfigCache } from '../../lib/ingest/accept/siteCache';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

export function websiteSettingsRoutes({ pool, config }: AppDeps, sites: SiteConfigCache): Router {
  const router = Router({ mergeParams: true });
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');
  const notifications = notificationsBody(config.WEBHOOK_ALLOW_PRIVATE);

  router.get('/notifications', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, notificationsView(w.id, await getNotifications(pool, w.id)));
  });

  router.put('/notifications', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const body = parseBody(notifications, req);
    sendData(res, notificationsView(w.id, await saveNotifications(pool, w.id, body)));
  });

  // Revenue settings are read per request by the stats (goals.ts conversionContext), not from the site cache.
  router.put('/revenue', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    sendData(res, await updateRevenue(pool, w.id, parseBody(revenueBody, req)));
  });

  router.get('/domains', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, await getDomains(pool, w.id));
  });

  router.put('/domains', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    const updated = await updateDomains(pool, w.id, parseBody(domainsBody, req));
    sites.invalidate(w.tracking_code);
    sendData(res, updated);
  });

  return router;
}
