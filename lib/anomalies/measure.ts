// The figures of UTC hours the anomaly job judges: visitors, pageviews, bounce rate and visit duration through
// the stats query model (the Stats API's definitions, so the numbers match it), goal completions through the
// conversion model, and browser errors from error_events. Only the hours asked are read, each run of
// consecutive hours as one window.
import { type ClickHouseClient, selectRows } from '../clickhouse/client';
import { runConversions } from '../stats/conversions';
import type { GoalDefinition, Window } from '../stats/model';
import { runStats } from '../stats/run';
import { inWindows } from '../stats/sql/fragments';

export const HOUR_MS = 3_600_000;

export interface HourFigures {
  visitors: number;
  pageviews: number;
  /** % of the sessions begun in the hour (Stats API bounce_rate). */
  bounce_rate: number;
  /** Mean length in seconds of the sessions begun in the hour (Stats API visit_duration). */
  visit_duration: number;
  errors: number;
  /** Error events per pageview (0 without pageviews). */
  error_rate: number;
  /** Completions per goal id. */
  goals: Map<string, number>;
}

export interface MeasuredGoal extends GoalDefinition {
  id: string;
}

const empty = (): HourFigures => ({
  visitors: 0,
  pageviews: 0,
  bounce_rate: 0,
  visit_duration: 0,
  errors: 0,
  error_rate: 0,
  goals: new Map(),
});

/** Runs of consecutive hour starts (ms), as [start, end) windows. */
export function hourWindows(hours: readonly number[]): Window[] {
  const sorted = [...new Set(hours)].sort((a, b) => a - b);
  const out: Window[] = [];
  for (const h of sorted) {
    const last = out[out.length - 1];
    if (last && last.end === h) last.end = h + HOUR_MS;
    else out.push({ start: h, end: h + HOUR_MS });
  }
  return out;
}

/** A UTC bucket label of the model ("YYYY-MM-DD HH:00:00") as its instant. */
const labelMs = (label: string) => Date.parse(`${label.replace(' ', 'T')}Z`);

/** The figures of each hour (UTC hour starts, ms); hours without data are zeros. */
export async function measureHours(
  clickhouse: ClickHouseClient,
  websiteId: string,
  goals: readonly MeasuredGoal[],
  hours: readonly number[],
): Promise<Map<number, HourFigures>> {
  const out = new Map<number, HourFigures>(hours.map((h) => [h, empty()]));
  const at = (ms: number) => out.get(ms);
  const windows = hourWindows(hours);
  const base = { websiteId, timeZone: 'UTC', filters: [] };
  for (const w of windows) {
    const rows = await runStats(clickhouse, {
      ...base,
      start: w.start,
      end: w.end,
      metrics: ['visitors', 'pageviews', 'bounce_rate', 'visit_duration'],
      dimension: 'time:hour',
    });
    for (const r of rows) {
      const f = at(labelMs(r.key));
      if (!f) continue;
      f.visitors = r.values.visitors ?? 0;
      f.pageviews = r.values.pageviews ?? 0;
      f.bounce_rate = r.values.bounce_rate ?? 0;
      f.visit_duration = r.values.visit_duration ?? 0;
    }
    if (goals.length) await measureGoals(clickhouse, websiteId, goals, w, at);
  }
  for (const r of await errorCounts(clickhouse, websiteId, windows)) {
    const f = at(Number(r.h) * 1000);
    if (f) f.errors = Number(r.n);
  }
  for (const f of out.values()) f.error_rate = f.pageviews > 0 ? Math.round((f.errors / f.pageviews) * 1e4) / 1e4 : 0;
  return out;
}

/** Completions per goal: one question by goal for a single hour, else one by hour per goal. */
async function measureGoals(
  clickhouse: ClickHouseClient,
  websiteId: string,
  goals: readonly MeasuredGoal[],
  w: Window,
  at: (ms: number) => HourFigures | undefined,
): Promise<void> {
  const q = { websiteId, timeZone: 'UTC', start: w.start, end: w.end, filters: [], goals, currency: '' };
  if (w.end - w.start === HOUR_MS) {
    const f = at(w.start);
    const rows = await runConversions(clickhouse, {
      ...q,
      metrics: ['events'],
      conversionFilters: [],
      dimension: 'goal',
    });
    const byName = new Map(rows.map((r) => [r.key, r.values.events ?? 0]));
    for (const g of goals) f?.goals.set(g.id, byName.get(g.name) ?? 0);
    return;
  }
  for (const g of goals) {
    const rows = await runConversions(clickhouse, {
      ...q,
      metrics: ['events'],
      conversionFilters: [{ key: 'goal', operator: 'is', values: [g.name] }],
      dimension: 'time:hour',
    });
    for (let h = w.start; h < w.end; h += HOUR_MS) at(h)?.goals.set(g.id, 0);
    for (const r of rows) at(labelMs(r.key))?.goals.set(g.id, r.values.events ?? 0);
  }
}

/** Error events per UTC hour of the windows (an event stored twice counts once). */
function errorCounts(
  clickhouse: ClickHouseClient,
  websiteId: string,
  windows: readonly { start: number; end: number }[],
) {
  const params: Record<string, unknown> = { w: websiteId };
  const sql = `SELECT toUnixTimestamp(toStartOfHour(ts)) AS h, uniqExact(event_id) AS n
    FROM error_events
    WHERE website_id = {w:UUID} AND ${inWindows('ts', windows, params)}
    GROUP BY h`;
  return selectRows<{ h: string; n: string }>(clickhouse, sql, params);
}
