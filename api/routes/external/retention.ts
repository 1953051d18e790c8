// External API v1: GET /retention/{websiteId} (issue 25), the cohorts the nightly retention job stored, for
// paid keys (every paid plan is Pro or higher, so keys meet the spec's Pro+ gate) and signed-in readers of the
// website, as every other External read (DESIGN §5); 1 credit through the mount's quota.
import { Router } from 'express';
import { readRetention } from '../../../lib/intelligence/retention';
import { retentionQuery } from '../../../lib/intelligence/retentionSchemas';
import { usableTimeZone } from '../../../lib/stats/timeZones';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseQuery, pathUuid } from '../../middleware/validate';

export function externalRetentionRoutes({ pool }: AppDeps): Router {
  const router = Router();
  router.get('/retention/:websiteId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    const q = parseQuery(retentionQuery, req);
    sendData(res, await readRetention(pool, { id: w.id, timezone: usableTimeZone(w.timezone) }, q));
  });
  return router;
}
