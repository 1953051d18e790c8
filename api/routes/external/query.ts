// External API v1: POST /query/{websiteId} (spec; issue 27): a natural-language question answered from a typed
// query plan run through lib/stats. Scale or higher; the mount charges its 3 credits (api/app.ts), refunded
// when the answer is not a success.
import { type RequestHandler, Router } from 'express';
import { conversionContext } from '../../../lib/accounts/goals';
import { getTeam, liftHint } from '../../../lib/accounts/teams';
import { forbidden, orUnavailable, serviceUnavailable } from '../../../lib/errors';
import { interpretAndAnswer, unprocessable } from '../../../lib/nlquery/ask';
import { type AnswerPath, questionMetrics } from '../../../lib/nlquery/metrics';
import { cachedAnswer, rememberAnswer } from '../../../lib/nlquery/questionQueue';
import { type QueryData, queryBody } from '../../../lib/nlquery/schemas';
import { customEventNames } from '../../../lib/nlquery/vocabulary';
import { type PlanName, planAtLeast } from '../../../lib/plans';
import { usableTimeZone } from '../../../lib/stats/timeZones';
import type { AppDeps } from '../../deps';
import { readableWebsite, reader } from '../../middleware/auth';
import { sendData } from '../../middleware/envelope';
import { parseBody, pathUuid } from '../../middleware/validate';

export const QUERY_PLAN: PlanName = 'scale';
export const QUERY_CREDITS = 3;
/** A question that timed out is worth retrying soon: the model may have been briefly busy. */
const RETRY_AFTER_SECONDS = 10;

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
  const { pool, clickhouse, redis, config, questions } = deps;
  const metrics = questionMetrics(deps.metrics.registry);
  const stats = { clickhouse, redis, redisPrefix: config.REDIS_PREFIX };
  const answered = (path: AnswerPath, started: number) => {
    metrics.questions.inc({ path });
    metrics.duration.observe({ path }, (performance.now() - started) / 1000);
  };
  const router = Router();
  router.post('/:websiteId', async (req, res) => {
    const started = performance.now();
    const w = await readableWebsite(pool, res, pathUuid(req, 'websiteId', 'Website'));
    // A signed-in reader is held to the plan of the website's team, as a key is to its own.
    if (reader(res).kind === 'user') {
      const team = await getTeam(pool, w.team_id);
      if (team && !planAtLeast(team.plan, QUERY_PLAN)) throw planRequired(team.plan, team.id);
    }
    const body = parseBody(queryBody, req);
    if (!questions) {
      const site = { id: w.id, timezone: usableTimeZone(w.timezone), ...(await conversionContext(pool, w.id)) };
      const events = await customEventNames(clickhouse, site);
      let data: QueryData;
      try {
        data = await interpretAndAnswer(stats, site, body, events);
      } catch (err) {
        if ((err as { code?: string }).code === 'QUERY_UNPROCESSABLE')
          metrics.failures.inc({ reason: 'unprocessable' });
        throw err;
      }
      answered('interpreter', started);
      return sendData(res, data);
    }
    const job = { websiteId: w.id, question: body.question, context: body.context };
    const hit = await cachedAnswer(redis, config.REDIS_PREFIX, job);
    if (hit) {
      answered('cache', started);
      return sendData(res, hit);
    }
    const outcome = await orUnavailable(questions.ask(job, config.LLM_TIMEOUT_MS));
    if (outcome === 'timeout') {
      metrics.failures.inc({ reason: 'timeout' });
      throw serviceUnavailable('The question was not answered in time; retry shortly', RETRY_AFTER_SECONDS);
    }
    metrics.tokens.inc({ kind: 'prompt' }, outcome.tokens.prompt);
    metrics.tokens.inc({ kind: 'completion' }, outcome.tokens.completion);
    if (outcome.fallback) metrics.failures.inc({ reason: outcome.fallback });
    if (outcome.kind === 'unprocessable') {
      metrics.failures.inc({ reason: 'unprocessable' });
      throw unprocessable();
    }
    await rememberAnswer(redis, config.REDIS_PREFIX, job, outcome.data);
    answered(outcome.path, started);
    sendData(res, outcome.data);
  });
  return router;
}
