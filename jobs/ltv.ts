// The nightly lifetime-value job (issue 25): per website, customer cohorts and their cumulative revenue per
// customer as of the latest complete local day, computed in the store and stored whole in PostgreSQL
// (lib/ltv/snapshot.ts). A re-run for the same website and day writes the same rows.
import { computeLtv, saveLtv } from '../lib/ltv/snapshot';
import { addDays, daysBetween, formatDate, today } from '../lib/stats/time';
import type { JobScope, StoreJobContext } from './context';
import { forEachWebsite, scopeDay } from './scope';

export interface LtvRun {
  websites: number;
}

export async function ltvJob(ctx: StoreJobContext, scope: JobScope, now = Date.now()): Promise<LtvRun> {
  const asOfGiven = scopeDay(scope);
  const websites = await forEachWebsite(ctx, scope, 'ltv', async (site) => {
    // The latest complete day in the website's zone, unless the run names one (never a day still running).
    const latest = addDays(today(site.timezone, now), -1);
    const asOf = asOfGiven ?? latest;
    if (daysBetween(latest, asOf) > 0)
      throw new Error(
        `${formatDate(asOf)} is not a complete day yet in ${site.timezone} (latest: ${formatDate(latest)})`,
      );
    const started = Date.now();
    const snapshot = await computeLtv(
      ctx.pool,
      ctx.clickhouse,
      { id: site.id, timezone: site.timezone, currency: site.revenue_currency },
      asOf,
    );
    await saveLtv(ctx.pool, site.id, snapshot, new Date(now));
    ctx.logger.debug({ website: site.id, ms: Date.now() - started, cohorts: snapshot.cohorts.length }, 'ltv computed');
  });
  return { websites };
}
