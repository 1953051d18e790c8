// What the daily rollups cover (sql/clickhouse/004_rollups.sql; 007 remade the tables with small granules,
// 011 added versions and late marks), read by both the query model (plan.ts decides from it) and the rollup
// job (jobs/rollups/) that writes them.
// A day is first rolled up soon after it ends (provisionally: SETTLE_MS after its end, once its visits have
// gone quiet), and again when it closes, RAW_TAIL_MS after its end (server events may carry a ts up to 24 h
// old, and queued jobs need a moment to land). In between, an event landing late for the day leaves a late
// mark (migration 011) newer than the day's version: readers then read that day raw, and the next run of the
// job rolls it up again. Visits still getting events after a day closes are counted as they stood then.
import { type ClickHouseClient, selectRows } from '../clickhouse/client';
import { addDays, daysBetween, formatDate, type LocalDate, parseDate, today } from './time';

export const RAW_TAIL_MS = 26 * 3600_000;
/** A day is rolled up provisionally this long after it ends… */
export const SETTLE_MS = 40 * 60_000;
/**
 * …once none of its visits had an event for this long: a browser visit ends after 30 idle minutes, and an
 * event inserted later than 5 minutes after its ts leaves a late mark (6 minutes: 1 for the insert itself).
 * A visit's next event then either is marked or comes after a 30-minute pause (counted from when the day closes).
 */
export const IDLE_MS = 36 * 60_000;
/**
 * A mark this close before a version counts against it: an insert that began then may have ended after the
 * version's reads began (a ClickHouse server runs inserts beside reads; the embedded store one at a time).
 * A day is rolled up again only once its marks are this old, or it would be stale at once.
 */
export const MARK_MARGIN_MS = 10_000;
/** Superseded versions are deleted this long after the newer one (readers remember a coverage for a minute). */
export const SUPERSEDED_GRACE_MS = 5 * 60_000;
/** A rolled-up day's newest version (the store's clock in ms when its run began), and its state. */
export interface DayVersion {
  version: number;
  final: boolean;
  /** Rows of an older version may still be stored: readers pin the day to its version. */
  superseded: boolean;
  /** Until when (ms) the day's visits could still get events, past its end (provisional days; 0: not past it). */
  reach: number;
}

/** A website's computed days (YYYY-MM-DD). */
export interface RollupCoverage {
  first: LocalDate;
  last: LocalDate;
  days: ReadonlyMap<string, DayVersion>;
  /** The newest version of any day: rows newer than it were written after this coverage was read. */
  newest: number;
  /** The oldest: a late mark older than it (by MARK_MARGIN_MS) concerns no day. */
  oldest: number;
}

/**
 * A remembered coverage stays safe to read with: its days keep their rows until SUPERSEDED_GRACE_MS after a
 * newer version, and rows newer than it are never read. Late marks are what can make a day stale, so they
 * are remembered only briefly (an event landing late shows within that, like any event within a flush).
 */
export const COVERAGE_MEMORY_MS = 60_000;
export const MARKS_MEMORY_MS = 5_000;
const knownCoverage = new Map<string, { at: number; coverage: RollupCoverage }>();
const knownMarks = new Map<string, { at: number; marks: LateMark[] }>();

function remember<V>(cache: Map<string, { at: number } & V>, key: string, entry: V): void {
  if (cache.size > 10_000) cache.clear();
  cache.set(key, { at: Date.now(), ...entry });
}

/** rollupCoverage, remembered for COVERAGE_MEMORY_MS. */
export async function cachedCoverage(clickhouse: ClickHouseClient, websiteId: string, timeZone: string) {
  const key = `${websiteId}|${timeZone}`;
  const known = knownCoverage.get(key);
  if (known && Date.now() - known.at < COVERAGE_MEMORY_MS) return known.coverage;
  const coverage = await rollupCoverage(clickhouse, websiteId, timeZone);
  if (coverage) remember(knownCoverage, key, { coverage });
  return coverage;
}

/** The computed days of a website in a time zone, when they form one unbroken run. */
export async function rollupCoverage(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
): Promise<RollupCoverage | undefined> {
  const rows = await selectRows<{ d: string; v: string; f: number; r: string; n: string }>(
    clickhouse,
    `SELECT toString(date) AS d, toString(max(version)) AS v, argMax(final, version) AS f, toString(argMax(reach, version)) AS r, count() AS n
     FROM daily_rollups_v2 WHERE website_id = {w:UUID} AND tz = {tz:String} AND dim = '_'
     GROUP BY date ORDER BY date`,
    { w: websiteId, tz: timeZone },
  );
  const first = rows.length ? parseDate(rows[0].d) : undefined;
  const last = first && parseDate(rows[rows.length - 1].d);
  if (!first || !last || daysBetween(first, last) + 1 !== rows.length) return undefined;
  const days = new Map<string, DayVersion>();
  let newest = 0;
  let oldest = Infinity;
  for (const r of rows) {
    const version = Number(r.v);
    days.set(r.d, { version, final: Number(r.f) === 1, superseded: Number(r.n) > 1, reach: Number(r.r) });
    newest = Math.max(newest, version);
    oldest = Math.min(oldest, version);
  }
  return { first, last, days, newest, oldest };
}

