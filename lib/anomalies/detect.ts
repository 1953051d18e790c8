// Judging one metric of one hour against its seasonal baseline (docs/intelligence.md "Anomalies"): the expected
// value is the median of the same hour of the week over the previous weeks, so one odd week (a past spike or
// outage) moves it little; a minimum volume keeps small sites and thin hours from alarming on noise.
import type { ANOMALY_SEVERITIES } from '../accounts/settingsSchemas';

export const ANOMALY_METRICS = [
  'visitors',
  'pageviews',
  'bounce_rate',
  'visit_duration',
  'error_rate',
  'goal_conversions',
] as const;
export type AnomalyMetric = (typeof ANOMALY_METRICS)[number];

export type Severity = (typeof ANOMALY_SEVERITIES)[number];

/** How many earlier weeks give the baseline: the same hour of the week 1–4 weeks before. */
export const BASELINE_WEEKS = 4;
/** Fewer earlier weeks with any traffic in the hour than this: no baseline yet (a new site). */
export const MIN_BASELINE_WEEKS = 3;
/**
 * The minimum volume: an hour whose baseline (the median of its earlier weeks) has fewer pageviews than this is
 * not judged at all (tiny sites, quiet night hours), and ratios (bounce rate, visit duration, error rate) also
 * need this many pageviews in the hour itself: a ratio of a handful of visits is noise.
 */
export const MIN_PAGEVIEWS = 30;
/** Counts (visitors, pageviews, goal conversions) must also move by at least this many to be outside the band. */
export const MIN_COUNT_CHANGE = 10;

const COUNTS: ReadonlySet<AnomalyMetric> = new Set(['visitors', 'pageviews', 'goal_conversions']);

/** The median of the values (the mean of the middle two for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The spec's bands: 50–100 % info, 100–200 % warning, over 200 % critical; below 50 % no anomaly. */
export function severityOf(deviation: number): Severity | undefined {
  if (!(deviation >= 50)) return undefined;
  if (deviation < 100) return 'info';
  if (deviation <= 200) return 'warning';
  return 'critical';
}

const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places;

/** One metric of one hour: its value, and the same hour of each earlier week (most recent first). */
export interface HourSample {
  metric: AnomalyMetric;
  actual: number;
  history: readonly number[];
  /** The hour's pageviews and the median of its earlier weeks' (the volume rule for ratios). */
  pageviews: number;
  baselinePageviews: number;
  /** How many earlier weeks had any event in this hour. */
  weeksWithTraffic: number;
}

export type Verdict =
  /** Too little volume or history to say (an open anomaly is left as it is). */
  | { kind: 'unjudged' }
  | { kind: 'normal'; expected: number; deviation: number }
  | { kind: 'anomaly'; expected: number; deviation: number; severity: Severity };

/** Whether an hour's metric is outside its band, and by how much (deviation = |actual − expected| / expected × 100). */
export function judge(s: HourSample): Verdict {
  if (s.weeksWithTraffic < MIN_BASELINE_WEEKS || s.baselinePageviews < MIN_PAGEVIEWS) return { kind: 'unjudged' };
  const counts = COUNTS.has(s.metric);
  if (!counts && s.pageviews < MIN_PAGEVIEWS) return { kind: 'unjudged' };
  const expected = median(s.history);
  if (!(expected > 0)) return { kind: 'unjudged' };
  const deviation = round(deviationOf(s.actual, expected), 2);
  const e = round(expected, s.metric === 'error_rate' ? 4 : 2);
  const severity = counts && Math.abs(s.actual - expected) < MIN_COUNT_CHANGE ? undefined : severityOf(deviation);
  return severity ? { kind: 'anomaly', expected: e, deviation, severity } : { kind: 'normal', expected: e, deviation };
}

const deviationOf = (actual: number, expected: number) => (Math.abs(actual - expected) / expected) * 100;
