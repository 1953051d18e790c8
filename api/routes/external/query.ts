// External API v1: POST /query/{websiteId} (spec; issue 27): a natural-language question answered from a typed
// query plan run through lib/stats. Scale or higher; the mount charges its 3 credits (api/app.ts), refunded
// when the answer is not a success.
import { type RequestHandler, Router } from 'express';
import type { Pool } from 'pg';
import { getTeam, liftHint } from '../../../lib/accounts/teams';
import { forbidden } from '../../../lib/errors';
import { type QuestionMetrics, questionMetrics } from '../../../lib/nlquery/metrics';
import { queryBody } from '../../../lib/nlquery/schemas';
import { type AskDeps, askWebsite } from '../../../lib/nlquery/service';
import { type PlanName, planAtLeast } from '../../../lib/plans';
import type { AppDeps } from '../../deps';
import { readableWebsite, reader } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseBody, pathUuid } from '../../middleware/validate';

export const QUERY_PLAN: PlanName = 'scale';
export const QUERY_CREDITS = 3;

const planRequired = (plan: PlanName, teamId: string) =>
  forbidden(
    `Natural-language queries need the Scale plan or higher (this team is on ${plan}); ${liftHint(teamId)}`,
    'PLAN_REQUIRED',
  );

/** Before any credit is charged: an API key below Scale is refused. */
export function queryKeyGate(): RequestHandler {
  return (_req, res, next) => {
    const r = reader(res);
    if (r.kind === 'key' && !planAtLeast(r.key.plan, QUERY_PLAN)) throw planRequired(r.key.plan, r.key.teamId);
    next();
  };
}

export function externalQueryRoutes(deps: AppDeps): Router {
  const ask = askDeps(deps);
  const router = Router();
  router.post('/:websiteId', async (req, res) => {
    const w = await readableWebsite(deps.pool, res, pathUuid(req, 'websiteId', 'Website'));
    // A signed-in reader is held to the plan of the website's team, as a key is to its own.
    if (reader(res).kind === 'user') await requireQueryPlan(deps.pool, w.team_id);
    const body = parseBody(queryBody, req);
    sendData(res, (await askWebsite(ask, w, body)).data);
  });
  return router;
}

/** What askWebsite needs from the app, its metrics registered once per app (both routes share them). */
export function askDeps(deps: AppDeps): AskDeps {
  const known = registered.get(deps.metrics.registry);
  const metrics = known ?? questionMetrics(deps.metrics.registry);
  registered.set(deps.metrics.registry, metrics);
  return {
    pool: deps.pool,
    clickhouse: deps.clickhouse,
    redis: deps.redis,
    redisPrefix: deps.config.REDIS_PREFIX,
    timeoutMs: deps.config.LLM_TIMEOUT_MS,
    questions: deps.questions,
    metrics,
  };
}
const registered = new WeakMap<object, QuestionMetrics>();

/** 403 PLAN_REQUIRED unless the team is on Scale or higher. */
export async function requireQueryPlan(pool: Pool, teamId: string): Promise<void> {
  const team = await getTeam(pool, teamId);
  if (team && !planAtLeast(team.plan, QUERY_PLAN)) throw planRequired(team.plan, team.id);
}
