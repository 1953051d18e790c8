// The worker's half of a question on the LLM path (issue 27): read what the model may know of the website,
// get a plan from the model (or, when it fails, from the interpreter), run it through lib/stats, and phrase
// the summary. The web role waits for this result (lib/nlquery/questionQueue.ts).
import type OpenAI from 'openai';
import type { Pool } from 'pg';
import { conversionContext } from '../accounts/goals';
import { getWebsite } from '../accounts/websites';
import type { ClickHouseClient } from '../clickhouse/client';
import type { Redis } from '../redis';
import { topPropertyValues } from '../stats/reads/eventProperties';
import { formatDate, today } from '../stats/time';
import { usableTimeZone } from '../stats/timeZones';
import type { QueryAnswer, QuerySite } from './answer';
import { answerQuestion, vocabularyOf, withContext } from './ask';
import { interpret } from './interpret';
import { type ModelContext, modelPlan, modelSummary, type Tokens } from './model';
import type { QueryPlan } from './plan';
import type { QueryBody, QueryData } from './schemas';
import { customEventNames } from './vocabulary';

export interface QuestionJob {
  websiteId: string;
  question: string;
  context?: QueryBody['context'];
}

export type QuestionPath = 'llm' | 'interpreter';
export type QuestionOutcome =
  | {
      kind: 'answer';
      data: QueryData;
      plan: QueryPlan;
      path: QuestionPath;
      tokens: Tokens;
      fallback?: 'invalid' | 'unreachable';
    }
  | { kind: 'unprocessable'; tokens: Tokens; fallback?: 'invalid' | 'unreachable' };

export interface QuestionDeps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  redis: Redis;
  redisPrefix: string;
  client: OpenAI;
  model: string;
}

// How much of the custom events the model is shown: enough to map words to names, bounded in tokens.
const CONTEXT_EVENTS = 20;
const CONTEXT_DAYS = 30;
/** The model's plan is trusted this much; the interpreter reports its own confidence. */
const MODEL_CONFIDENCE = 0.9;

// The context is read once a minute per website: its property scan grows with the site's custom events, and a
// burst of questions (a conversation) would otherwise pay it on each one.
const CONTEXT_KEEP_MS = 60_000;
const contexts = new Map<string, { at: number; context: Promise<ModelContext> }>();

function modelContext(deps: QuestionDeps, site: QuerySite, events: string[], now: number): Promise<ModelContext> {
  const hit = contexts.get(site.id);
  if (hit && now - hit.at < CONTEXT_KEEP_MS) return hit.context;
  const context = readModelContext(deps, site, events, now);
  context.catch(() => contexts.delete(site.id));
  if (contexts.size > 10_000) contexts.clear();
  contexts.set(site.id, { at: now, context });
  return context;
}

async function readModelContext(
  deps: QuestionDeps,
  site: QuerySite,
  events: string[],
  now: number,
): Promise<ModelContext> {
  const names = events.slice(0, CONTEXT_EVENTS);
  const props = await topPropertyValues(
    deps.clickhouse,
    { websiteId: site.id, start: now - CONTEXT_DAYS * 86_400_000, end: now, names },
    5,
    5,
  );
  return {
    today: formatDate(today(site.timezone, now)),
    timeZone: site.timezone,
    currency: site.currency,
    goals: site.goals.map((g) => g.name),
    events: names.map((name) => ({
      name,
      properties: props
        .filter((p) => p.name === name)
        .map((p) => ({ key: p.key, values: p.values.map((v) => v.value) })),
    })),
  };
}

export async function answerQuestionJob(
  deps: QuestionDeps,
  job: QuestionJob,
  now = Date.now(),
): Promise<QuestionOutcome> {
  const w = await getWebsite(deps.pool, job.websiteId);
  if (!w) return { kind: 'unprocessable', tokens: { prompt: 0, completion: 0 } };
  const site: QuerySite = {
    id: w.id,
    timezone: usableTimeZone(w.timezone),
    ...(await conversionContext(deps.pool, w.id)),
  };
  const events = await customEventNames(deps.clickhouse, site, now);
  const stats = { clickhouse: deps.clickhouse, redis: deps.redis, redisPrefix: deps.redisPrefix };
  const asked = await modelPlan(deps.client, deps.model, job.question, await modelContext(deps, site, events, now));
  let tokens = asked.tokens;
  let path: QuestionPath = 'llm';
  let plan = asked.ok ? asked.plan : undefined;
  let confidence = MODEL_CONFIDENCE;
  if (!plan) {
    const read = interpret(job.question, vocabularyOf(site, events));
    if (!read) return { kind: 'unprocessable', tokens, fallback: asked.ok ? undefined : asked.reason };
    [plan, confidence, path] = [read.plan, read.confidence, 'interpreter'];
  }
  const phrase = async (answer: QueryAnswer) => {
    const phrased = await modelSummary(deps.client, deps.model, job.question, answer.results, answer.summary);
    tokens = {
      prompt: tokens.prompt + phrased.tokens.prompt,
      completion: tokens.completion + phrased.tokens.completion,
    };
    return phrased.summary ?? answer.summary;
  };
  const chosen = withContext(plan, job.context);
  const data = await answerQuestion(
    stats,
    site,
    job.question,
    chosen,
    confidence,
    now,
    path === 'llm' ? phrase : undefined,
  );
  return { kind: 'answer', path, tokens, data, plan: chosen, ...(asked.ok ? {} : { fallback: asked.reason }) };
}
