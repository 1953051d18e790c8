// External API v1: POST /query/{websiteId} (spec; issue 27): a natural-language question answered from a typed
// query plan run through lib/stats. Scale or higher; the mount charges its 3 credits (api/app.ts), refunded
// when the answer is not a success.
import { type RequestHandler, Router } from 'express';
import { conversionContext } from '../../../lib/accounts/goals';
import { getTeam, liftHint } from '../../../lib/accounts/teams';
import { forbidden } from '../../../lib/errors';
import { interpretAndAnswer } from '../../../lib/nlquery/ask';
import { queryBody } from '../../../lib/nlquery/schemas';
import { customEventNames } from '../../../lib/nlquery/vocabulary';
import { type PlanName, planAtLeast } from '../../../lib/plans';
import { usableTimeZone } from '../../../lib/stats/timeZones';
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

export function externalQueryRoutes({ pool, clickhouse, redis, config }: AppDeps): Router {
  const router = Router();
  router.post('/:websiteId', async (req, res) => {
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    // A signed-in reader is held to the plan of the website's team, as a key is to its own.
    if (reader(res).kind === 'user') {
      const team = await getTeam(pool, w.team_id);
      if (team && !planAtLeast(team.plan, QUERY_PLAN)) throw planRequired(team.plan, team.id);
    }
    const body = parseBody(queryBody, req);
    const site = { id: w.id, timezone: usableTimeZone(w.timezone), ...(await conversionContext(pool, w.id)) };
    const events = await customEventNames(clickhouse, site);
    sendData(
      res,
      await interpretAndAnswer({ clickhouse, redis, redisPrefix: config.REDIS_PREFIX }, site, body, events),
    );
  });
  return router;
}
