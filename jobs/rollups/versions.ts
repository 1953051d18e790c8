// Versions of rolled-up days (migration 011): the store's clock that stamps them, what a failed run left,
// and the rows of superseded versions once no reader can still be reading them.
import { type ClickHouseClient, selectRows } from '../../lib/clickhouse/client';
import { type RollupCoverage, SUPERSEDED_GRACE_MS } from '../../lib/stats/coverage';

/** The store's clock (ms): versions and late marks are compared on it, whatever the caller's clock. */
export async function storeNow(clickhouse: ClickHouseClient): Promise<number> {
  const [row] = await selectRows<{ t: string }>(
    clickhouse,
    'SELECT toString(toUnixTimestamp64Milli(now64(3))) AS t',
    {},
  );
  return Number(row.t);
}

const VERSIONED_TABLES = ['daily_rollups_v2', 'visit_values'] as const;

/** Deletes a website's rows of days [first, last] (in its time zone) matching a condition on date and version. */
async function deleteRows(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: string,
  last: string,
  condition: string,
  params: Record<string, unknown>,
) {
  for (const table of VERSIONED_TABLES) {
    await clickhouse.command({
      query: `DELETE FROM ${table} WHERE website_id = {w:UUID} AND tz = {tz:String} AND date >= {first:Date} AND date <= {last:Date} AND ${condition}`,
      query_params: { w: websiteId, tz: timeZone, first, last, ...params },
    });
  }
}

/** Rows of days [first, last] of a version no marker names: what a run that failed half-way left. */
export async function deleteOrphans(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: string,
  last: string,
) {
  const rows = await selectRows<{ k: string }>(
    clickhouse,
    `SELECT DISTINCT concat(toString(date), '|', toString(version)) AS k FROM daily_rollups_v2
     WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = '_' AND date >= {first:Date} AND date <= {last:Date}`,
    { w: websiteId, tz: timeZone, first, last },
  );
  const keep = rows.map((r) => r.k);
  await deleteRows(
    clickhouse,
    websiteId,
    timeZone,
    first,
    last,
    "concat(toString(date), '|', toString(version)) NOT IN {keep:Array(String)}",
    { keep },
  );
}

/**
 * Deletes the rows of versions superseded at least `graceMs` ago (readers that planned with them have
 * moved on). Answers the days cleared.
 */
export async function dropSuperseded(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  coverage: Pick<RollupCoverage, 'days'>,
  graceMs = SUPERSEDED_GRACE_MS,
): Promise<number> {
  const superseded = [...coverage.days.entries()].filter(([, v]) => v.superseded);
  if (superseded.length === 0) return 0;
  const now = await storeNow(clickhouse);
  const due = superseded.filter(([, v]) => v.version <= now - graceMs);
  if (due.length === 0) return 0;
  // In date order: coverage lists its days so.
  const days = due.map(([d]) => d);
  // Their markers too: the day's is then its newest alone.
  await deleteRows(
    clickhouse,
    site.id,
    site.timezone,
    days[0],
    days[days.length - 1],
    'date IN {days:Array(Date)} AND version < {versions:Array(UInt64)}[indexOf({days:Array(Date)}, date)]',
    {
      days,
      versions: due.map(([, v]) => v.version),
    },
  );
  return days.length;
}
