// /api/onboarding/progress: the caller's own onboarding record (spec "Dashboard APIs", user-scoped).
import { Router } from 'express';
import { getOnboarding, onboardingBody, saveOnboarding } from '../../lib/accounts/onboarding';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody } from '../middleware/validate';

export function onboardingRoutes({ pool, config }: AppDeps): Router {
  const router = Router();
  router.use(requireJwt(config.JWT_SECRET, pool));

  router.get('/progress', async (_req, res) => {
    sendData(res, await getOnboarding(pool, userId(res)));
  });

  router.post('/progress', async (req, res) => {
    sendData(res, await saveOnboarding(pool, userId(res), parseBody(onboardingBody, req)));
  });

  return router;
}
