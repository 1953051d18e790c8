// External API (older reference): POST /api/external/v1/websites creates a website in the key's team.
import { Router } from 'express';
import { externalCreateWebsiteBody } from '../../../lib/accounts/schemas';
import { createWebsite, websiteSummary } from '../../../lib/accounts/websites';
import { forbidden } from '../../../lib/errors';
import type { AppDeps } from '../../deps';
import { requireKeyReader } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseBody } from '../../middleware/validate';

export function externalWebsiteWriteRoutes({ pool }: AppDeps): Router {
  const router = Router();
  router.post('/websites', async (req, res) => {
    const key = requireKeyReader(res);
    if (key.permission !== 'full_access') throw forbidden('Creating websites needs a full_access key');
    const body = parseBody(externalCreateWebsiteBody, req);
    const w = await createWebsite(pool, key.teamId, null, body);
    sendData(res, { website: websiteSummary(w) }, 201);
  });
  return router;
}
