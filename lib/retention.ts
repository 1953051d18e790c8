// Retention (DESIGN §3): rows carry expire_at from the team's plan at write time; when the plan changes,
// the team's stored rows are re-stamped so its data lives as long as the new plan keeps it.
import type { Pool } from 'pg';
import { listWebsitesForTeam } from './accounts/websites';
import type { ClickHouseClient } from './clickhouse/client';
import { PLANS, type PlanName } from './plans';

/** Each table with a per-row expire_at, and the column its retention counts from. */
const RETENTION_TABLES: readonly { table: string; from: string; only?: string }[] = [
  { table: 'events', from: 'ts' },
  { table: 'sessions', from: 'start_ts' },
  { table: 'interactions', from: 'ts' },
  { table: 'error_events', from: 'ts' },
  { table: 'replay_chunks', from: 'ts' },
  // A day's rollups live as long as its events; its marker only says the day was computed.
  { table: 'daily_rollups_v2', from: 'date', only: "dim != '_'" },
  { table: 'visit_values', from: 'date' },
];

export async function restampRetention(
  clickhouse: ClickHouseClient,
  pool: Pool,
  teamId: string,
  plan: PlanName,
): Promise<number> {
  const websites = (await listWebsitesForTeam(pool, teamId)).map((w) => w.id);
  if (websites.length === 0) return 0;
  for (const { table, from, only } of RETENTION_TABLES) {
    await clickhouse.command({
      query: `ALTER TABLE ${table} UPDATE expire_at = toDateTime(${from}) + toIntervalDay({days:UInt32})
              WHERE website_id IN {websites:Array(UUID)}${only ? ` AND ${only}` : ''}`,
      query_params: { days: PLANS[plan].dataRetentionDays, websites },
      // Wait for the mutation, so the command reports what it did.
      clickhouse_settings: { mutations_sync: '1' },
    });
  }
  return websites.length;
}
