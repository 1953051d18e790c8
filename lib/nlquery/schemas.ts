// The natural-language query endpoint's body and answer (spec "POST /query/{websiteId}"), the zod schemas
// the route validates with and the OpenAPI document is generated from.
import { z } from '../zod';

export const MAX_QUESTION = 500;
export const QUERY_RANGES = ['24h', '7d', '30d', '90d'] as const;

export const queryBody = z.object({
  question: z
    .string()
    .trim()
    .min(1)
    .max(MAX_QUESTION)
    .openapi({ description: 'Plain-English question, 1-500 characters.' }),
  context: z
    .object({
      time_range: z.enum(QUERY_RANGES).optional().openapi({ description: 'Overrides the range the question names.' }),
      compare_to: z.enum(['previous_period', 'previous_year']).optional(),
    })
    .optional(),
});
export type QueryBody = z.infer<typeof queryBody>;

const cell = z.union([z.string(), z.number()]);
export const queryResults = z.discriminatedUnion('type', [
  z.object({ type: z.literal('table'), columns: z.array(z.string()), rows: z.array(z.array(cell)) }),
  z.object({
    type: z.literal('number'),
    value: z.number(),
    label: z.string(),
    change: z
      .number()
      .openapi({ description: 'Percent change against the compared period (the previous one by default).' }),
  }),
  z.object({ type: z.literal('timeseries'), points: z.array(z.object({ date: z.string(), value: z.number() })) }),
  z.object({ type: z.literal('list'), items: z.array(z.string()) }),
]);

export const queryData = z
  .object({
    question: z.string(),
    intent: z.string(),
    confidence: z.number().min(0).max(1),
    time_range: z.string(),
    results: queryResults,
    summary: z.string(),
    suggestions: z.array(z.string()),
  })
  .openapi('QueryAnswer');
export type QueryData = z.infer<typeof queryData>;