/** A 15-minute bucket (UTC instant, ms) and the newest insert (store clock, ms) that marked it late. */
export interface LateMark {
  bucket: number;
  marked: number;
}

/**
 * A website's late marks made at or after `since` (store clock, ms). An import marks every bucket it
 * writes, and the days it fills are rolled up after it: their marks are older than every version.
 */
export async function lateMarks(clickhouse: ClickHouseClient, websiteId: string, since: number): Promise<LateMark[]> {
  const rows = await selectRows<{ b: string; m: string }>(
    clickhouse,
    `SELECT toString(toUnixTimestamp(bucket)) AS b, toString(toUnixTimestamp64Milli(max(marked))) AS m FROM late_marks
     WHERE website_id = {w:UUID} GROUP BY bucket HAVING max(marked) >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
    { w: websiteId, since: Math.max(0, Math.floor(since)) },
  );
  return rows.map((r) => ({ bucket: Number(r.b) * 1000, marked: Number(r.m) }));
}

/** The marks that can concern a coverage's days. */
export const marksSince = (coverage: Pick<RollupCoverage, 'oldest'>) => coverage.oldest - MARK_MARGIN_MS;

/** lateMarks, remembered for MARKS_MEMORY_MS. */
export async function cachedMarks(clickhouse: ClickHouseClient, websiteId: string, since: number) {
  const key = `${websiteId}|${since}`;
  const known = knownMarks.get(key);
  if (known && Date.now() - known.at < MARKS_MEMORY_MS) return known.marks;
  const marks = await lateMarks(clickhouse, websiteId, since);
  remember(knownMarks, key, { marks });
  return marks;
}

/** The rolled-up days (YYYY-MM-DD) a late mark is newer than (their rows miss an event), with their newest mark. */
export function staleDays(
  coverage: Pick<RollupCoverage, 'days'>,
  marks: readonly LateMark[],
  timeZone: string,
): Map<string, number> {
  const stale = new Map<string, number>();
  for (const mark of marks) {
    // A mark concerns its bucket's day, and earlier provisional days whose visits could reach its bucket.
    const bucketDay = today(timeZone, mark.bucket);
    for (let back = 0; back <= 2; back++) {
      const day = formatDate(addDays(bucketDay, -back));
      const known = coverage.days.get(day);
      if (!known || (back > 0 && mark.bucket >= known.reach)) continue;
      if (mark.marked >= known.version - MARK_MARGIN_MS) stale.set(day, Math.max(stale.get(day) ?? 0, mark.marked));
    }
  }
  return stale;
}

/**
 * Dimensions without a window: the marker, page scores and the visit dimensions by entry and exit page (read
 * per day). Pages have one: even when their daily sketches hardly overlap, reading one merged sketch per page
 * costs about half of reading and merging a sketch per page and day (measured 2.2×). Windows carry their
 * days' sums as well (migration 013), so a range question reads no daily rows of a windowed dimension.
 */
export const WINDOW_DIMS_EXCLUDED: readonly string[] = ['_', 'page_scores', 's:entry_page', 's:exit_page'];

/** Windows are read for this long after they were made; their rows live 3 days (TTL, migrations 007 and 013). */
const WINDOW_READ_DAYS = 2;

const knownWindows = new Map<string, { at: number; madeAt: number; run: string }>();

/**
 * The run (migration 013) of the newest merged window over exactly local days [first, last] (YYYY-MM-DD),
 * when it was made from their versions up to `newest` (ms): a window made before a day was rolled up again
 * misses what changed. Undefined when there is none; readers read that run's rows only.
 */
export async function windowRun(
  clickhouse: ClickHouseClient,
  websiteId: string,
  timeZone: string,
  first: string,
  last: string,
  newest: number,
): Promise<string | undefined> {
  const key = `${websiteId}|${timeZone}|${first}|${last}`;
  // made_at has whole seconds; the window's run began after the versions it read.
  const fresh = (madeAt: number) => madeAt >= Math.floor(newest / 1000) * 1000;
  const seen = knownWindows.get(key);
  if (seen && fresh(seen.madeAt) && seen.madeAt > Date.now() - WINDOW_READ_DAYS * 86_400_000) return seen.run;
  // Windows made before runs (run 0: sketches only) are left for the job to make again, and so are windows
  // near their TTL: a window's rows and marker (in two tables) expire in separate merges.
  const [row] = await selectRows<{ made: string; r: string }>(
    clickhouse,
    `SELECT toString(toUnixTimestamp(max(made_at))) AS made, toString(argMax(run, made_at)) AS r FROM window_rollups_v2
     WHERE website_id = {w:UUID} AND tz = {tz:String} AND last = {last:Date} AND first = {first:Date} AND dim = '_' AND run != 0
       AND made_at > now() - INTERVAL ${WINDOW_READ_DAYS} DAY
     HAVING count() > 0`,
    { w: websiteId, tz: timeZone, first, last },
  );
  if (!row) return undefined;
  const madeAt = Number(row.made) * 1000;
  // A window lives for days; what it was made from only changes by a newer version, which `newest` shows.
  // Its rows stay while it is remembered: no merge folds one run's rows into another's, and the TTL is days.
  remember(knownWindows, key, { madeAt, run: row.r });
  return fresh(madeAt) ? row.r : undefined;
}
