// External API v1: GET /analytics/{websiteId}/funnels/{funnelId} (issue 22), a saved funnel's results over one
// of the External API's ranges, for paid keys and signed-in readers alike (the mount's limits and credits).
import { Router } from 'express';
import { externalFunnelQuery } from '../../../lib/accounts/funnelSchemas';
import { getFunnel } from '../../../lib/accounts/funnels';
import { HttpError } from '../../../lib/errors';
import { chooseRange } from '../../../lib/external/analytics';
import { externalFunnelResults, parseFilterParam } from '../../../lib/stats/funnels';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseQuery, pathUuid } from '../../middleware/validate';

export function externalFunnelRoutes({ pool, clickhouse }: AppDeps): Router {
  const router = Router();
  router.get('/analytics/:websiteId/funnels/:funnelId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    const funnel = await getFunnel(pool, w.id, pathUuid(req, 'funnelId', 'Funnel'));
    const q = parseQuery(externalFunnelQuery, req);
    const filters = parseFilterParam(q.filters);
    if ('error' in filters) throw new HttpError(400, filters.error.code, filters.error.message);
    sendData(res, await externalFunnelResults(clickhouse, w, funnel, chooseRange(q), filters));
  });
  return router;
}
