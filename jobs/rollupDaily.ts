// Keeps every website's daily rollups up to date (lib/stats/rollups.ts): each run computes the days that
// closed since the last one, in the website's current time zone; a first run backfills in slices.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Logger } from '../lib/log';
import { rollUpWebsite } from '../lib/stats/rollups';

export async function rollupDaily(pool: Pool, clickhouse: ClickHouseClient, logger: Logger, now = Date.now()): Promise<{ websites: number; days: number }> {
  const { rows } = await pool.query<{ id: string; timezone: string }>('SELECT id, timezone FROM websites ORDER BY created_at, id');
  let days = 0;
  let failed = 0;
  for (const site of rows) {
    // One website's failure must not starve the others; the job fails afterwards so that it is retried.
    try {
      days += await rollUpWebsite(clickhouse, site, now);
    } catch (err) {
      failed++;
      logger.error({ websiteId: site.id, err: (err as Error).message }, 'daily rollup failed');
    }
  }
  if (failed) throw new Error(`daily rollups failed for ${failed} of ${rows.length} websites`);
  return { websites: rows.length, days };
}
