// Writes of browser-only data: heatmap clicks, error occurrences and replay chunks to ClickHouse, and the
// error groups in PostgreSQL. The ClickHouse tables are ReplacingMergeTrees keyed by event or chunk, so a
// retried job collapses; error-group counters move only for occurrences PostgreSQL has not seen.
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../../clickhouse/client';
import { withTransaction } from '../../db/pool';
import type { ErrorRow, InteractionRow, ReplayRow } from '../job/rows';
import { cleanText } from '../job/sanitize';

function token(kind: string, ids: string[]): string {
  const hash = createHash('sha256');
  for (const id of [...ids].sort()) hash.update(id);
  return `${kind}-${hash.digest('hex')}`;
}

async function insertRows<T extends Record<string, unknown>>(
  clickhouse: ClickHouseClient,
  table: string,
  rows: T[],
  ids: string[],
) {
  if (rows.length === 0) return;
  await clickhouse.insert({
    table,
    values: rows,
    columns: Object.keys(rows[0]) as [string, ...string[]],
    format: 'JSONEachRow',
    clickhouse_settings: { insert_deduplication_token: token(table, ids), max_partitions_per_insert_block: '1000' },
  });
}

export async function insertBrowserRows(
  clickhouse: ClickHouseClient,
  rows: { interactions: InteractionRow[]; errors: ErrorRow[]; replays: ReplayRow[] },
): Promise<void> {
  await insertRows(
    clickhouse,
    'interactions',
    rows.interactions,
    rows.interactions.map((r) => r.event_id),
  );
  await insertRows(
    clickhouse,
    'error_events',
    rows.errors,
    rows.errors.map((r) => r.event_id),
  );
  await insertRows(
    clickhouse,
    'replay_chunks',
    rows.replays,
    rows.replays.map((r) => `${r.session_id}/${r.seq}`),
  );
}

/** Upserts error groups for occurrences not counted before (idempotent across retries). */
export async function upsertErrorGroups(pool: Pool, errors: ErrorRow[]): Promise<void> {
  if (errors.length === 0) return;
  await withTransaction(pool, async (client) => {
    const fresh = await client.query<{ event_id: string }>(
      `INSERT INTO error_occurrences_seen (event_id, website_id)
       SELECT * FROM unnest($1::uuid[], $2::uuid[]) ON CONFLICT DO NOTHING RETURNING event_id`,
      [errors.map((e) => e.event_id), errors.map((e) => e.website_id)],
    );
    const isFresh = new Set(fresh.rows.map((r) => r.event_id));
    const occurrences = errors.filter((e) => isFresh.has(e.event_id)).sort((a, b) => a.ts.localeCompare(b.ts));
    for (const e of occurrences) {
      const at = `${e.ts.replace(' ', 'T')}Z`;
      const newVisitor = e.visitor_id
        ? (
            await client.query(
              `INSERT INTO error_group_visitors (website_id, fingerprint, visitor_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
              [e.website_id, e.fingerprint, cleanText(e.visitor_id)],
            )
          ).rowCount
        : 0;
      // A website deleted meanwhile is skipped by the join. A new occurrence of a resolved group regresses it
      // to unresolved (as Sentry-like tools do); an ignored group stays ignored. Only occurrences not seen
      // before get here, so a retried job never reopens a group someone resolved after the first attempt.
      await client.query(
        `INSERT INTO error_groups AS g (website_id, fingerprint, message, type, occurrence_count, affected_users_count, first_seen_at, last_seen_at)
         SELECT $1, $2, $3, $4, 1, $5, $6, $6 FROM websites WHERE id = $1
         ON CONFLICT (website_id, fingerprint) DO UPDATE SET
           occurrence_count = g.occurrence_count + 1,
           status = CASE WHEN g.status = 'resolved' THEN 'unresolved' ELSE g.status END,
           affected_users_count = g.affected_users_count + $5,
           message = EXCLUDED.message,
           first_seen_at = LEAST(g.first_seen_at, EXCLUDED.first_seen_at),
           last_seen_at = GREATEST(g.last_seen_at, EXCLUDED.last_seen_at),
           updated_at = now()`,
        [
          e.website_id,
          e.fingerprint,
          cleanText(e.message.slice(0, 1000)),
          cleanText(e.error_type) || 'Error',
          newVisitor ?? 0,
          at,
        ],
      );
    }
  });
}
