// The nightly insights job (docs/intelligence.md "Insights"): for every active website (or the scope's one),
// the trends, recommendations and forecast of the latest complete day in the website's time zone (or the
// scope's date), written by their stable keys, plus an insight for every anomaly that has none. A re-run for
// the same day writes the same rows.
import { conversionContext } from '../lib/accounts/goals';
import { insightsFromAnomalies } from '../lib/insights/anomalies';
import { computeInsights } from '../lib/insights/compute';
import { writeDayInsights } from '../lib/insights/store';
import { addDays, formatDate, startOfDay, today } from '../lib/stats/time';
import type { JobScope, StoreJobContext } from './context';
import { forEachWebsite, scopeDay } from './scope';

export interface InsightsRun {
  websites: number;
  insights: number;
  anomalyInsights: number;
}

export async function insightsJob(ctx: StoreJobContext, scope: JobScope, now = Date.now()): Promise<InsightsRun> {
  const requested = scopeDay(scope);
  const run: InsightsRun = { websites: 0, insights: 0, anomalyInsights: 0 };
  run.websites = await forEachWebsite(ctx, scope, 'insights', async (site) => {
    const day = requested ?? addDays(today(site.timezone, now), -1);
    const drafts = await computeInsights(
      ctx.pool,
      ctx.clickhouse,
      { id: site.id, timezone: site.timezone, ...(await conversionContext(ctx.pool, site.id)) },
      day,
    );
    const createdAt = new Date(startOfDay(addDays(day, 1), site.timezone));
    await writeDayInsights(ctx.pool, site.id, formatDate(day), createdAt, drafts);
    run.insights += drafts.length;
    run.anomalyInsights += await insightsFromAnomalies(ctx.pool, site.id);
  });
  return run;
}
