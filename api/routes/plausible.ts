// POST /api/v2/query: Plausible's Stats API v2 (request and response shapes), so a script written for
// Plausible works against Tidemark with another base URL and key. site_id is the website's domain, as in
// Plausible, or its UUID. Parsing and answering live in lib/stats/plausible/.
import { type Request, type Response, Router } from 'express';
import type { Pool } from 'pg';
import { conversionContext } from '../../lib/accounts/goals';
import { websiteIdsByDomain } from '../../lib/accounts/websites';
import { chartAnomalies } from '../../lib/anomalies/store';
import { UUID } from '../../lib/checks';
import { HttpError, notFound } from '../../lib/errors';
import { parsePlausibleQuery } from '../../lib/stats/plausible/query';
import { plausibleResponse } from '../../lib/stats/plausible/run';
import type { AppDeps } from '../deps';
import { readableWebsite, reader } from '../middleware/auth';

/** The website as a Plausible query reads it (its goals only when the query asks about conversions). */
export function plausibleSite(pool: Pool, website: { id: string; domain: string; timezone: string }) {
  return {
    id: website.id,
    domain: website.domain,
    timezone: website.timezone,
    conversions: () => conversionContext(pool, website.id),
  };
}

export function plausibleRoutes({ pool, clickhouse }: AppDeps): Router {
  const router = Router();
  router.post('/query', async (req: Request, res: Response) => {
    const query = parsePlausibleQuery(req.body);
    const siteId = query.body.site_id;
    let websiteId = siteId;
    if (!UUID.test(siteId)) {
      const r = reader(res);
      const ids = await websiteIdsByDomain(
        pool,
        siteId,
        r.kind === 'key' ? { teamId: r.key.teamId } : { userId: r.userId },
      );
      if (ids.length === 0) throw notFound('Website not found');
      if (ids.length > 1) {
        throw new HttpError(
          400,
          'AMBIGUOUS_SITE_ID',
          `Several of your websites have the domain '${siteId}': use the website's UUID as site_id.`,
        );
      }
      websiteId = ids[0];
    }
    const website = await readableWebsite(pool, res, websiteId.toLowerCase());
    const answer = await plausibleResponse(clickhouse, plausibleSite(pool, website), query);
    // A signed-in reader's question over time carries the anomalies its range overlaps, for the dashboard's
    // chart to mark without asking again (API keys and share tokens get Plausible's shape alone).
    if (query.time && reader(res).kind === 'user') {
      const [from, to] = answer.query.date_range;
      const anomalies = await chartAnomalies(pool, website.id, Date.parse(from), Date.parse(to) + 1000);
      res.json({ ...answer, meta: { ...answer.meta, anomalies } });
      return;
    }
    res.json(answer);
  });
  return router;
}
