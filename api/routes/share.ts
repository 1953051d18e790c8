// Shared dashboards (issue 24 point 5): the sharing settings of a website (admins), and the public side a
// shared link's page uses — what the website is, a share token for the password (if any), and Stats v2 reads
// with that token. The token is its own credential (lib/public/share.ts): only the share query route below
// accepts it, for its website only, so it reaches no visitor-level data, annotations, exports or settings.
import { type NextFunction, type Request, type Response, Router } from 'express';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { verifyPassword } from '../../lib/auth/passwords';
import { giveBack, takeAttempt, windowKeys } from '../../lib/auth/windows';
import { notFound, orUnavailable, rateLimited, unauthorized } from '../../lib/errors';
import { normalizeIp } from '../../lib/ingest/accept/enrich';
import type { SiteConfigCache } from '../../lib/ingest/accept/siteCache';
import { PublicLimit } from '../../lib/public/limit';
import {
  getShare,
  requireShared,
  SHARE_TOKEN_TTL_SECONDS,
  shareInfoView,
  shareOfToken,
  sharingView,
  signShareToken,
  updateSharing,
  verifyShareToken,
} from '../../lib/public/share';
import { type ShareTokenView, shareTokenBody, sharingBody } from '../../lib/public/shareSchemas';
import { parsePlausibleQuery } from '../../lib/stats/plausible/query';
import { plausibleResponse } from '../../lib/stats/plausible/run';
import type { AppDeps } from '../deps';
import { bearer, requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';
import { plausibleSite } from './plausible';

/** Password guesses one address may make on one shared website per window, and all addresses together. */
export const SHARE_ATTEMPTS_PER_CLIENT = 10;
export const SHARE_ATTEMPTS_PER_SITE = 100;
export const SHARE_WINDOW_SECONDS = 15 * 60;

/** /api/websites/:websiteId/sharing: read (viewer) and change (admin) the website's sharing. */
export function sharingRoutes(deps: AppDeps, sites: SiteConfigCache): Router {
  const { pool } = deps;
  const router = Router({ mergeParams: true });
  router.use(requireJwt(deps.config.JWT_SECRET, pool));
  const website = (req: Request) => pathUuid(req, 'websiteId', 'Website');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    const share = await getShare(pool, w.id);
    if (!share) throw notFound('Website not found');
    sendData(res, sharingView(share));
  });

  router.put('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'admin');
    const body = parseBody(sharingBody, req);
    await updateSharing(pool, w.id, body);
    // /e/realtime reads public_dashboard from the site cache: it follows at once.
    sites.invalidate(w.tracking_code);
    const share = await getShare(pool, w.id);
    if (!share) throw notFound('Website not found');
    sendData(res, sharingView(share));
  });
  return router;
}

/** /api/share/:websiteId: the shared page's view of the website and its share token. No credential. */
export function shareRoutes(deps: AppDeps): Router {
  const { pool, config, redis } = deps;
  const router = Router();
  const limit = new PublicLimit(redis, config.REDIS_PREFIX, deps.ingest.salts);
  const key = windowKeys(config.REDIS_PREFIX, config.JWT_SECRET, 'share-password');

  router.use(async (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    await limit.take(normalizeIp(req.ip));
    next();
  });

  router.get('/:websiteId', async (req, res) => {
    sendData(res, shareInfoView(await requireShared(pool, String(req.params.websiteId))));
  });

  router.post('/:websiteId/token', async (req, res) => {
    const share = await requireShared(pool, String(req.params.websiteId));
    // No body at all is a link without a password asked for its token (curl -X POST): the same as {}.
    const body = req.body === undefined ? {} : parseBody(shareTokenBody, req);
    if (share.passwordHash !== null) {
      // Counted before the (slow) check, so a burst of parallel guesses counts whole; a success gives back.
      const windows = [
        {
          key: key.client('pair', req.ip, share.website.id),
          limit: SHARE_ATTEMPTS_PER_CLIENT,
          seconds: SHARE_WINDOW_SECONDS,
        },
        { key: key('site', share.website.id), limit: SHARE_ATTEMPTS_PER_SITE, seconds: SHARE_WINDOW_SECONDS },
      ];
      const wait = await orUnavailable(takeAttempt(redis, windows));
      if (wait > 0) throw rateLimited('Too many password attempts for this dashboard; try again later', wait);
      if (!body.password || !(await verifyPassword(share.passwordHash, body.password))) {
        throw unauthorized(body.password ? 'Wrong password' : 'This dashboard needs its password');
      }
      await giveBack(
        redis,
        windows.map((w) => w.key),
      ).catch(() => undefined);
    }
    sendData(res, {
      token: signShareToken(config.JWT_SECRET, share),
      expires_in: SHARE_TOKEN_TTL_SECONDS,
    } satisfies ShareTokenView);
  });
  return router;
}

/**
 * POST /api/v2/query with a share token: its website's aggregates, no API credits or key limits, the public
 * per-address limit instead. Any other credential goes on to the Stats v2 route (next()).
 */
export function shareQueryRoutes(deps: AppDeps): Router {
  const { pool, config, clickhouse } = deps;
  const router = Router();
  const limit = new PublicLimit(deps.redis, config.REDIS_PREFIX, deps.ingest.salts);
  router.post('/query', async (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    const claims = token ? verifyShareToken(config.JWT_SECRET, token) : undefined;
    if (!claims) return next();
    await limit.take(normalizeIp(req.ip));
    const share = await shareOfToken(pool, claims);
    if (!share) throw unauthorized('This shared link’s access ended (sharing was turned off or its password changed)');
    const query = parsePlausibleQuery(req.body);
    const siteId = query.body.site_id.toLowerCase();
    const website = share.website;
    // The token reads its own website only; any other site_id is as unknown as a website that does not exist.
    if (siteId !== website.id && siteId !== website.domain.toLowerCase()) throw notFound('Website not found');
    res.json(await plausibleResponse(clickhouse, plausibleSite(pool, website), query));
  });
  return router;
}
