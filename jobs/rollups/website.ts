// Brings one website's rollups up to date: new closed days, provisional days once quiet, days a late event
// landed on, then superseded versions dropped and merged windows kept (lib/stats/coverage.ts says when).
import { type ClickHouseClient, selectRows } from '../../lib/clickhouse/client';
import {
  IDLE_MS,
  lateMarks,
  MARK_MARGIN_MS,
  marksSince,
  RAW_TAIL_MS,
  rollupCoverage,
  SETTLE_MS,
  staleDays,
} from '../../lib/stats/coverage';
import { sessionFold } from '../../lib/stats/sql/visits';
import { addDays, daysBetween, earlierDate, type LocalDate, parseDate, startOfDay, today } from '../../lib/stats/time';
import { computeRollups } from './compute';
import { dropSuperseded, storeNow } from './versions';
import { ensureWindows } from './windows';

/** A browser visit ends after this long without an event: how far past its last event a visit can reach. */
const VISIT_PAUSE_MS = 30 * 60_000;
/** Days one job run computes per website at most (a backfill continues on the next run). */
export const MAX_DAYS_PER_RUN = 62;

/** The last local day of a time zone that can no longer change at `now` (closed: rolled up for good). */
export function lastClosedDay(timeZone: string, now: number): LocalDate {
  let day = addDays(today(timeZone, now), -1);
  while (startOfDay(addDays(day, 1), timeZone) + RAW_TAIL_MS > now) day = addDays(day, -1);
  return day;
}

/** When the last visit that began on a local day last had an event (ms; 0 without visits). */
async function lastVisitEvent(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  day: LocalDate,
): Promise<number> {
  const params: Record<string, unknown> = { w: site.id };
  const window = { start: startOfDay(day, site.timezone), end: startOfDay(addDays(day, 1), site.timezone) };
  const [row] = await selectRows<{ t: string }>(
    clickhouse,
    `SELECT toString(toUnixTimestamp64Milli(max(e))) AS t FROM (${sessionFold('', [], [window], params)})`,
    params,
  );
  return Number(row?.t ?? 0);
}

/**
 * Whether a day that has not closed may be rolled up provisionally at `now` (ended a while ago, and quiet):
 * then how far its visits can reach (ms), else undefined.
 */
async function settledReach(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  day: LocalDate,
  now: number,
): Promise<number | undefined> {
  const end = startOfDay(addDays(day, 1), site.timezone);
  if (end + SETTLE_MS > now) return undefined;
  const last = await lastVisitEvent(clickhouse, site, day);
  return last < now - IDLE_MS ? Math.max(end, last + VISIT_PAUSE_MS) : undefined;
}

/**
 * Brings one website's rollups up to date at `now`: days not rolled up yet (closed ones from the day after
 * the last computed one, or its first event's day, at most MAX_DAYS_PER_RUN a run; then the days ended
 * since, provisionally), and again the days a late event landed on and provisional days that have closed.
 * Then drops superseded versions and keeps the merged windows. Answers the days computed, and the days
 * waiting for their late marks to be MARK_MARGIN_MS old (`tidemark rollup` waits for them).
 */
export async function rollUpWebsite(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  now: number,
): Promise<{ days: number; pending: number }> {
  const tz = site.timezone;
  const closed = lastClosedDay(tz, now);
  let coverage = await rollupCoverage(clickhouse, site.id, tz);
  let next = coverage ? addDays(coverage.last, 1) : undefined;
  if (!next) {
    const [row] = await selectRows<{ t: string }>(
      clickhouse,
      `SELECT toString(toUnixTimestamp64Milli(min(ts))) AS t FROM events WHERE website_id = {w:UUID} HAVING count() > 0`,
      { w: site.id },
    );
    if (!row) return { days: 0, pending: 0 };
    next = today(tz, Number(row.t));
  }
  let computed = 0;
  if (daysBetween(next, closed) >= 0) {
    const last = earlierDate(closed, addDays(next, MAX_DAYS_PER_RUN - 1));
    await computeRollups(clickhouse, site.id, tz, next, last, { final: true });
    computed += daysBetween(next, last) + 1;
    // A backfill goes on next run; windows wait for it.
    if (daysBetween(last, closed) > 0) return { days: computed, pending: 0 };
    next = addDays(last, 1);
  }
  for (;;) {
    const reach = await settledReach(clickhouse, site, next, now);
    if (reach === undefined) break;
    await computeRollups(clickhouse, site.id, tz, next, next, { final: false, reach });
    computed++;
    next = addDays(next, 1);
  }
  if (computed > 0 || !coverage) coverage = await rollupCoverage(clickhouse, site.id, tz);
  if (!coverage) return { days: computed, pending: 0 };
  const stale = staleDays(coverage, await lateMarks(clickhouse, site.id, marksSince(coverage)), tz);
  const marksSettled = (await storeNow(clickhouse)) - MARK_MARGIN_MS;
  let again = 0;
  let pending = 0;
  for (const [day, v] of coverage.days) {
    const d = parseDate(day)!;
    const closes = daysBetween(d, closed) >= 0;
    const mark = stale.get(day);
    if (mark !== undefined && mark >= marksSettled) {
      pending++;
      continue;
    }
    if (closes ? !v.final || mark !== undefined : mark !== undefined) {
      const reach = closes ? 0 : await settledReach(clickhouse, site, d, now);
      if (reach === undefined) continue;
      await computeRollups(clickhouse, site.id, tz, d, d, { final: closes, reach });
      again++;
    }
  }
  if (again > 0) coverage = (await rollupCoverage(clickhouse, site.id, tz)) ?? coverage;
  await dropSuperseded(clickhouse, site, coverage);
  await ensureWindows(clickhouse, site, coverage, now);
  return { days: computed + again, pending };
}
