// GET /api/external/v1/retention/{websiteId} (spec "Retention cohort record" and the External API table):
// the query the route validates and the data it answers, from which the OpenAPI document is generated.
import { queryInt, RANGES, rangeParam } from '../external/schemas';
import { RETENTION_GRANULARITIES } from '../stats/reads/retentionCohorts';
import { z } from '../zod';

export const retentionQuery = z.object({
  range: rangeParam(RANGES).openapi({
    default: '30d',
    param: {
      description:
        'Which cohorts: those whose period starts in the range or holds its first day. 24h, 7d, 30d (default), 90d.',
    },
  }),
  granularity: z
    .enum(RETENTION_GRANULARITIES)
    .optional()
    .transform((v) => v ?? 'weekly')
    .openapi({
      default: 'weekly',
      param: { description: 'Cohort and period length: daily, weekly (Monday to Sunday, default) or monthly.' },
    }),
  periods: queryInt('periods', 1, 12, 6, 'Periods after the first to report (1-12, default 6); above 12 is a 400.'),
});
export type RetentionQuery = z.infer<typeof retentionQuery>;

const rate = z.number().min(0).max(100);

export const retentionRecord = z
  .object({
    cohort_date: z
      .string()
      .openapi({ description: 'YYYY-MM-DD: the first local day of the cohort’s period (a Monday for weeks).' }),
    period_number: z
      .number()
      .int()
      .openapi({ description: '0 = the period of the first visit; n = n periods later. Only periods begun so far.' }),
    total_users: z.number().int().openapi({ description: 'Visitors whose first-ever visit falls in the cohort.' }),
    retained_users: z.number().int().openapi({
      description: 'Of those, visitors seen in this period (once however often); all of them in period 0.',
    }),
    retention_rate: rate.openapi({ description: 'retained_users / total_users × 100, two decimals.' }),
  })
  .openapi('RetentionRecord');
export type RetentionRecord = z.infer<typeof retentionRecord>;

export const retentionData = z
  .object({
    cohorts: z.array(retentionRecord).openapi({
      description:
        'One record per cohort and period, by cohort_date then period_number. Cohorts with no visitor are left out.',
    }),
    summary: z.object({
      overall_retention: rate.openapi({
        description:
          'The mean period-1 rate of the cohorts that have reached period 1 (0 when none has), two decimals.',
      }),
      total_cohorts: z.number().int(),
      best_cohort: z.object({ cohort_date: z.string(), retention_rate: rate }).nullable().openapi({
        description:
          'The cohort with the highest period-1 rate (the earliest on a tie); null when none has reached period 1.',
      }),
    }),
    as_of: z.string().nullable().openapi({
      description:
        'YYYY-MM-DD: the last local day whose visits the cohorts include (the nightly job computes them after each day ends); null before its first run.',
    }),
  })
  .openapi('RetentionData', {
    description:
      'Only visitors with a persistent id count: server-sent visitorIds (identified users included) and browser visitor_ids supplied by the page (the tracker with data-persist="true"). Cookieless browser visitors get a new id each day by design and are left out entirely.',
  });
export type RetentionData = z.infer<typeof retentionData>;
