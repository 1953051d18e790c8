// External API v1: GET /insights/{websiteId} (spec "Insight"): the website's stored insights created within a
// range, filtered by type and severity, paginated with a total. Read from PostgreSQL, where the nightly job
// and the anomaly job write them; the mount charges its 1 credit.
import { Router } from 'express';
import { chooseRange } from '../../../lib/external/analytics';
import { insightsQuery } from '../../../lib/insights/schemas';
import { listInsights } from '../../../lib/insights/store';
import { resolveRange } from '../../../lib/stats/period';
import { usableTimeZone } from '../../../lib/stats/timeZones';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseQuery, pathUuid } from '../../middleware/validate';

export function externalInsightRoutes({ pool }: AppDeps): Router {
  const router = Router();
  router.get('/insights/:websiteId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    const q = parseQuery(insightsQuery, req);
    const window = resolveRange(chooseRange(q), usableTimeZone(w.timezone));
    sendData(res, await listInsights(pool, w.id, window, q));
  });
  return router;
}
