// Nightly retention cohorts (issue 25): for every active website, or the scope's one, the cohorts as of its
// latest complete local day (or the scope's date), counted in the store and written to PostgreSQL so that
// GET /api/external/v1/retention/{websiteId} reads them with one indexed query. Re-runs write the same rows.

import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { computeRetention } from '../lib/intelligence/retention';
import type { Logger } from '../lib/log';
import { addDays, type LocalDate, parseDate, today } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';

/** What the body uses of the registry's JobContext and JobScope (spelled here: the registry imports this file). */
interface RetentionContext {
  pool: Pool;
  clickhouse: ClickHouseClient;
  logger: Logger;
}
interface RetentionScope {
  websiteId?: string;
  date?: string;
}

export interface RetentionRun {
  websites: number;
  rows: number;
  failed: number;
}

export async function retention(ctx: RetentionContext, scope: RetentionScope, now = Date.now()): Promise<RetentionRun> {
  const date = scope.date === undefined ? undefined : parseDate(scope.date);
  if (scope.date !== undefined && !date) throw new RangeError(`date must be YYYY-MM-DD, got ${scope.date}`);
  const { rows: sites } = await ctx.pool.query<{ id: string; timezone: string }>(
    scope.websiteId
      ? 'SELECT id, timezone FROM websites WHERE id = $1'
      : 'SELECT id, timezone FROM websites WHERE is_active ORDER BY created_at, id',
    scope.websiteId ? [scope.websiteId] : [],
  );
  if (scope.websiteId && sites.length === 0) throw new Error(`no website ${scope.websiteId}`);
  const run: RetentionRun = { websites: 0, rows: 0, failed: 0 };
  for (const site of sites) {
    // A stored zone ClickHouse does not know is read in UTC, as the stats reads do.
    const timezone = usableTimeZone(site.timezone);
    const asOf: LocalDate = date ?? addDays(today(timezone, now), -1);
    // One website's failure must not starve the others; the job fails afterwards so that it is retried.
    try {
      run.rows += await computeRetention(ctx.pool, ctx.clickhouse, { id: site.id, timezone }, asOf);
      run.websites++;
    } catch (err) {
      run.failed++;
      ctx.logger.error({ err, websiteId: site.id }, 'retention cohorts failed');
    }
  }
  if (run.failed > 0) throw new Error(`retention cohorts failed for ${run.failed} of ${sites.length} websites`);
  return run;
}
