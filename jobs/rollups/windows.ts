// Merged windows (migration 013): the standard ranges' rolled-up days merged into one row per dimension
// value (visitor sketches and sums), which readers take for a range total or breakdown over those days.
import { type ClickHouseClient, selectRows } from '../../lib/clickhouse/client';
import { type RollupCoverage, WINDOW_DIMS_EXCLUDED, windowRun } from '../../lib/stats/coverage';
import { EMPTY_SKETCH } from '../../lib/stats/sql/fragments';
import { rolledDaysSql } from '../../lib/stats/sql/rollupRows';
import { addDays, daysBetween, formatDate, type LocalDate, laterDate, today } from '../../lib/stats/time';

/** The standard ranges (days ending today) whose visitor sketches are kept merged. */
export const WINDOW_DAYS = [7, 30, 90, 365] as const;
const WINDOW_COLUMNS =
  'website_id, tz, first, last, dim, value, visitors, pageviews, events, a_country, a_browser, a_os, a_device, made_at, run';

/** Merges the daily rows of local days [first, last] (all rolled up) into one per dimension value: sketches and sums. */
export async function computeWindow(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: LocalDate,
  last: LocalDate,
  coverage: Pick<RollupCoverage, 'days' | 'newest'>,
): Promise<void> {
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  const params: Record<string, unknown> = {
    w: websiteId,
    tz: timeZone,
    first: firstDay,
    last: lastDay,
    excluded: WINDOW_DIMS_EXCLUDED,
  };
  const pinned = [...coverage.days.entries()]
    .filter(([d, v]) => v.superseded && d >= firstDay && d <= lastDay)
    .map(([d, v]): [string, number] => [d, v.version]);
  const days = rolledDaysSql({ firstDay, lastDay, skipDays: [], pinned, newest: coverage.newest }, params);
  // made_at first: the rows read are at least as old as it.
  const [{ t: madeAt, run }] = await selectRows<{ t: string; run: string }>(
    clickhouse,
    'SELECT toString(toUnixTimestamp(now())) AS t, toString(greatest(rand64(), 1)) AS run',
    {},
  );
  params.made = Number(madeAt);
  params.run = run;
  // Event dimensions (sketches and sums) and visit dimensions (`s:…`, sums only: their own table, migration
  // 013); an attribute row's a_* columns follow from its value (the same four as JSON). The marker last.
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (${WINDOW_COLUMNS})
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, dim, value, uniqMergeState(visitors), sum(pageviews), sum(events),
        any(a_country), any(a_browser), any(a_os), any(a_device), toDateTime({made:UInt32}), {run:UInt64}
      FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${days} AND dim NOT IN {excluded:Array(String)} AND NOT startsWith(dim, 's:')
      GROUP BY dim, value`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO window_visits (website_id, tz, first, last, dim, value, run, visits, bounces, duration_s, score_sum, a_country, a_browser, a_os, a_device, made_at)
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, dim, value, {run:UInt64}, sum(visits), sum(bounces), sum(duration_s), sum(score_sum),
        any(a_country), any(a_browser), any(a_os), any(a_device), toDateTime({made:UInt32})
      FROM daily_rollups_v2
      WHERE website_id = {w:UUID} AND tz = {tz:String} AND ${days} AND dim NOT IN {excluded:Array(String)} AND startsWith(dim, 's:')
      GROUP BY dim, value`,
    query_params: params,
  });
  await clickhouse.command({
    query: `INSERT INTO window_rollups_v2 (${WINDOW_COLUMNS})
      SELECT {w:UUID}, {tz:String}, {first:Date}, {last:Date}, '_', '', ${EMPTY_SKETCH}, 0, 0, '', '', '', '', toDateTime({made:UInt32}), {run:UInt64}`,
    query_params: params,
  });
}

/** Keeps the standard ranges' merged sketches over the rolled-up days; answers how many were made. */
export async function ensureWindows(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  coverage: RollupCoverage,
  now: number,
): Promise<number> {
  const day = today(site.timezone, now);
  let made = 0;
  for (const n of WINDOW_DAYS) {
    const first = laterDate(coverage.first, addDays(day, 1 - n));
    if (daysBetween(first, coverage.last) < 0) continue;
    const [firstDay, lastDay] = [formatDate(first), formatDate(coverage.last)];
    let newest = 0;
    for (const [d, v] of coverage.days) if (d >= firstDay && d <= lastDay) newest = Math.max(newest, v.version);
    if ((await windowRun(clickhouse, site.id, site.timezone, firstDay, lastDay, newest)) !== undefined) continue;
    await computeWindow(clickhouse, site.id, site.timezone, first, coverage.last, coverage);
    made++;
  }
  return made;
}
