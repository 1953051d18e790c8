// What `tidemark rollup` does around a backfill: waits for an import's late marks to settle first, and
// merges the rollup tables' parts after.
import { type ClickHouseClient, selectRows } from '../../lib/clickhouse/client';
import { renderClickHouseSql } from '../../lib/db/migrate';
import { MARK_MARGIN_MS } from '../../lib/stats/coverage';

/** Waits until every late mark is MARK_MARGIN_MS old (an import just ended): rollups made then stay fresh. */
export async function settleLateMarks(clickhouse: ClickHouseClient): Promise<void> {
  const [row] = await selectRows<{ wait: string }>(
    clickhouse,
    `SELECT toString(greatest(0, toUnixTimestamp64Milli(max(marked)) + {margin:UInt32} - toUnixTimestamp64Milli(now64(3)))) AS wait FROM late_marks`,
    { margin: MARK_MARGIN_MS },
  );
  const wait = Number(row?.wait ?? 0);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** The rollup tables a read pays per part of (see sql/clickhouse/010_rollup_compaction.sql). */
const COMPACTED_TABLES = ['daily_rollups_v2', 'window_rollups_v2', 'window_visits', 'visit_values'] as const;

/**
 * Merges every rollup table into one part per partition now, instead of within hours: for a backfill
 * (`tidemark rollup`), which writes months of rollups at once. Rewrites the tables; not for every run.
 */
export async function compactRollups(clickhouse: ClickHouseClient, cluster?: string): Promise<void> {
  // On a cluster every shard merges its own parts.
  for (const table of COMPACTED_TABLES)
    await clickhouse.command({ query: renderClickHouseSql(`OPTIMIZE TABLE ${table} {{ON_CLUSTER}} FINAL`, cluster) });
}
