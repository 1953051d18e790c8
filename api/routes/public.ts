// Public endpoints (spec "Public endpoints", DESIGN §3): widgets and real-time counters addressed by tracking
// code, no credential. CORS for any origin without credentials, a per-address limit, short public caching,
// and widgets that any page may frame. What they read and how it is held: lib/public/.
import { type Request, type Response, Router } from 'express';
import { HttpError } from '../../lib/errors';
import { normalizeIp } from '../../lib/ingest/accept/enrich';
import type { SiteConfig } from '../../lib/ingest/accept/siteCache';
import { previewWidget, realtimeWidget, recentWidget, WIDGET_CSP, widgetError } from '../../lib/public/html';
import { PublicLimit } from '../../lib/public/limit';
import { PRESENCE_TTL_MS, PublicReads, STATS_TTL_MS } from '../../lib/public/reads';
import type { AppDeps } from '../deps';
import { openCors } from '../middleware/cors';
import { sendData } from '../middleware/envelope';

/** Browser and edge caching: live numbers a little longer than this process holds them, figures a minute. */
const LIVE_MAX_AGE = (2 * PRESENCE_TTL_MS) / 1000;
const STATS_MAX_AGE = STATS_TTL_MS / 1000;

export function publicRoutes(deps: AppDeps): Router {
  const reads = new PublicReads({
    sites: deps.ingest.sites,
    pool: deps.pool,
    redis: deps.redis,
    redisPrefix: deps.config.REDIS_PREFIX,
    clickhouse: deps.clickhouse,
  });
  const limit = new PublicLimit(deps.redis, deps.config.REDIS_PREFIX, deps.ingest.salts);
  const router = Router();
  const cors = openCors('GET, OPTIONS');

  // Errors stay uncached; a success replaces this with its own max-age.
  const begin = async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    await limit.take(normalizeIp(req.ip));
  };
  const cacheFor = (res: Response, seconds: number) => res.setHeader('Cache-Control', `public, max-age=${seconds}`);

  const counter =
    (read: (site: SiteConfig) => Promise<unknown>, maxAge: number) => async (req: Request, res: Response) => {
      await begin(req, res);
      const data = await read(await reads.site(String(req.params.code)));
      cacheFor(res, maxAge);
      sendData(res, data);
    };
  router.get(
    '/e/live/:code',
    cors,
    counter((s) => reads.live(s), LIVE_MAX_AGE),
  );
  router.get(
    '/e/stats/:code',
    cors,
    counter((s) => reads.stats(s), STATS_MAX_AGE),
  );
  router.get(
    '/e/:code/status',
    cors,
    counter((s) => reads.status(s), LIVE_MAX_AGE),
  );
  router.get('/e/realtime/:websiteId', cors, async (req, res) => {
    await begin(req, res);
    const data = await reads.realtime(await reads.publicDashboard(String(req.params.websiteId)));
    cacheFor(res, LIVE_MAX_AGE);
    sendData(res, data);
  });

  // A widget is HTML unless JSON is asked for (Vary: Accept); its errors are small documents too.
  const widget =
    <T>(read: (site: SiteConfig) => Promise<T>, render: (data: T) => string, maxAge: number) =>
    async (req: Request, res: Response) => {
      res.vary('Accept');
      const asJson = req.accepts(['html', 'json']) === 'json';
      try {
        await begin(req, res);
        const data = await read(await reads.site(String(req.params.code)));
        cacheFor(res, maxAge);
        if (asJson) sendData(res, data);
        else sendHtml(res, 200, render(data));
      } catch (err) {
        if (asJson || !(err instanceof HttpError)) throw err;
        res.set(err.headers);
        sendHtml(res, err.status, widgetError(err.status, widgetMessage(err)));
      }
    };
  router.get(
    '/widgets/:code/realtime',
    cors,
    widget((s) => reads.realtimeWidget(s), realtimeWidget, LIVE_MAX_AGE),
  );
  router.get(
    '/widgets/:code/preview',
    cors,
    widget((s) => reads.preview(s), previewWidget, STATS_MAX_AGE),
  );
  router.get(
    '/widgets/:code/recent',
    cors,
    widget((s) => reads.recent(s), recentWidget, STATS_MAX_AGE),
  );
  for (const path of [
    '/e/live/:code',
    '/e/stats/:code',
    '/e/:code/status',
    '/e/realtime/:websiteId',
    '/widgets/:code/:kind',
  ])
    router.options(path, cors);
  return router;
}

function widgetMessage(err: HttpError): string {
  if (err.status === 404) return 'This widget’s tracking code is unknown.';
  if (err.status === 429) return 'Too many requests; this widget will be back in a minute.';
  return 'This widget is unavailable right now; try again shortly.';
}

// Framing is allowed from anywhere (no X-Frame-Options, no frame-ancestors); the document itself loads nothing.
function sendHtml(res: Response, status: number, html: string): void {
  res.setHeader('Content-Security-Policy', WIDGET_CSP);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.status(status).type('html').send(html);
}
