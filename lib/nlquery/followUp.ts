// Follow-ups in a conversation (issue 27 point 4): "and last month?", "only mobile", "what about Germany",
// "by country" change the previous question's plan in what they name and keep the rest of it.

import type { Interpretation } from './interpret';
import { interpret, type SiteVocabulary } from './interpret';
import type { QueryPlan } from './plan';

/** Words that open a question leaning on the one before. */
const LEANS =
  /^\s*(and|but|what about|how about|what if|only|just|same|now|also|then|instead|excluding|without|compared?)\b|^\s*(for|in|from|on|by|with|over)\b/i;
/** At most this many words without a metric of their own read as a fragment of the previous question. */
const FRAGMENT_WORDS = 5;

export function isFollowUp(question: string, read: Interpretation | undefined): boolean {
  if (LEANS.test(question)) return true;
  const words = question.trim().split(/\s+/).length;
  return words <= FRAGMENT_WORDS && (read === undefined || read.said.metric === undefined);
}

/** The previous plan with what the follow-up names; undefined when the question stands on its own. */
export function followUp(
  question: string,
  previous: QueryPlan | undefined,
  vocab: SiteVocabulary,
): Interpretation | undefined {
  const read = interpret(question, vocab);
  if (!previous || previous.intent === 'realtime' || !read || !isFollowUp(question, read)) return undefined;
  const { said } = read;
  const keys = new Set(said.filters.map((f) => f.key));
  const plan: QueryPlan = {
    ...previous,
    metrics: said.metric ? [said.metric] : previous.metrics,
    range: said.range ?? previous.range,
    filters: [...previous.filters.filter((f) => !keys.has(f.key)), ...said.filters].slice(0, 5),
  };
  if (said.dimension)
    Object.assign(plan, { dimension: said.dimension, interval: null, intent: 'breakdown', result: 'table' });
  if (said.interval)
    Object.assign(plan, {
      interval: said.interval,
      dimension: null,
      compare_to: null,
      intent: 'trend',
      result: 'timeseries',
    });
  if (said.compare && !plan.dimension && !plan.interval)
    Object.assign(plan, { compare_to: said.compare, intent: 'comparison' });
  return { plan, confidence: Math.max(0.5, read.confidence - 0.1), said };
}
