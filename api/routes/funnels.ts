// /api/websites/:websiteId/funnels (issue 22): editors manage saved funnels, viewers read them and their results.
import { type Request, Router } from 'express';
import { createFunnelBody, updateFunnelBody } from '../../lib/accounts/funnelSchemas';
import {
  createFunnel,
  deleteFunnel,
  funnelView,
  getFunnel,
  INVALID_FUNNEL_STEPS,
  listFunnels,
  updateFunnel,
} from '../../lib/accounts/funnels';
import type { DeletedView } from '../../lib/accounts/responses';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { badRequest, HttpError } from '../../lib/errors';
import { dashboardFunnelResults, parseFunnelQuery } from '../../lib/stats/funnels';
import type { z } from '../../lib/zod';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { describeZodError, parseBody, pathUuid } from '../middleware/validate';

/** A body whose steps are wrong is refused with the funnel code; anything else with VALIDATION_ERROR. */
function parseFunnelBody<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const result = schema.safeParse(req.body);
  if (!result.success && result.error.issues[0]?.path[0] === 'steps') {
    throw badRequest(describeZodError(result.error), INVALID_FUNNEL_STEPS);
  }
  return parseBody(schema, req);
}

export function funnelRoutes({ pool, clickhouse }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  const website = (req: Request) => pathUuid(req, 'websiteId', 'Website');
  const funnel = (req: Request) => pathUuid(req, 'funnelId', 'Funnel');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, { funnels: (await listFunnels(pool, w.id)).map(funnelView) });
  });

  router.post('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const created = await createFunnel(pool, w.id, userId(res), parseFunnelBody(createFunnelBody, req));
    sendData(res, { funnel: funnelView(created) }, 201);
  });

  router.get('/:funnelId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, { funnel: funnelView(await getFunnel(pool, w.id, funnel(req))) });
  });

  router.put('/:funnelId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const body = parseFunnelBody(updateFunnelBody, req);
    sendData(res, { funnel: funnelView(await updateFunnel(pool, w.id, funnel(req), body)) });
  });

  router.delete('/:funnelId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    await deleteFunnel(pool, w.id, funnel(req));
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  router.get('/:funnelId/results', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    const saved = await getFunnel(pool, w.id, funnel(req));
    const q = parseFunnelQuery(req.query as Record<string, unknown>, w);
    if ('error' in q) throw new HttpError(400, q.error.code, q.error.message);
    sendData(res, await dashboardFunnelResults(clickhouse, w, saved, q));
  });
  return router;
}
