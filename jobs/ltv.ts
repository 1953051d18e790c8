// The nightly lifetime-value job (issue 25): per website, customer cohorts and their cumulative revenue per
// customer as of the latest complete local day, computed in the store and stored whole in PostgreSQL
// (lib/ltv/snapshot.ts). A re-run for the same website and day writes the same rows.
import { computeLtv, saveLtv } from '../lib/ltv/snapshot';
import { addDays, daysBetween, formatDate, parseDate, today } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';
import type { JobContext, JobScope } from './context';

export interface LtvRun {
  websites: number;
  failed: number;
}

export async function ltvJob(ctx: JobContext, scope: JobScope, now = Date.now()): Promise<LtvRun> {
  const asOfGiven = scope.date === undefined ? undefined : parseDate(scope.date);
  if (scope.date !== undefined && !asOfGiven) throw new Error(`ltv: bad date ${scope.date} (YYYY-MM-DD)`);
  const { rows } = await ctx.pool.query<{ id: string; timezone: string; revenue_currency: string }>(
    `SELECT id, timezone, revenue_currency FROM websites
     WHERE ($1::uuid IS NULL AND is_active) OR id = $1::uuid ORDER BY created_at, id`,
    [scope.websiteId ?? null],
  );
  if (scope.websiteId && rows.length === 0) throw new Error(`ltv: no website ${scope.websiteId}`);
  let failed = 0;
  let firstError = '';
  for (const site of rows) {
    const timezone = usableTimeZone(site.timezone);
    // The latest complete day in the website's zone, unless the run names one (never a day still running).
    const latest = addDays(today(timezone, now), -1);
    const asOf = asOfGiven ?? latest;
    const started = Date.now();
    try {
      if (daysBetween(latest, asOf) > 0) {
        throw new Error(`${formatDate(asOf)} is not a complete day yet in ${timezone} (latest: ${formatDate(latest)})`);
      }
      const snapshot = await computeLtv(
        ctx.pool,
        ctx.clickhouse,
        { id: site.id, timezone, currency: site.revenue_currency },
        asOf,
      );
      await saveLtv(ctx.pool, site.id, snapshot, new Date(now));
      ctx.logger.debug(
        { website: site.id, ms: Date.now() - started, cohorts: snapshot.cohorts.length },
        'ltv computed',
      );
    } catch (err) {
      // One website's failure must not starve the others; the run fails afterwards so that it is retried.
      failed++;
      firstError ||= (err as Error).message;
      ctx.logger.error({ website: site.id, err: (err as Error).message }, 'ltv failed');
    }
  }
  if (failed > 0) throw new Error(`ltv failed for ${failed} of ${rows.length} website(s); first: ${firstError}`);
  return { websites: rows.length, failed };
}
