// Nightly retention cohorts (issue 25): for every active website, or the scope's one, the cohorts as of its
// latest complete local day (or the scope's date), counted in the store and written to PostgreSQL so that
// GET /api/external/v1/retention/{websiteId} reads them with one indexed query. Re-runs write the same rows.

import { computeRetention } from '../lib/intelligence/retention';
import { addDays, today } from '../lib/stats/time';
import type { JobScope, StoreJobContext } from './context';
import { forEachWebsite, scopeDay } from './scope';

export interface RetentionRun {
  websites: number;
  rows: number;
}

export async function retention(ctx: StoreJobContext, scope: JobScope, now = Date.now()): Promise<RetentionRun> {
  const date = scopeDay(scope);
  const run: RetentionRun = { websites: 0, rows: 0 };
  run.websites = await forEachWebsite(ctx, scope, 'retention', async (site) => {
    run.rows += await computeRetention(ctx.pool, ctx.clickhouse, site, date ?? addDays(today(site.timezone, now), -1));
  });
  return run;
}
