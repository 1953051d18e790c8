// Lifetime value, aggregated in the store (issue 25): a website's purchases up to the end of a local day,
// converted into its revenue currency, grouped by customer cohort and period. Node gets a few hundred rows,
// never the purchases themselves.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import type { ConversionStep } from '../../ltv/rates';
import { T } from '../sql/fragments';
import { REFUNDED, SUCCEEDED } from '../sql/goals';

export interface LtvQuestion {
  websiteId: string;
  timeZone: string;
  /** The revenue currency every amount is converted into. */
  currency: string;
  /** Purchases before this instant count (the end of the as-of day). */
  end: number;
  /** The as-of day, YYYY-MM-DD: a customer's 30/90-day window counts once it has ended on or before it. */
  asOf: string;
  steps: readonly ConversionStep[];
}

/** Revenue of one cohort in one period (period -1: the row carrying the cohort's size in `customers`). */
export interface LtvCell {
  granularity: 'weekly' | 'monthly';
  cohort: string;
  period: number;
  customers: number;
  revenue: number;
}

export interface LtvTotals {
  revenue30: number;
  customers30: number;
  revenue90: number;
  customers90: number;
  unconverted: number;
  unconvertedCurrencies: string[];
  unattributed: number;
}

// Whose purchase it is: the visitor id the backend sent, else the customer_email it gave.
const CUSTOMER = `if(visitor_id != '', visitor_id,
  if(JSONExtractString(props, 'customer_email') != '',
     concat('email:', lowerUTF8(trimBoth(JSONExtractString(props, 'customer_email')))), ''))`;

/**
 * `converted`: per (customer, local day, currency), the net amount in the target currency (`factor` 0 = no
 * rate applies, the amount is not usable) and how many purchase rows it holds; `firsts` counts succeeded
 * purchases of a positive amount, the ones that can make a customer. `ledger`: the usable amounts of
 * customers, each row with its customer's first purchase day.
 */
function ledgerSql(q: LtvQuestion, params: Record<string, unknown>): string {
  Object.assign(params, {
    w: q.websiteId,
    tz: q.timeZone,
    cur: q.currency,
    end: q.end / 1000,
    sc: q.steps.map((s) => s.currency),
    sd: q.steps.map((s) => s.since),
    sf: q.steps.map((s) => s.factor),
  });
  return `WITH
  purchases AS (
    SELECT ${CUSTOMER} AS customer, toDate(ts, {tz:String}) AS day, currency,
           toFloat64(sum(if(${REFUNDED}, -abs(revenue), revenue))) AS net,
           countIf(${SUCCEEDED} AND revenue > 0) AS firsts, count() AS n
    FROM events
    WHERE website_id = {w:UUID} AND type = 'purchase' AND ts < {end:${T}} AND (${SUCCEEDED} OR ${REFUNDED})
    GROUP BY customer, day, currency
  ),
  steps AS (
    SELECT s.1 AS currency, s.2 AS since, s.3 AS factor
    FROM (SELECT arrayJoin(arrayZip({sc:Array(String)}, {sd:Array(Date)}, {sf:Array(Float64)})) AS s)
  ),
  converted AS (
    SELECT p.customer AS customer, p.day AS day, p.currency AS currency, p.firsts AS firsts, p.n AS n,
           if(p.currency = {cur:String}, 1, s.factor) AS factor, p.net * factor AS amount
    FROM purchases AS p ASOF LEFT JOIN steps AS s ON p.currency = s.currency AND p.day >= s.since
  ),
  customers AS (
    SELECT customer, minIf(day, firsts > 0) AS first
    FROM converted WHERE customer != '' AND factor > 0
    GROUP BY customer HAVING countIf(firsts > 0) > 0
  ),
  ledger AS (
    SELECT c.customer AS customer, c.first AS first, v.day AS day, v.amount AS amount
    FROM converted AS v INNER JOIN customers AS c ON v.customer = c.customer
    WHERE v.factor > 0
  )`;
}

/** Cohort sizes and revenue per (cohort, period), weekly (Monday cohorts) and monthly. */
export async function ltvCells(clickhouse: ClickHouseClient, q: LtvQuestion): Promise<LtvCell[]> {
  const params: Record<string, unknown> = {};
  // Revenue booked before the first purchase day (a refund of an older purchase) counts in period 0.
  const rows = await selectRows<{ g: string; cohort: string; period: string; customers: string; revenue: number }>(
    clickhouse,
    `${ledgerSql(q, params)}
    SELECT 'weekly' AS g, toMonday(first) AS cohort, -1 AS period, count() AS customers, 0 AS revenue
      FROM customers GROUP BY cohort
    UNION ALL
    SELECT 'weekly' AS g, toMonday(first) AS cohort,
           greatest(0, intDiv(dateDiff('day', toMonday(first), toMonday(day)), 7)) AS period, 0 AS customers,
           sum(amount) AS revenue
      FROM ledger GROUP BY cohort, period
    UNION ALL
    SELECT 'monthly' AS g, toStartOfMonth(first) AS cohort, -1 AS period, count() AS customers, 0 AS revenue
      FROM customers GROUP BY cohort
    UNION ALL
    SELECT 'monthly' AS g, toStartOfMonth(first) AS cohort,
           greatest(0, dateDiff('month', toStartOfMonth(first), toStartOfMonth(day))) AS period, 0 AS customers,
           sum(amount) AS revenue
      FROM ledger GROUP BY cohort, period`,
    params,
  );
  return rows.map((r) => ({
    granularity: r.g as LtvCell['granularity'],
    cohort: r.cohort,
    period: Number(r.period),
    customers: Number(r.customers),
    revenue: Number(r.revenue),
  }));
}

/**
 * Each customer's revenue in their first 30 and 90 days (the first purchase day and the 29 or 89 after it),
 * summed over the customers whose window has ended by the as-of day; and the purchases left out.
 */
export async function ltvTotals(clickhouse: ClickHouseClient, q: LtvQuestion): Promise<LtvTotals> {
  const params: Record<string, unknown> = { asof: q.asOf };
  const [row] = await selectRows<{
    r30: number;
    c30: string;
    r90: number;
    c90: string;
    unconverted: string;
    currencies: string[];
    unattributed: string;
  }>(
    clickhouse,
    `${ledgerSql(q, params)},
  windows AS (
    SELECT customer, first, sumIf(amount, day < first + 30) AS r30, sumIf(amount, day < first + 90) AS r90
    FROM ledger GROUP BY customer, first
  )
  SELECT
    (SELECT sumIf(r30, first + 29 <= {asof:Date}) FROM windows) AS r30,
    (SELECT countIf(first + 29 <= {asof:Date}) FROM windows) AS c30,
    (SELECT sumIf(r90, first + 89 <= {asof:Date}) FROM windows) AS r90,
    (SELECT countIf(first + 89 <= {asof:Date}) FROM windows) AS c90,
    (SELECT sumIf(n, customer != '' AND factor = 0) FROM converted) AS unconverted,
    (SELECT arraySort(groupUniqArrayIf(currency, customer != '' AND factor = 0)) FROM converted) AS currencies,
    (SELECT sumIf(n, customer = '') FROM converted) AS unattributed`,
    params,
  );
  return {
    revenue30: Number(row.r30),
    customers30: Number(row.c30),
    revenue90: Number(row.r90),
    customers90: Number(row.c90),
    unconverted: Number(row.unconverted),
    unconvertedCurrencies: row.currencies,
    unattributed: Number(row.unattributed),
  };
}
