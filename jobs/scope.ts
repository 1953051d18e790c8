// What every per-website job does with its scope: which websites it covers, which day, and one website's
// failure never stopping the others (the run fails afterwards, so that the queue retries it).
import { type LocalDate, parseDate } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';
import type { JobScope, StoreJobContext } from './context';

export interface ScopedWebsite {
  id: string;
  /** The stored zone, or UTC when ClickHouse does not know it (as the stats reads do). */
  timezone: string;
  revenue_currency: string;
}

/** The scope's day, if it names one; a malformed date fails the run at once, not once per website. */
export function scopeDay(scope: JobScope): LocalDate | undefined {
  if (scope.date === undefined) return undefined;
  const day = parseDate(scope.date);
  if (!day) throw new RangeError(`date must be YYYY-MM-DD, not ${scope.date}`);
  return day;
}

/**
 * Runs `each` for the scope's website (active or not), else for every active website, oldest first; answers
 * how many websites it covered. A failing website is logged and the others go on; the run then fails.
 */
export async function forEachWebsite(
  ctx: StoreJobContext,
  scope: JobScope,
  job: string,
  each: (site: ScopedWebsite) => Promise<void>,
): Promise<number> {
  const { rows } = await ctx.pool.query<ScopedWebsite>(
    `SELECT id, timezone, revenue_currency FROM websites
     WHERE ($1::uuid IS NULL AND is_active) OR id = $1::uuid ORDER BY created_at, id`,
    [scope.websiteId ?? null],
  );
  if (scope.websiteId && rows.length === 0) throw new Error(`${job}: website ${scope.websiteId} not found`);
  let failed = 0;
  let first = '';
  for (const site of rows) {
    try {
      await each({ ...site, timezone: usableTimeZone(site.timezone) });
    } catch (err) {
      failed++;
      first ||= (err as Error).message;
      ctx.logger.error({ websiteId: site.id, err: (err as Error).message }, `${job} failed for a website`);
    }
  }
  if (failed) throw new Error(`${job} failed for ${failed} of ${rows.length} website(s); first: ${first}`);
  return rows.length;
}
