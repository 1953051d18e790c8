// Removes a website's analytics from every ClickHouse table that holds it (website deletion).
import type { ClickHouseClient } from './client';

/** Tables keyed by website_id; later migrations add theirs here. */
export const WEBSITE_TABLES = [
  'events',
  'sessions',
  'interactions',
  'error_events',
  'replay_chunks',
  'daily_rollups_v2',
  'window_rollups_v2',
  'window_visits',
  'visit_values',
  'late_marks',
] as const;

export async function purgeWebsiteData(clickhouse: ClickHouseClient, websiteId: string): Promise<void> {
  for (const table of WEBSITE_TABLES) {
    await clickhouse.command({
      query: `DELETE FROM ${table} WHERE website_id = {website_id:UUID}`,
      query_params: { website_id: websiteId },
    });
  }
}
