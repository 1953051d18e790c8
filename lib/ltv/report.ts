// The lifetime-value answer (External API and dashboard): the stored snapshot's cohorts that overlap the
// range, in the requested granularity. Reads two small PostgreSQL tables, never the events.
import type { Pool } from 'pg';
import type { RangeName } from '../external/schemas';
import { resolveRange } from '../stats/period';
import { formatDate } from '../stats/time';
import type { LtvData } from './schemas';
import { type LtvCohortRow, type LtvGranularity, type LtvSnapshot, periodStart } from './snapshot';

export async function ltvReport(
  pool: Pool,
  site: { id: string; timezone: string },
  range: RangeName,
  granularity: LtvGranularity,
  now = Date.now(),
): Promise<LtvData> {
  const p = resolveRange(range, site.timezone, now);
  // One statement, so the summary and the cohorts come from the same snapshot even while the job replaces it
  // (its columns are null before the job's first run; the website's own currency stands in then).
  const { rows } = await pool.query<
    Omit<LtvSnapshot, 'as_of' | 'cohorts'> & {
      revenue_currency: string;
      as_of: string | null;
      cohorts: Omit<LtvCohortRow, 'granularity'>[];
    }
  >(
    `SELECT w.revenue_currency, to_char(s.as_of, 'YYYY-MM-DD') AS as_of, s.currency, s.average_ltv_30d,
            s.average_ltv_90d, s.customers_30d, s.customers_90d, s.unconverted_purchases,
            s.unconverted_currencies, s.unattributed_purchases,
            COALESCE((SELECT json_agg(json_build_object('cohort_date', to_char(c.cohort_date, 'YYYY-MM-DD'),
                        'customers', c.customers, 'cumulative', c.cumulative) ORDER BY c.cohort_date)
                      FROM ltv_cohorts c
                      WHERE c.website_id = w.id AND c.granularity = $2 AND c.cohort_date >= $3
                        AND c.cohort_date <= $4), '[]') AS cohorts
     FROM websites w LEFT JOIN ltv_snapshots s ON s.website_id = w.id WHERE w.id = $1`,
    [site.id, granularity, formatDate(periodStart(p.first, granularity)), formatDate(p.last)],
  );
  const row = rows[0];
  // Before the job's first run: the website's currency and zeros.
  const s = row?.as_of ? row : undefined;
  return {
    currency: s?.currency ?? row?.revenue_currency ?? 'USD',
    granularity,
    as_of: s?.as_of ?? null,
    cohorts: s
      ? row.cohorts.map((c) => ({
          cohort_date: c.cohort_date,
          customers: c.customers,
          periods: c.cumulative.map((v, period) => ({ period, cumulative_revenue_per_customer: v })),
        }))
      : [],
    summary: {
      average_ltv_30d: s?.average_ltv_30d ?? 0,
      average_ltv_90d: s?.average_ltv_90d ?? 0,
      customers_30d: s?.customers_30d ?? 0,
      customers_90d: s?.customers_90d ?? 0,
    },
    excluded: {
      unconverted_purchases: s?.unconverted_purchases ?? 0,
      unconverted_currencies: s?.unconverted_currencies ?? [],
      unattributed_purchases: s?.unattributed_purchases ?? 0,
    },
  };
}
