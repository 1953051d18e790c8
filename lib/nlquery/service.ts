// One question about one website, by whichever path answers it (issue 27): the LLM path through the `llm`
// queue when a model is configured (with its short cache), else the interpreter; a conversation's follow-up
// is the previous plan changed where the follow-up says (followUp.ts). Shared by POST /query and
// POST /api/conversations/:id/ask; checking who may ask is the routes' business.
import type { Pool } from 'pg';
import { conversionContext } from '../accounts/goals';
import type { WebsiteRow } from '../accounts/websites';
import type { ClickHouseClient } from '../clickhouse/client';
import { orUnavailable, serviceUnavailable } from '../errors';
import type { Redis } from '../redis';
import { usableTimeZone } from '../stats/timeZones';
import type { QuerySite } from './answer';
import { answerQuestion, interpretAndAnswer, unprocessable, vocabularyOf, withContext } from './ask';
import { followUp } from './followUp';
import type { AnswerPath, QuestionMetrics } from './metrics';
import type { QueryPlan } from './plan';
import { type Answered, cachedAnswer, type QuestionQueue, rememberAnswer } from './questionQueue';
import type { QueryBody } from './schemas';
import { customEventNames } from './vocabulary';

export interface AskDeps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  redis: Redis;
  redisPrefix: string;
  timeoutMs: number;
  questions?: QuestionQueue;
  metrics: QuestionMetrics;
}

/** A question that timed out is worth retrying soon: the model may have been briefly busy. */
const RETRY_AFTER_SECONDS = 10;

export async function askWebsite(
  deps: AskDeps,
  w: WebsiteRow,
  body: QueryBody,
  previous?: QueryPlan,
): Promise<Answered> {
  const started = performance.now();
  const answered = (path: AnswerPath, answer: Answered) => {
    deps.metrics.questions.inc({ path });
    deps.metrics.duration.observe({ path }, (performance.now() - started) / 1000);
    return answer;
  };
  const failed = (reason: string) => deps.metrics.failures.inc({ reason });
  const site: QuerySite = {
    id: w.id,
    timezone: usableTimeZone(w.timezone),
    ...(await conversionContext(deps.pool, w.id)),
  };
  const stats = { clickhouse: deps.clickhouse, redis: deps.redis, redisPrefix: deps.redisPrefix };
  const events = await customEventNames(deps.clickhouse, site);

  const leaning = followUp(body.question, previous, vocabularyOf(site, events));
  if (leaning) {
    const plan = withContext(leaning.plan, body.context);
    return answered('interpreter', {
      plan,
      data: await answerQuestion(stats, site, body.question, plan, leaning.confidence),
    });
  }
  if (!deps.questions) {
    try {
      return answered('interpreter', await interpretAndAnswer(stats, site, body, events));
    } catch (err) {
      if ((err as { code?: string }).code === 'QUERY_UNPROCESSABLE') failed('unprocessable');
      throw err;
    }
  }
  const job = { websiteId: w.id, question: body.question, context: body.context };
  const hit = await cachedAnswer(deps.redis, deps.redisPrefix, job);
  if (hit) return answered('cache', hit);
  const outcome = await orUnavailable(deps.questions.ask(job, deps.timeoutMs));
  if (outcome === 'timeout') {
    failed('timeout');
    throw serviceUnavailable('The question was not answered in time; retry shortly', RETRY_AFTER_SECONDS);
  }
  deps.metrics.tokens.inc({ kind: 'prompt' }, outcome.tokens.prompt);
  deps.metrics.tokens.inc({ kind: 'completion' }, outcome.tokens.completion);
  if (outcome.fallback) failed(outcome.fallback);
  if (outcome.kind === 'unprocessable') {
    failed('unprocessable');
    throw unprocessable();
  }
  const answer = { data: outcome.data, plan: outcome.plan };
  await rememberAnswer(deps.redis, deps.redisPrefix, job, answer);
  return answered(outcome.path, answer);
}
