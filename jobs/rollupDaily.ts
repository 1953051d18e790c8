// Keeps every website's daily rollups up to date (jobs/rollups/): each run computes the days that
// closed since the last one, in the website's current time zone; a first run backfills in slices.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Logger } from '../lib/log';
import { usableTimeZone } from '../lib/stats/timeZones';
import { rollUpWebsite } from './rollups/website';

/** One run at a time across every worker and the CLI: two runs rewriting the same day would double it. */
const LOCK_KEY = 727_002;

export interface RollupRun {
  websites: number;
  days: number;
  /** Days that a late event landed on moments ago: rolled up again by a later run. */
  pending: number;
  /** True when another run held the lock and this one did nothing. */
  skipped?: boolean;
}

/**
 * `wait`: block until a running pass ends (the CLI) rather than skip this one (the scheduled job).
 * `websiteId`: that website only (`tidemark jobs run rollup-daily --website`).
 */
export async function rollupDaily(
  pool: Pool,
  clickhouse: ClickHouseClient,
  logger: Logger,
  now = Date.now(),
  opts: { wait?: boolean; websiteId?: string } = {},
): Promise<RollupRun> {
  const lock = await pool.connect();
  try {
    if (opts.wait) await lock.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    else if (!(await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LOCK_KEY])).rows[0].ok) {
      logger.info('daily rollups: another run is in progress; skipped');
      return { websites: 0, days: 0, pending: 0, skipped: true };
    }
    try {
      return await rollUpAll(pool, clickhouse, logger, now, opts.websiteId);
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    lock.release();
  }
}

async function rollUpAll(
  pool: Pool,
  clickhouse: ClickHouseClient,
  logger: Logger,
  now: number,
  websiteId: string | undefined,
): Promise<RollupRun> {
  const { rows } = await pool.query<{ id: string; timezone: string }>(
    'SELECT id, timezone FROM websites WHERE $1::uuid IS NULL OR id = $1 ORDER BY created_at, id',
    [websiteId ?? null],
  );
  let days = 0;
  let pending = 0;
  let failed = 0;
  for (const site of rows) {
    // One website's failure must not starve the others; the job fails afterwards so that it is retried.
    try {
      // A stored zone ClickHouse does not know rolls up in UTC, the zone its reads fall back to.
      const run = await rollUpWebsite(clickhouse, { id: site.id, timezone: usableTimeZone(site.timezone) }, now);
      days += run.days;
      pending += run.pending;
    } catch (err) {
      failed++;
      logger.error({ websiteId: site.id, err: (err as Error).message }, 'daily rollup failed');
    }
  }
  if (failed) throw new Error(`daily rollups failed for ${failed} of ${rows.length} websites`);
  return { websites: rows.length, days, pending };
}
