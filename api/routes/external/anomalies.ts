// External API v1: GET /anomalies/{websiteId} (spec "External API", "Anomaly"; issue 25): the anomalies the
// hourly job stored, filtered and paged. Credits and the paid-plan check come with the /api/external/v1 mount.
import { Router } from 'express';
import { listAnomalies } from '../../../lib/anomalies/store';
import { anomaliesQuery } from '../../../lib/external/anomalySchemas';
import { resolveRange } from '../../../lib/stats/period';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseQuery, pathUuid } from '../../middleware/validate';

export function externalAnomalyRoutes({ pool }: AppDeps): Router {
  const router = Router();
  router.get('/anomalies/:websiteId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    const q = parseQuery(anomaliesQuery, req);
    const range = resolveRange(q.range ?? '7d', w.timezone);
    const resolved = q.resolved === undefined ? undefined : q.resolved === 'true';
    const page = { limit: q.limit, offset: q.offset };
    const { anomalies, total } = await listAnomalies(
      pool,
      w.id,
      { start: range.start, end: range.end, severity: q.severity, metric: q.metric, resolved },
      page,
    );
    sendData(res, { anomalies, pagination: { total, ...page, has_more: q.offset + anomalies.length < total } });
  });
  return router;
}
