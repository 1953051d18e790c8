// /api/websites/:websiteId/goals (DESIGN §3): editors manage, viewers read.
import { Router } from 'express';
import { createGoal, deleteGoal, goalView, listGoals, updateGoal } from '../../lib/accounts/goals';
import type { DeletedView } from '../../lib/accounts/responses';
import { createGoalBody, updateGoalBody } from '../../lib/accounts/schemas';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { bumpGoalsVersion } from '../../lib/ingest/accept/goalsCache';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

export function goalRoutes({ pool, redis, config }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  // Ingestion caches active goal names; every change tells it to reload.
  const changed = (websiteId: string) => bumpGoalsVersion(redis, config.REDIS_PREFIX, websiteId);
  const website = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'websiteId', 'Website');

  router.get('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'viewer');
    sendData(res, { goals: (await listGoals(pool, w.id)).map(goalView) });
  });

  router.post('/', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const goal = await createGoal(pool, w.id, userId(res), parseBody(createGoalBody, req));
    await changed(w.id);
    sendData(res, { goal: goalView(goal) }, 201);
  });

  router.put('/:goalId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    const goal = await updateGoal(pool, w.id, pathUuid(req, 'goalId', 'Goal'), parseBody(updateGoalBody, req));
    await changed(w.id);
    sendData(res, { goal: goalView(goal) });
  });

  router.delete('/:goalId', async (req, res) => {
    const { website: w } = await requireWebsiteRole(pool, website(req), userId(res), 'editor');
    await deleteGoal(pool, w.id, pathUuid(req, 'goalId', 'Goal'));
    await changed(w.id);
    sendData(res, { deleted: true } satisfies DeletedView);
  });
  return router;
}
