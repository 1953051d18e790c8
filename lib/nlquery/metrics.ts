// /metrics series of natural-language questions (issue 27 point 5), on the web role's registry: the web role
// sees every question, and the worker's token counts come back with its answer.
import { Counter, Histogram, type Registry } from 'prom-client';

export type AnswerPath = 'llm' | 'interpreter' | 'cache';

export interface QuestionMetrics {
  questions: Counter<'path'>;
  duration: Histogram<'path'>;
  failures: Counter<'reason'>;
  tokens: Counter<'kind'>;
}

export function questionMetrics(registry: Registry): QuestionMetrics {
  return {
    questions: new Counter({
      name: 'tidemark_nlquery_questions_total',
      help: 'Natural-language questions answered, by path (llm, interpreter, cache)',
      labelNames: ['path'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'tidemark_nlquery_duration_seconds',
      help: 'Time to answer a natural-language question, by path',
      labelNames: ['path'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    failures: new Counter({
      name: 'tidemark_nlquery_failures_total',
      help: 'Natural-language questions not answered as asked: unprocessable, timeout, and model failures (invalid, unreachable) the interpreter took over',
      labelNames: ['reason'],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'tidemark_nlquery_tokens_total',
      help: 'Tokens the model used for questions, by kind (prompt, completion)',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
}
