// Events a team's websites stored since a moment: the usage report's `events` figure.
import type { Pool } from 'pg';
import { listWebsitesForTeam } from '../accounts/websites';
import type { ClickHouseClient } from '../clickhouse/client';

export async function eventsStoredSince(
  clickhouse: ClickHouseClient,
  pool: Pool,
  teamId: string,
  start: Date,
): Promise<number> {
  const ids = (await listWebsitesForTeam(pool, teamId)).map((w) => w.id);
  if (ids.length === 0) return 0;
  const rows = await (
    await clickhouse.query({
      query: 'SELECT count() AS n FROM events WHERE website_id IN {ids:Array(UUID)} AND ts >= {start:DateTime64(3)}',
      query_params: { ids, start: start.getTime() / 1000 },
      format: 'JSONEachRow',
    })
  ).json<{ n: string }>();
  return Number(rows[0]?.n ?? 0);
}
