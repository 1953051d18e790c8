// A website's lifetime-value snapshot (issue 25): computed from its purchases up to a local day by the nightly
// job, stored whole in PostgreSQL (replaced in one transaction, so a re-run writes the same rows), and read by
// the External API and the dashboard without touching the events.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../clickhouse/client';
import { withTransaction } from '../db/pool';
import { monday } from '../stats/period';
import { type LtvCell, ltvCells, ltvTotals } from '../stats/reads/ltvCohorts';
import { addDays, formatDate, type LocalDate, parseDate, startOfDay } from '../stats/time';
import { conversionSteps, listRates } from './rates';

export const LTV_GRANULARITIES = ['weekly', 'monthly'] as const;
export type LtvGranularity = (typeof LTV_GRANULARITIES)[number];

export interface LtvCohortRow {
  granularity: LtvGranularity;
  cohort_date: string;
  customers: number;
  /** Cumulative revenue per customer at the end of each period, period 0 first, up to the as-of day's period. */
  cumulative: number[];
}

export interface LtvSnapshot {
  as_of: string;
  currency: string;
  average_ltv_30d: number;
  average_ltv_90d: number;
  customers_30d: number;
  customers_90d: number;
  unconverted_purchases: number;
  unconverted_currencies: string[];
  unattributed_purchases: number;
  cohorts: LtvCohortRow[];
}

/** Money to the cent, never -0, NaN or Infinity. */
export const cents = (x: number): number => (Number.isFinite(x) ? Math.round(x * 100) / 100 || 0 : 0);

/** The first day of the period (Monday of the week, first of the month) containing `d`. */
export function periodStart(d: LocalDate, g: LtvGranularity): LocalDate {
  return g === 'weekly' ? monday(d) : { year: d.year, month: d.month, day: 1 };
}

/** Periods from the cohort's to the one containing `d` (0 = the same period). */
function periodIndex(cohort: LocalDate, d: LocalDate, g: LtvGranularity): number {
  if (g === 'monthly') return (d.year - cohort.year) * 12 + (d.month - cohort.month);
  const from = Date.UTC(cohort.year, cohort.month - 1, cohort.day);
  const to = monday(d);
  return Math.round((Date.UTC(to.year, to.month - 1, to.day) - from) / (7 * 86_400_000));
}

/** Turns the store's cells into cohort rows: cumulative sums per customer, one value per period to the as-of day. */
export function cohortRows(cells: readonly LtvCell[], asOf: LocalDate): LtvCohortRow[] {
  const cohorts = new Map<string, { granularity: LtvGranularity; customers: number; revenue: number[] }>();
  const entry = (c: LtvCell) => {
    const key = `${c.granularity} ${c.cohort}`;
    let e = cohorts.get(key);
    if (!e) {
      const start = parseDate(c.cohort);
      if (!start) throw new Error(`bad cohort date ${c.cohort}`);
      e = {
        granularity: c.granularity,
        customers: 0,
        revenue: new Array(periodIndex(start, asOf, c.granularity) + 1).fill(0),
      };
      cohorts.set(key, e);
    }
    return e;
  };
  for (const c of cells) {
    const e = entry(c);
    if (c.period < 0) e.customers = c.customers;
    else if (c.period < e.revenue.length) e.revenue[c.period] += c.revenue;
  }
  const rows: LtvCohortRow[] = [];
  for (const [key, e] of cohorts) {
    if (e.customers === 0) continue;
    let sum = 0;
    rows.push({
      granularity: e.granularity,
      cohort_date: key.slice(key.indexOf(' ') + 1),
      customers: e.customers,
      cumulative: e.revenue.map((r) => {
        sum += r;
        return cents(sum / e.customers);
      }),
    });
  }
  return rows.sort((a, b) => a.granularity.localeCompare(b.granularity) || a.cohort_date.localeCompare(b.cohort_date));
}

/** Computes the snapshot of one website as of the end of local day `asOf`. */
export async function computeLtv(
  pool: Pool,
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string; currency: string },
  asOf: LocalDate,
): Promise<LtvSnapshot> {
  const question = {
    websiteId: site.id,
    timeZone: site.timezone,
    currency: site.currency,
    end: startOfDay(addDays(asOf, 1), site.timezone),
    asOf: formatDate(asOf),
    steps: conversionSteps(await listRates(pool), site.currency),
  };
  const [cells, totals] = await Promise.all([ltvCells(clickhouse, question), ltvTotals(clickhouse, question)]);
  const mean = (sum: number, n: number) => (n > 0 ? cents(sum / n) : 0);
  return {
    as_of: formatDate(asOf),
    currency: site.currency,
    average_ltv_30d: mean(totals.revenue30, totals.customers30),
    average_ltv_90d: mean(totals.revenue90, totals.customers90),
    customers_30d: totals.customers30,
    customers_90d: totals.customers90,
    unconverted_purchases: totals.unconverted,
    unconverted_currencies: totals.unconvertedCurrencies,
    unattributed_purchases: totals.unattributed,
    cohorts: cohortRows(cells, asOf),
  };
}

/** Replaces the website's stored snapshot with `s` (one transaction: readers see the old or the new one whole). */
export async function saveLtv(pool: Pool, websiteId: string, s: LtvSnapshot, computedAt = new Date()): Promise<void> {
  await withTransaction(pool, async (client) => {
    // The snapshot row first: it locks the website's snapshot, so a concurrent run waits here and then deletes
    // this run's cohorts, rather than both deleting the old ones and colliding on insert.
    await client.query(
      `INSERT INTO ltv_snapshots (website_id, as_of, currency, average_ltv_30d, average_ltv_90d, customers_30d,
         customers_90d, unconverted_purchases, unconverted_currencies, unattributed_purchases, computed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (website_id) DO UPDATE SET as_of = EXCLUDED.as_of, currency = EXCLUDED.currency,
         average_ltv_30d = EXCLUDED.average_ltv_30d, average_ltv_90d = EXCLUDED.average_ltv_90d,
         customers_30d = EXCLUDED.customers_30d, customers_90d = EXCLUDED.customers_90d,
         unconverted_purchases = EXCLUDED.unconverted_purchases,
         unconverted_currencies = EXCLUDED.unconverted_currencies,
         unattributed_purchases = EXCLUDED.unattributed_purchases, computed_at = EXCLUDED.computed_at`,
      [
        websiteId,
        s.as_of,
        s.currency,
        s.average_ltv_30d,
        s.average_ltv_90d,
        s.customers_30d,
        s.customers_90d,
        s.unconverted_purchases,
        s.unconverted_currencies,
        s.unattributed_purchases,
        computedAt,
      ],
    );
    await client.query('DELETE FROM ltv_cohorts WHERE website_id = $1', [websiteId]);
    if (s.cohorts.length > 0) {
      await client.query(
        `INSERT INTO ltv_cohorts (website_id, granularity, cohort_date, customers, cumulative)
         SELECT $1, c.granularity, c.cohort_date::date, c.customers, ARRAY(SELECT e::float8 FROM jsonb_array_elements_text(c.cumulative) WITH ORDINALITY AS t(e, i) ORDER BY i)
         FROM jsonb_to_recordset($2::jsonb) AS c(granularity text, cohort_date text, customers int, cumulative jsonb)`,
        [websiteId, JSON.stringify(s.cohorts)],
      );
    }
  });
}
