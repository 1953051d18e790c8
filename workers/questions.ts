// The worker role's `llm` queue: each job is one natural-language question, answered by
// lib/nlquery/questionJob.ts; the web role waits for the returned outcome.
import type { Job, Processor } from 'bullmq';
import { type ModelSettings, modelClient } from '../lib/nlquery/model';
import {
  answerQuestionJob,
  type QuestionDeps,
  type QuestionJob,
  type QuestionOutcome,
} from '../lib/nlquery/questionJob';

export function questionProcessor(
  deps: Omit<QuestionDeps, 'client' | 'model'>,
  settings: ModelSettings,
): Processor<QuestionJob, QuestionOutcome> {
  const client = modelClient(settings);
  return (job: Job<QuestionJob>) => answerQuestionJob({ ...deps, client, model: settings.model }, job.data);
}
