// The hourly anomaly job (docs/intelligence.md "Anomalies"): for each active website, each metric of the last
// complete UTC hour against the same hour of the 4 weeks before; opens, extends and resolves anomalies. A
// scope's date re-runs every hour of that day (in the website's time zone), oldest first.
import type { Pool, PoolClient } from 'pg';
import { type AnomalyMetric, BASELINE_WEEKS, judge, median } from '../lib/anomalies/detect';
import { HOUR_MS, type HourFigures, type MeasuredGoal, measureHours } from '../lib/anomalies/measure';
import { type MetricKey, recordInside, recordOutside } from '../lib/anomalies/store';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { withTransaction } from '../lib/db/pool';
import { addDays, startOfDay } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';
import type { JobScope, StoreJobContext } from './context';
import { forEachWebsite, type ScopedWebsite, scopeDay } from './scope';

const WEEK_MS = 7 * 24 * HOUR_MS;
/** The class of a website's anomaly-writes lock (the two-key form: apart from the migrations' and rollups' locks). */
const LOCK_CLASS = 727_025;

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
}

/** The hours (UTC starts) a run judges for a website: the last complete one, or every complete one of a day. */
export function hoursToJudge(site: Pick<ScopedWebsite, 'id' | 'timezone'>, scope: JobScope, now: number): number[] {
  const lastComplete = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
  const day = scopeDay(scope);
  if (!day) return [lastComplete];
  const tz = usableTimeZone(site.timezone);
  const out: number[] = [];
  for (let h = startOfDay(day, tz); h < startOfDay(addDays(day, 1), tz) && h <= lastComplete; h += HOUR_MS) out.push(h);
  return out;
}

export async function detectAnomalies(ctx: StoreJobContext, scope: JobScope, now = Date.now()): Promise<AnomalyRun> {
  scopeDay(scope);
  const run: AnomalyRun = { websites: 0, hours: 0, opened: [] };
  run.websites = await forEachWebsite(ctx, scope, 'anomalies', async (site) => {
    const hours = hoursToJudge(site, scope, now);
    run.opened.push(...(await detectForWebsite(ctx.pool, ctx.clickhouse, site.id, hours)));
    run.hours += hours.length;
  });
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
  return withTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, websiteId]);
    return judgeHours(db, websiteId, goals, figures, hours);
  });
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
