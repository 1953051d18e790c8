// ClickHouse writes of the ingest worker: one insert per flush, explicit column list, and a dedup token that
// is a hash of the event ids it carries, so the same rows sent twice are stored once (the table keeps
// non_replicated_deduplication_window tokens) while different rows never share a token.
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '../clickhouse/client';
import { EVENT_COLUMNS, type EventRow } from './rows';

export function dedupToken(rows: EventRow[]): string {
  const hash = createHash('sha256');
  for (const id of rows.map((r) => r.event_id).sort()) hash.update(id);
  return `ev-${hash.digest('hex')}`;
}

export async function insertEvents(clickhouse: ClickHouseClient, rows: EventRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({
    table: 'events',
    values: rows,
    columns: EVENT_COLUMNS as [string, ...string[]],
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplication_token: dedupToken(rows),
      // The sessions view must skip a deduplicated block exactly as the table does.
      deduplicate_blocks_in_dependent_materialized_views: 1,
      // One flush may cover many days; never refuse it for touching many partitions.
      max_partitions_per_insert_block: '1000',
    },
  });
}

/** Event ids among `rows` that are already stored (used for jobs that may have been written before). */
export async function existingEventIds(clickhouse: ClickHouseClient, rows: EventRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const websites = [...new Set(rows.map((r) => r.website_id))];
  const times = rows.map((r) => r.ts).sort();
  const result = await clickhouse.query({
    query: `SELECT toString(event_id) AS id FROM events
            WHERE website_id IN {websites:Array(UUID)}
              AND ts BETWEEN {lo:DateTime64(3, 'UTC')} AND {hi:DateTime64(3, 'UTC')}
              AND event_id IN {ids:Array(UUID)}`,
    query_params: { websites, lo: times[0], hi: times[times.length - 1], ids: rows.map((r) => r.event_id) },
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ id: string }>()).map((r) => r.id));
}
