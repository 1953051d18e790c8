// The hourly anomaly job (docs/intelligence.md "Anomalies"): for each active website, each metric of the last
// complete UTC hour against the same hour of the 4 weeks before; opens, extends and resolves anomalies. A
// scope's date re-runs every hour of that day (in the website's time zone), oldest first.
import type { Pool, PoolClient } from 'pg';
import { type AnomalyMetric, BASELINE_WEEKS, judge, median } from '../lib/anomalies/detect';
import { HOUR_MS, type HourFigures, type MeasuredGoal, measureHours } from '../lib/anomalies/measure';
import { type MetricKey, recordInside, recordOutside } from '../lib/anomalies/store';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Logger } from '../lib/log';
import { addDays, parseDate, startOfDay } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';

const WEEK_MS = 7 * 24 * HOUR_MS;
/** The class of a website's anomaly-writes lock (the two-key form: apart from the migrations' and rollups' locks). */
const LOCK_CLASS = 727_025;

// What a run needs of registry.ts's JobContext and JobScope (that file imports this one: no import back).
interface Deps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  logger: Logger;
}
interface Scope {
  websiteId?: string;
  /** YYYY-MM-DD in each website's time zone. */
  date?: string;
}
const FIGURES: readonly Exclude<AnomalyMetric, 'goal_conversions'>[] = [
  'visitors',
  'pageviews',
  'bounce_rate',
  'visit_duration',
  'error_rate',
];

/** An anomaly a run opened (for the insights that follow each run). */
export interface OpenedAnomaly {
  id: string;
  websiteId: string;
  metric: AnomalyMetric;
  goalId: string | null;
}

export interface AnomalyRun {
  websites: number;
  hours: number;
  opened: OpenedAnomaly[];
  failed: number;
}

interface Site {
  id: string;
  timezone: string;
}

/** The hours (UTC starts) a run judges for a website: the last complete one, or every complete one of a day. */
export function hoursToJudge(site: Site, scope: Scope, now: number): number[] {
  const lastComplete = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
  if (!scope.date) return [lastComplete];
  const day = parseDate(scope.date);
  if (!day) throw new RangeError(`date must be YYYY-MM-DD, not ${scope.date}`);
  const tz = usableTimeZone(site.timezone);
  const out: number[] = [];
  for (let h = startOfDay(day, tz); h < startOfDay(addDays(day, 1), tz) && h <= lastComplete; h += HOUR_MS) out.push(h);
  return out;
}

export async function detectAnomalies(ctx: Deps, scope: Scope, now = Date.now()): Promise<AnomalyRun> {
  // A malformed date fails the run at once, not once per website.
  if (scope.date !== undefined && !parseDate(scope.date))
    throw new RangeError(`date must be YYYY-MM-DD, not ${scope.date}`);
  const { rows: sites } = await ctx.pool.query<Site>(
    `SELECT id, timezone FROM websites WHERE ${scope.websiteId ? 'id = $1' : 'is_active'} ORDER BY created_at, id`,
    scope.websiteId ? [scope.websiteId] : [],
  );
  const run: AnomalyRun = { websites: 0, hours: 0, opened: [], failed: 0 };
  for (const site of sites) {
    // One website's failure must not starve the others; the job fails afterwards so that it is retried.
    try {
      const hours = hoursToJudge(site, scope, now);
      run.opened.push(...(await detectForWebsite(ctx.pool, ctx.clickhouse, site.id, hours)));
      run.websites += 1;
      run.hours += hours.length;
    } catch (err) {
      run.failed += 1;
      ctx.logger.error({ err, websiteId: site.id }, 'anomaly detection failed for a website');
    }
  }
  if (run.failed) throw new Error(`anomaly detection failed for ${run.failed} of ${sites.length} websites`);
  return run;
}

/** Judges each hour (oldest first) of one website; answers the anomalies it opened. */
export async function detectForWebsite(
  pool: Pool,
  clickhouse: ClickHouseClient,
  websiteId: string,
  hours: readonly number[],
): Promise<OpenedAnomaly[]> {
  if (hours.length === 0) return [];
  const { rows: goals } = await pool.query<MeasuredGoal>(
    'SELECT id, name, kind, path FROM goals WHERE website_id = $1 AND is_active ORDER BY created_at, id',
    [websiteId],
  );
  const needed = hours.flatMap((h) => Array.from({ length: BASELINE_WEEKS + 1 }, (_, k) => h - k * WEEK_MS));
  const figures = await measureHours(clickhouse, websiteId, goals, needed);
  // The writes of one website in one transaction, under its lock: a run for the same website (the clock's and
  // `tidemark jobs run`) waits rather than interleave its hours, and a failure leaves nothing half-written.
  const db = await pool.connect();
  try {
    await db.query('BEGIN');
    await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, websiteId]);
    const opened = await judgeHours(db, websiteId, goals, figures, hours);
    await db.query('COMMIT');
    return opened;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    db.release();
  }
}

async function judgeHours(
  db: PoolClient,
  websiteId: string,
  goals: readonly MeasuredGoal[],
  figures: Map<number, HourFigures>,
  hours: readonly number[],
): Promise<OpenedAnomaly[]> {
  const opened: OpenedAnomaly[] = [];
  for (const hour of [...hours].sort((a, b) => a - b)) {
    const current = figures.get(hour)!;
    const past = Array.from({ length: BASELINE_WEEKS }, (_, k) => figures.get(hour - (k + 1) * WEEK_MS)!);
    const volume = { pageviews: current.pageviews, baselinePageviews: median(past.map((f) => f.pageviews)) };
    const weeksWithTraffic = past.filter((f) => f.pageviews > 0 || f.visitors > 0).length;
    const samples: { key: MetricKey; pick: (f: HourFigures) => number }[] = [
      ...FIGURES.map((metric) => ({ key: { websiteId, metric, goalId: null }, pick: (f: HourFigures) => f[metric] })),
      ...goals.map((g) => ({
        key: { websiteId, metric: 'goal_conversions' as const, goalId: g.id },
        pick: (f: HourFigures) => f.goals.get(g.id) ?? 0,
      })),
    ];
    for (const { key, pick } of samples) {
      const verdict = judge({
        metric: key.metric,
        actual: pick(current),
        history: past.map(pick),
        ...volume,
        weeksWithTraffic,
      });
      if (verdict.kind === 'anomaly') {
        const id = await recordOutside(db, key, {
          hour,
          expected: verdict.expected,
          actual: pick(current),
          deviation: verdict.deviation,
          severity: verdict.severity,
        });
        if (id) opened.push({ id, websiteId, metric: key.metric, goalId: key.goalId });
      } else if (verdict.kind === 'normal') {
        await recordInside(db, key, hour);
      }
    }
  }
  return opened;
}
