// The lifetime-value endpoint's request and response (spec "Lifetime value cohort", External API
// /revenue/{websiteId}/ltv); the route validates with them and lib/openapi/ltv.ts documents them.
import { RANGES_WITH_YEAR } from '../external/schemas';
import { z } from '../zod';
import { LTV_GRANULARITIES } from './snapshot';

export const ltvQuery = z.object({
  range: z
    .enum(RANGES_WITH_YEAR)
    .optional()
    .openapi({
      default: '90d',
      param: {
        description: `Cohorts whose week or month overlaps this range (default 90d): ${RANGES_WITH_YEAR.join(', ')}.`,
      },
    }),
  granularity: z
    .enum(LTV_GRANULARITIES)
    .optional()
    .openapi({
      default: 'monthly',
      param: { description: 'Cohorts and periods by week (Monday to Sunday) or calendar month; default monthly.' },
    }),
});

const money = z.number().openapi({ description: 'In `currency`, to the cent' });
const count = z.number().int().min(0);

export const ltvCohort = z
  .object({
    cohort_date: z.string().openapi({
      format: 'date',
      description: 'First day (a Monday, or the 1st) of the week or month of the customers’ first succeeded purchase',
    }),
    customers: count,
    periods: z.array(
      z.object({
        period: count.openapi({ description: '0 = the cohort’s own week or month' }),
        cumulative_revenue_per_customer: money.openapi({
          description:
            'Net revenue (succeeded purchases minus refunds) of the cohort’s customers from their first purchase to the end of this period, divided by customers',
        }),
      }),
    ),
  })
  .openapi('LtvCohort');

export const ltvData = z.object({
  currency: z
    .string()
    .openapi({ description: 'The website’s revenue currency (USD when unset): every amount is in it' }),
  granularity: z.enum(LTV_GRANULARITIES),
  as_of: z.string().nullable().openapi({
    format: 'date',
    description:
      'The last local day the nightly job included (periods run up to the one containing it); null before its first run',
  }),
  cohorts: z.array(ltvCohort).openapi({ description: 'Oldest first; empty without revenue data' }),
  summary: z.object({
    average_ltv_30d: money.openapi({
      description:
        'Mean net revenue per customer over their first 30 days (first purchase day included), among every customer whose first purchase is at least 30 days before as_of (any cohort, not only the range’s); 0 without such customers',
    }),
    average_ltv_90d: money.openapi({ description: 'The same over 90 days' }),
    customers_30d: count.openapi({ description: 'Customers average_ltv_30d is the mean of' }),
    customers_90d: count.openapi({ description: 'Customers average_ltv_90d is the mean of' }),
  }),
  excluded: z
    .object({
      unconverted_purchases: count.openapi({
        description:
          'Purchases and refunds in another currency with no exchange rate on their day (`tidemark admin rates`): left out entirely',
      }),
      unconverted_currencies: z.array(z.string()).openapi({ description: 'Their currencies' }),
      unattributed_purchases: count.openapi({
        description:
          'Purchases and refunds with neither a visitorId nor a customer_email: no customer to count them for',
      }),
    })
    .openapi({ description: 'What the figures leave out (as of as_of, all time)' }),
});
export type LtvData = z.infer<typeof ltvData>;
