// Stats API: GET /api/external/v1/stats/{aggregate,timeseries,breakdown} (spec "Stats API") and the v2 it
// announces under /api/external/v2/stats (every metric under any filter, JSON filters, more breakdowns, compare).
import { type Request, type Response, Router } from 'express';
import { conversionContext } from '../../../lib/accounts/goals';
import { HttpError } from '../../../lib/errors';
import { statsResponse } from '../../../lib/stats/api';
import { parseStatsParams, type StatsEndpoint, type StatsVersion } from '../../../lib/stats/params';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';

export function statsRoutes({ pool, clickhouse }: AppDeps, version: StatsVersion): Router {
  const router = Router();
  const handle = (endpoint: StatsEndpoint) => async (req: Request, res: Response) => {
    const params = parseStatsParams(req.query as Record<string, unknown>, endpoint, version);
    if ('error' in params) throw new HttpError(400, params.error.code, params.error.message);
    const website = await readableWebsite(pool, res, params.siteId);
    sendData(
      res,
      await statsResponse(
        clickhouse,
        { id: website.id, timezone: website.timezone, conversions: () => conversionContext(pool, website.id) },
        endpoint,
        params,
        version,
      ),
    );
  };
  router.get('/stats/aggregate', handle('aggregate'));
  router.get('/stats/timeseries', handle('timeseries'));
  router.get('/stats/breakdown', handle('breakdown'));
  return router;
}
