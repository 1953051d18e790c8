// The nightly insights job (docs/intelligence.md "Insights"): for every active website (or the scope's one),
// the trends, recommendations and forecast of the latest complete day in the website's time zone (or the
// scope's date), written by their stable keys, plus an insight for every anomaly that has none. A re-run for
// the same day writes the same rows.
import type { Pool } from 'pg';
import { conversionContext } from '../lib/accounts/goals';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { notFound } from '../lib/errors';
import { insightsFromAnomalies } from '../lib/insights/anomalies';
import { computeInsights } from '../lib/insights/compute';
import { writeDayInsights } from '../lib/insights/store';
import type { Logger } from '../lib/log';
import { addDays, formatDate, type LocalDate, parseDate, startOfDay, today } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';

// The registry's JobContext and JobScope, by shape: importing them from registry.ts would be an import cycle.
interface Context {
  pool: Pool;
  clickhouse: ClickHouseClient;
  logger: Logger;
}
interface Scope {
  websiteId?: string;
  date?: string;
}

export interface InsightsRun {
  websites: number;
  insights: number;
  anomalyInsights: number;
}

export async function insightsJob(ctx: Context, scope: Scope, now = Date.now()): Promise<InsightsRun> {
  const requested = scope.date === undefined ? undefined : parseDate(scope.date);
  if (scope.date !== undefined && !requested) throw new Error(`insights: date ${scope.date} is not YYYY-MM-DD`);
  const { rows: sites } = await ctx.pool.query<{ id: string; timezone: string }>(
    `SELECT id, timezone FROM websites WHERE ($1::uuid IS NULL AND is_active) OR id = $1 ORDER BY created_at, id`,
    [scope.websiteId ?? null],
  );
  if (scope.websiteId && sites.length === 0) throw notFound(`Website ${scope.websiteId} not found`);
  let written = 0;
  let fromAnomalies = 0;
  let failed = 0;
  for (const site of sites) {
    // One website's failure must not starve the others; the job fails afterwards so that it is retried.
    try {
      const tz = usableTimeZone(site.timezone);
      const day: LocalDate = requested ?? addDays(today(tz, now), -1);
      const drafts = await computeInsights(
        ctx.pool,
        ctx.clickhouse,
        { id: site.id, timezone: tz, ...(await conversionContext(ctx.pool, site.id)) },
        day,
      );
      await writeDayInsights(ctx.pool, site.id, formatDate(day), new Date(startOfDay(addDays(day, 1), tz)), drafts);
      written += drafts.length;
      fromAnomalies += await insightsFromAnomalies(ctx.pool, site.id);
    } catch (err) {
      failed++;
      ctx.logger.error({ websiteId: site.id, err: (err as Error).message }, 'insights failed');
    }
  }
  if (failed) throw new Error(`insights failed for ${failed} of ${sites.length} websites`);
  return { websites: sites.length, insights: written, anomalyInsights: fromAnomalies };
}
