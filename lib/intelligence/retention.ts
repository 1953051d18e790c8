// Retention cohorts (issue 25, docs/intelligence.md "Retention"): the nightly job counts them in the store
// (lib/stats/reads/retentionCohorts.ts) and keeps them in PostgreSQL, where the External API reads a website's
// cohorts with one indexed query.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../clickhouse/client';
import { withTransaction } from '../db/pool';
import { monday, RANGE_DAYS, resolveRange } from '../stats/period';
import {
  type CohortCount,
  MAX_RETENTION_PERIOD,
  type RetentionGranularity,
  retentionCohortCounts,
} from '../stats/reads/retentionCohorts';
import { addDays, daysBetween, formatDate, type LocalDate, parseDate } from '../stats/time';
import type { RetentionData, RetentionQuery, RetentionRecord } from './retentionSchemas';

/**
 * Days of cohorts a run keeps: the longest range the endpoint accepts (90d), plus a week so that a range read a
 * few days after the last run (a job that failed for a while) still finds its first cohorts.
 */
const KEPT_DAYS = RANGE_DAYS['90d'] + 7;

/** The first local day of the period of `granularity` holding `d`. */
function periodStart(g: RetentionGranularity, d: LocalDate): LocalDate {
  if (g === 'weekly') return monday(d);
  if (g === 'monthly') return { ...d, day: 1 };
  return d;
}

/** How many whole periods separate the periods holding `a` and `b`. */
function periodsBetween(g: RetentionGranularity, a: LocalDate, b: LocalDate): number {
  if (g === 'weekly') return daysBetween(monday(a), monday(b)) / 7;
  if (g === 'monthly') return b.year * 12 + b.month - (a.year * 12 + a.month);
  return daysBetween(a, b);
}

interface StoredRow {
  granularity: RetentionGranularity;
  cohort_date: string;
  period_number: number;
  total_users: number;
  retained_users: number;
}

/**
 * The stored rows from the store's counts: every period each cohort has begun by `asOf` (at most 12 after the
 * first), a period without returning visitors as 0.
 */
function cohortRows(counts: readonly CohortCount[], asOf: LocalDate): StoredRow[] {
  const byCohort = new Map<string, { g: RetentionGranularity; date: string; seen: Map<number, number> }>();
  for (const c of counts) {
    const key = `${c.granularity} ${c.cohort_date}`;
    let entry = byCohort.get(key);
    if (!entry) {
      entry = { g: c.granularity, date: c.cohort_date, seen: new Map() };
      byCohort.set(key, entry);
    }
    entry.seen.set(c.period_number, c.visitors);
  }
  const rows: StoredRow[] = [];
  for (const { g, date, seen } of byCohort.values()) {
    const total = seen.get(0);
    if (!total) continue;
    const cohort = parseDate(date);
    if (!cohort) throw new RangeError(`bad cohort date ${date}`);
    const last = Math.min(MAX_RETENTION_PERIOD, periodsBetween(g, cohort, asOf));
    for (let p = 0; p <= last; p++)
      rows.push({
        granularity: g,
        cohort_date: date,
        period_number: p,
        total_users: total,
        retained_users: seen.get(p) ?? 0,
      });
  }
  return rows;
}

/**
 * Computes one website's cohorts as of the end of local day `asOf` and replaces its stored ones in one
 * transaction: a re-run for the same day writes the same rows. Answers how many rows it wrote.
 */
export async function computeRetention(
  pool: Pool,
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  asOf: LocalDate,
): Promise<number> {
  const counts = await retentionCohortCounts(clickhouse, site, addDays(asOf, 1 - KEPT_DAYS), asOf);
  const rows = cohortRows(counts, asOf);
  await withTransaction(pool, async (client) => {
    // Two runs for one website (the clock's and one started by hand) take turns: interleaved, the second's
    // insert would meet the first's rows.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('retention:' || $1))", [site.id]);
    await client.query('DELETE FROM retention_cohorts WHERE website_id = $1', [site.id]);
    await client.query(
      `INSERT INTO retention_cohorts (website_id, granularity, cohort_date, period_number, total_users, retained_users)
       SELECT $1, * FROM unnest($2::text[], $3::date[], $4::smallint[], $5::int[], $6::int[])`,
      [
        site.id,
        rows.map((r) => r.granularity),
        rows.map((r) => r.cohort_date),
        rows.map((r) => r.period_number),
        rows.map((r) => r.total_users),
        rows.map((r) => r.retained_users),
      ],
    );
    await client.query(
      `INSERT INTO retention_runs (website_id, as_of) VALUES ($1, $2)
       ON CONFLICT (website_id) DO UPDATE SET as_of = EXCLUDED.as_of`,
      [site.id, formatDate(asOf)],
    );
  });
  return rows.length;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const rateOf = (retained: number, total: number) => (total > 0 ? round2((retained / total) * 100) : 0);

/**
 * The endpoint's answer from the stored cohorts: those of `granularity` whose period starts in the range or
 * holds its first day, periods 0 to `periods`, with the summary. A website never computed answers empty.
 */
export async function readRetention(
  pool: Pool,
  site: { id: string; timezone: string },
  q: RetentionQuery,
  now = Date.now(),
): Promise<RetentionData> {
  const range = resolveRange(q.range ?? '30d', site.timezone, now);
  const { rows } = await pool.query<{
    as_of: string;
    cohort_date: string | null;
    period_number: number | null;
    total_users: number | null;
    retained_users: number | null;
  }>(
    `SELECT to_char(r.as_of, 'YYYY-MM-DD') AS as_of, to_char(c.cohort_date, 'YYYY-MM-DD') AS cohort_date,
            c.period_number, c.total_users, c.retained_users
     FROM retention_runs r
     LEFT JOIN retention_cohorts c
       ON c.website_id = r.website_id AND c.granularity = $2 AND c.cohort_date BETWEEN $3 AND $4
          AND c.period_number <= $5
     WHERE r.website_id = $1
     ORDER BY c.cohort_date, c.period_number`,
    [site.id, q.granularity, formatDate(periodStart(q.granularity, range.first)), formatDate(range.last), q.periods],
  );
  const cohorts: RetentionRecord[] = rows
    .filter((r) => r.cohort_date !== null)
    .map((r) => ({
      cohort_date: r.cohort_date as string,
      period_number: Number(r.period_number),
      total_users: Number(r.total_users),
      retained_users: Number(r.retained_users),
      retention_rate: rateOf(Number(r.retained_users), Number(r.total_users)),
    }));
  return { cohorts, summary: summarise(cohorts), as_of: rows[0]?.as_of ?? null };
}

/** overall_retention = the mean period-1 rate of the cohorts that reached period 1; best = the highest of them. */
function summarise(cohorts: readonly RetentionRecord[]): RetentionData['summary'] {
  const firstReturns = cohorts.filter((c) => c.period_number === 1);
  let best: RetentionData['summary']['best_cohort'] = null;
  let sum = 0;
  for (const c of firstReturns) {
    const r = (c.retained_users / c.total_users) * 100;
    sum += r;
    if (!best || c.retention_rate > best.retention_rate)
      best = { cohort_date: c.cohort_date, retention_rate: c.retention_rate };
  }
  return {
    overall_retention: firstReturns.length > 0 ? round2(sum / firstReturns.length) : 0,
    total_cohorts: new Set(cohorts.map((c) => c.cohort_date)).size,
    best_cohort: best,
  };
}
