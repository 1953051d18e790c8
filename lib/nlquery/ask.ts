// One question answered (issue 27): the interpreter's plan, with the caller's context winning over what the
// question says, run through lib/stats. A question no plan fits is a 422 naming questions that do.
import { HttpError } from '../errors';
import { type AnswerDeps, answerPlan, type QueryAnswer, type QuerySite, suggestionsFor } from './answer';
import { interpret, type SiteVocabulary } from './interpret';
import type { QueryPlan } from './plan';
import type { QueryBody, QueryData } from './schemas';

export function unprocessable(): HttpError {
  const tries = suggestionsFor(undefined)
    .map((s) => `"${s}"`)
    .join('; ');
  return new HttpError(
    422,
    'QUERY_UNPROCESSABLE',
    `The question could not be read as a question about this website's analytics. Try: ${tries}`,
  );
}

/** The plan with the request's context applied: its range and comparison win over the question's. */
export function withContext(plan: QueryPlan, context: QueryBody['context']): QueryPlan {
  if (!context || plan.intent === 'realtime') return plan;
  const out = { ...plan };
  if (context.time_range) out.range = context.time_range;
  if (context.compare_to && !plan.interval && !plan.dimension) {
    out.compare_to = context.compare_to;
    if (out.intent === 'total') out.intent = 'comparison';
  }
  return out;
}

export function vocabularyOf(site: QuerySite, events: readonly string[] = []): SiteVocabulary {
  return { goals: site.goals.map((g) => g.name), events };
}

/** Answers a plan already chosen (by the interpreter or a model) in the endpoint's shape; `phrase` may reword the summary. */
export async function answerQuestion(
  deps: AnswerDeps,
  site: QuerySite,
  question: string,
  plan: QueryPlan,
  confidence: number,
  now = Date.now(),
  phrase?: (answer: QueryAnswer) => Promise<string>,
): Promise<QueryData> {
  const answer = await answerPlan(deps, site, plan, now);
  return {
    question,
    intent: plan.intent,
    confidence,
    time_range: plan.intent === 'realtime' ? 'realtime' : plan.range,
    results: answer.results,
    summary: phrase ? await phrase(answer) : answer.summary,
    suggestions: suggestionsFor(plan),
  };
}

/** The interpreter's answer (with its plan), or a 422. */
export async function interpretAndAnswer(
  deps: AnswerDeps,
  site: QuerySite,
  body: QueryBody,
  events: readonly string[] = [],
  now = Date.now(),
): Promise<{ data: QueryData; plan: QueryPlan }> {
  const read = interpret(body.question, vocabularyOf(site, events));
  if (!read) throw unprocessable();
  const plan = withContext(read.plan, body.context);
  return { data: await answerQuestion(deps, site, body.question, plan, read.confidence, now), plan };
}
