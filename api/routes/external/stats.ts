// Stats API: GET /api/external/v1/stats/{aggregate,timeseries,breakdown} (spec "Stats API") and the v2 it
// announces under /api/external/v2/stats (every metric under any filter, JSON filters, more breakdowns, compare,
// and timeseries and breakdowns as CSV on `format=csv` or `Accept: text/csv`).
import { type Request, type Response, Router } from 'express';
import { annotationView, listAnnotations } from '../../../lib/accounts/annotations';
import { conversionContext } from '../../../lib/accounts/goals';
import { chartAnomalies } from '../../../lib/anomalies/store';
import { HttpError } from '../../../lib/errors';
import { statsCsv, statsCsvFileName } from '../../../lib/export/stats';
import { statsResponse } from '../../../lib/stats/api';
import { parseStatsParams, type StatsEndpoint, type StatsParams, type StatsVersion } from '../../../lib/stats/params';
import type { AppDeps } from '../../deps';
import { readableWebsite, reader } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { sendAttachment } from './attachment';

/** v2 timeseries and breakdowns answer CSV when `format=csv`, or, without a format, when Accept prefers it. */
function wantsCsv(req: Request, endpoint: StatsEndpoint, params: StatsParams, version: StatsVersion): boolean {
  if (version !== 'v2' || endpoint === 'aggregate') return false;
  if (params.format) return params.format === 'csv';
  return req.headers.accept !== undefined && req.accepts(['application/json', 'text/csv']) === 'text/csv';
}

export function statsRoutes({ pool, clickhouse }: AppDeps, version: StatsVersion): Router {
  const router = Router();
  const handle = (endpoint: StatsEndpoint) => async (req: Request, res: Response) => {
    const params = parseStatsParams(req.query as Record<string, unknown>, endpoint, version);
    if ('error' in params) throw new HttpError(400, params.error.code, params.error.message);
    const website = await readableWebsite(pool, res, params.siteId);
    const ref = { id: website.id, timezone: website.timezone, conversions: () => conversionContext(pool, website.id) };
    const answer = await statsResponse(clickhouse, ref, endpoint, params, version);
    if (version === 'v2' && endpoint !== 'aggregate') res.vary('Accept');
    if (endpoint !== 'aggregate' && wantsCsv(req, endpoint, params, version)) {
      const name = statsCsvFileName(website.domain, endpoint, params, website.timezone);
      sendAttachment(res, 'text/csv; charset=utf-8', name, statsCsv(endpoint, params, answer));
      return;
    }
    // A signed-in reader's v2 timeseries carries the annotations and anomalies its period overlaps, for the
    // chart to draw (API keys cannot read annotations, and public endpoints never reach this route).
    if (version === 'v2' && endpoint === 'timeseries' && reader(res).kind === 'user') {
      const { period_start, period_end } = answer.meta as { period_start: string; period_end: string };
      const end = new Date(Date.parse(period_end) - 1); // the period is [start, end); the list's window is closed
      const [annotations, anomalies] = await Promise.all([
        listAnnotations(pool, website.id, new Date(period_start), end),
        chartAnomalies(pool, website.id, Date.parse(period_start), Date.parse(period_end)),
      ]);
      sendData(res, { ...answer, annotations: annotations.map(annotationView), anomalies });
      return;
    }
    sendData(res, answer);
  };
  router.get('/stats/aggregate', handle('aggregate'));
  router.get('/stats/timeseries', handle('timeseries'));
  router.get('/stats/breakdown', handle('breakdown'));
  return router;
}
