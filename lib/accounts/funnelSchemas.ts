// Funnels (issue 22): the request bodies of the funnel endpoints, the funnel as the API shows it, and a
// funnel's results. Routes validate with these, lib returns their inferred types, lib/openapi documents them.
import { analyticsQuery } from '../external/schemas';
import { FILTER_OPERATORS, V2_FILTER_KEYS } from '../stats/params';
import { z } from '../zod';
import { GOAL_KINDS, pathPattern, uuid } from './schemas';
import { text } from './storable';

export const MIN_FUNNEL_STEPS = 2;
export const MAX_FUNNEL_STEPS = 8;

/** A step: a goal of the website (by id) or a pageview path pattern, exactly one of the two. */
export const funnelStepBody = z
  .object({
    goal_id: uuid.optional().openapi({ description: 'A goal of the website: event, page or purchase.' }),
    path: pathPattern.optional().openapi({ description: 'A pageview path pattern; * is any run of characters.' }),
  })
  .refine((s) => (s.goal_id === undefined) !== (s.path === undefined), {
    message: 'each step is either a goal_id or a path, not both and not neither',
  });

const funnelSteps = z
  .array(funnelStepBody)
  .min(MIN_FUNNEL_STEPS, `a funnel has ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`)
  .max(MAX_FUNNEL_STEPS, `a funnel has ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`)
  .refine(
    (steps) => new Set(steps.map((s) => s.goal_id ?? `path:${s.path}`)).size === steps.length,
    'a step may appear only once in a funnel',
  );
const funnelName = text().trim().min(1).max(200);

export const createFunnelBody = z.object({ name: funnelName, steps: funnelSteps });
/** Renames a funnel and/or replaces all of its steps. */
export const updateFunnelBody = z.object({ name: funnelName.optional(), steps: funnelSteps.optional() });

export type FunnelStepBody = z.infer<typeof funnelStepBody>;
export type CreateFunnelBody = z.infer<typeof createFunnelBody>;
export type UpdateFunnelBody = z.infer<typeof updateFunnelBody>;

const isoTime = z.string().datetime();
const count = z.number().int().min(0);
const percent = z.number().min(0).max(100);

export const funnelStepView = z.object({
  goal_id: z.string().nullable(),
  path: z.string().nullable().openapi({ description: 'The path pattern of a path step; null for a goal step.' }),
  name: z.string().openapi({ description: 'The goal’s name, or the path pattern.' }),
  kind: z
    .enum([...GOAL_KINDS, 'path'])
    .openapi({ description: 'What the step matches: a goal of that kind, or a pageview path (path).' }),
});
export const funnelView = z
  .object({
    id: z.string(),
    website_id: z.string(),
    name: z.string(),
    steps: z.array(funnelStepView),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .openapi('Funnel');

export const funnelStepResult = funnelStepView.extend({
  step: z.number().int().min(1).max(MAX_FUNNEL_STEPS),
  visitors: count.openapi({ description: 'Visitors who reached this step in order within one visit.' }),
  conversion_rate: percent.openapi({ description: 'visitors / the first step’s visitors, in % (two decimals).' }),
  step_conversion_rate: percent.openapi({
    description:
      'visitors / the previous step’s visitors, in % (two decimals); the first step: 100 when anyone entered, else 0.',
  }),
  dropoff: count.openapi({ description: 'The previous step’s visitors who did not reach this one; 0 for the first.' }),
});
export const funnelResults = z.object({
  funnel: z.object({ id: z.string(), name: z.string() }),
  steps: z.array(funnelStepResult),
  totals: z.object({
    entered: count.openapi({ description: 'Visitors who reached the first step.' }),
    completed: count.openapi({ description: 'Visitors who reached the last step.' }),
    conversion_rate: percent.openapi({ description: 'completed / entered, in % (two decimals).' }),
    dropoff: count.openapi({ description: 'entered − completed.' }),
  }),
});

const filtersApplied = z.array(
  z.object({ key: z.enum(V2_FILTER_KEYS), operator: z.enum(FILTER_OPERATORS), values: z.array(z.string()) }),
);
const filtersParam = (example: string) =>
  z
    .string()
    .max(20_000)
    .optional()
    .openapi({
      param: {
        description: `Stats API filters: a JSON array of [operator (is, is_not, contains, contains_not, matches, matches_not), key, [values]], or key==value clauses joined by ';'. Keys: ${V2_FILTER_KEYS.join(', ')}. Visit keys select visits; page filters narrow the pageviews that pageview steps match.`,
      },
      example,
    });
const JSON_EXAMPLE = '[["is","country",["US","DE"]]]';

/** The dashboard's results query (parsed by the Stats API v2 parser; these document it). */
export const funnelResultsQuery = z.object({
  period: z
    .string()
    .optional()
    .openapi({ param: { description: 'A Stats API period (day, 7d, 30d, month, 6mo, 12mo, custom:…), default 30d.' } }),
  date: z
    .string()
    .optional()
    .openapi({ param: { description: 'Anchor date YYYY-MM-DD, default today in the website’s time zone.' } }),
  filters: filtersParam(JSON_EXAMPLE),
});
/** The External API's query: its range, and the same filters. */
export const externalFunnelQuery = analyticsQuery.extend({ filters: filtersParam(JSON_EXAMPLE) });

export const funnelResultsView = funnelResults.extend({
  meta: z.object({
    period: z.string(),
    period_start: isoTime,
    period_end: isoTime.openapi({ description: 'Exclusive: the local midnight after the last day.' }),
    filters_applied: filtersApplied,
  }),
});
export const externalFunnelData = funnelResults.extend({
  time_range: z.string(),
  date_range: z.object({
    start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    startDateTime: isoTime,
    endDateTime: isoTime,
  }),
  filters_applied: filtersApplied,
});

export type FunnelView = z.infer<typeof funnelView>;
export type FunnelStepResult = z.infer<typeof funnelStepResult>;
export type FunnelResults = z.infer<typeof funnelResults>;
export type FunnelResultsView = z.infer<typeof funnelResultsView>;
export type ExternalFunnelData = z.infer<typeof externalFunnelData>;
