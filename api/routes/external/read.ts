// External API v1, read side (spec "External API"): thin handlers — parse the query with the schemas the
// OpenAPI document is generated from, check the key or user may see the website, call lib, answer in the envelope.
import { type Request, type Response, Router } from 'express';
import { conversionContext } from '../../../lib/accounts/goals';
import {
  listWebsitesForTeam,
  listWebsitesForUser,
  websiteDetail,
  websiteSummary,
} from '../../../lib/accounts/websites';
import { listErrorGroups } from '../../../lib/errorGroups';
import {
  analyticsOverview,
  chooseRange,
  technology,
  topCountries,
  topPages,
  visitorList,
} from '../../../lib/external/analytics';
import { customEventReport, goalReport, revenueReport } from '../../../lib/external/conversions';
import {
  analyticsQuery,
  errorGroupsQuery,
  heatmapClicksQuery,
  heatmapPagesQuery,
  replaySessionParams,
  replaySessionsQuery,
  topListQuery,
  visitorsQuery,
} from '../../../lib/external/schemas';
import { usageReport } from '../../../lib/external/usage';
import { realtimeSnapshot } from '../../../lib/realtime/presence';
import { heatmapClicks } from '../../../lib/stats/reads/heatmapClicks';
import { heatmapPages } from '../../../lib/stats/reads/heatmapPages';
import { replayEvents } from '../../../lib/stats/reads/replayEvents';
import { replaySessions } from '../../../lib/stats/reads/replaySessions';
import type { AppDeps } from '../../deps';
import { readableWebsite, reader, requireKeyReader } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parse, parseQuery, pathUuid } from '../../middleware/validate';

export function externalReadRoutes({ pool, redis, clickhouse, config }: AppDeps): Router {
  const router = Router();
  /** The path's website, as the key may see it (404 unknown or another team's, 403 outside a site key). */
  const site = async (req: Request, res: Response) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    return { id: w.id, domain: w.domain, name: w.name, timezone: w.timezone };
  };

  router.get('/usage', async (_req, res) => {
    sendData(res, await usageReport(redis, config.REDIS_PREFIX, requireKeyReader(res)));
  });

  router.get('/websites', async (_req, res) => {
    const r = reader(res);
    const websites =
      r.kind === 'user'
        ? await listWebsitesForUser(pool, r.userId)
        : await listWebsitesForTeam(pool, r.key.teamId, r.key.permission === 'site_access' ? r.key.websiteId : null);
    sendData(res, { websites: websites.map(websiteSummary), total: websites.length });
  });

  router.get('/websites/:websiteId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    sendData(res, { website: websiteDetail(w) });
  });

  router.get('/analytics/:websiteId', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(analyticsQuery, req);
    sendData(res, await analyticsOverview(clickhouse, w, chooseRange(q)));
  });

  router.get('/analytics/:websiteId/visitors', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(visitorsQuery, req);
    sendData(res, await visitorList(clickhouse, w, chooseRange(q), q));
  });

  router.get('/analytics/:websiteId/pages', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(topListQuery, req);
    sendData(res, await topPages(clickhouse, w, chooseRange(q), q.limit));
  });

  router.get('/analytics/:websiteId/countries', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(topListQuery, req);
    sendData(res, await topCountries(clickhouse, w, chooseRange(q), q.limit));
  });

  router.get('/analytics/:websiteId/technology', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(analyticsQuery, req);
    sendData(res, await technology(clickhouse, w, chooseRange(q)));
  });

  /** The path's website with its goals and revenue currency. */
  const conversionSite = async (req: Request, res: Response) => {
    const w = await site(req, res);
    return { ...w, ...(await conversionContext(pool, w.id)) };
  };

  router.get('/analytics/:websiteId/goals', async (req, res) => {
    const w = await conversionSite(req, res);
    sendData(res, await goalReport(clickhouse, w, chooseRange(parseQuery(analyticsQuery, req))));
  });

  router.get('/analytics/:websiteId/events', async (req, res) => {
    const w = await conversionSite(req, res);
    const q = parseQuery(topListQuery, req);
    sendData(res, await customEventReport(clickhouse, w, chooseRange(q), q.limit));
  });

  router.get('/analytics/:websiteId/revenue', async (req, res) => {
    const w = await conversionSite(req, res);
    sendData(res, await revenueReport(clickhouse, w, chooseRange(parseQuery(analyticsQuery, req))));
  });

  router.get('/heatmaps/:websiteId/pages', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(heatmapPagesQuery, req);
    sendData(res, await heatmapPages(clickhouse, w.id, q.limit));
  });

  router.get('/heatmaps/:websiteId/clicks', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(heatmapClicksQuery, req);
    sendData(res, await heatmapClicks(clickhouse, w.id, q.url));
  });

  router.get('/replays/:websiteId/sessions/:sessionId/events', async (req, res) => {
    const w = await site(req, res);
    const { sessionId } = parse(replaySessionParams, req.params);
    sendData(res, await replayEvents(clickhouse, w.id, sessionId));
  });

  router.get('/replays/:websiteId/sessions', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(replaySessionsQuery, req);
    sendData(res, await replaySessions(clickhouse, w.id, q));
  });

  router.get('/errors/:websiteId/groups', async (req, res) => {
    const w = await site(req, res);
    const q = parseQuery(errorGroupsQuery, req);
    sendData(res, await listErrorGroups(pool, w.id, q));
  });

  router.get('/track/realtime/:websiteId', async (req, res) => {
    sendData(res, await realtimeSnapshot(redis, config.REDIS_PREFIX, (await site(req, res)).id));
  });

  return router;
}
