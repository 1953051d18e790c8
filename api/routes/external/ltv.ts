// GET /api/external/v1/revenue/:websiteId/ltv (spec "External API", issue 25): the lifetime-value cohorts the
// nightly job stored. Mounted with the other v1 reads: a key of a paid plan (Pro or higher) or a signed-in
// reader; one credit.
import { Router } from 'express';
import { ltvReport } from '../../../lib/ltv/report';
import { ltvQuery } from '../../../lib/ltv/schemas';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseQuery, pathUuid } from '../../middleware/validate';

export function externalLtvRoutes({ pool }: AppDeps): Router {
  const router = Router();
  router.get('/revenue/:websiteId/ltv', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    const q = parseQuery(ltvQuery, req);
    sendData(res, await ltvReport(pool, w, q.range ?? '90d', q.granularity ?? 'monthly'));
  });
  return router;
}
