// The overview's first questions — the key figures and visitors over time, with the previous period when
// comparing — and a way to ask them before the overview's code has arrived (dashboard/index.tsx asks while
// the page's chunks and the website load; the overview takes that answer instead of asking again).
import { compact, duration, percent } from '../../lib/format';
import { previousRange } from './period';
import { type Kpis, kpisOf, runQuery, type Series, timeSeries } from './query';
import { type DashboardState, effectiveInterval, type Interval, serializeState } from './state';

export interface Kpi {
  metric: string;
  label: string;
  format(v: number): string;
  lowerIsBetter?: boolean;
}

const VISIT_KPIS: Kpi[] = [
  { metric: 'visitors', label: 'Visitors', format: compact },
  { metric: 'visits', label: 'Visits', format: compact },
  { metric: 'pageviews', label: 'Pageviews', format: compact },
  { metric: 'views_per_visit', label: 'Views per visit', format: (v) => compact(Math.round(v * 100) / 100) },
  { metric: 'bounce_rate', label: 'Bounce rate', format: (v) => percent(v), lowerIsBetter: true },
  { metric: 'visit_duration', label: 'Visit duration', format: duration },
];

/** Under a goal, event or property filter the figures are conversions (v2 answers no visit metrics there). */
const CONVERSION_KPIS: Kpi[] = [
  { metric: 'visitors', label: 'Unique conversions', format: compact },
  { metric: 'events', label: 'Total conversions', format: compact },
  { metric: 'conversion_rate', label: 'Conversion rate', format: (v) => percent(v, 1) },
];

const convertsOn = (dimension: string) =>
  dimension === 'event:goal' || dimension === 'event:name' || dimension.startsWith('event:props:');

export function kpisFor(state: DashboardState): Kpi[] {
  return state.filters.some((f) => convertsOn(f.dimension)) ? CONVERSION_KPIS : VISIT_KPIS;
}

interface Period {
  kpis: Kpis;
  series: Series;
  resolved: [string, string];
}

export interface Overview extends Period {
  previous?: Period;
}

async function loadOverview(siteId: string, state: DashboardState, interval: Interval, signal: AbortSignal) {
  const metrics = kpisFor(state).map((k) => k.metric);
  const [totals, series] = await Promise.all([
    runQuery(siteId, state, { metrics }, signal),
    timeSeries(siteId, state, interval, 'visitors', undefined, signal),
  ]);
  const out: Overview = { kpis: kpisOf(totals, metrics), series, resolved: totals.query.date_range };
  if (state.compare) {
    // v2 has no include.comparisons: the same questions over the period before, of equal length.
    const range = previousRange(totals.query.date_range);
    const [before, beforeSeries] = await Promise.all([
      runQuery(siteId, state, { metrics, date_range: range }, signal),
      timeSeries(siteId, state, interval, 'visitors', range, signal),
    ]);
    out.previous = { kpis: kpisOf(before, metrics), series: beforeSeries, resolved: before.query.date_range };
  }
  return out;
}

/** Answers asked for early (prefetchOverview), taken once by the overview; forgotten if never taken. */
const early = new Map<string, Promise<Overview>>();
const EARLY_TTL_MS = 10_000;
const keyOf = (siteId: string, state: DashboardState, interval: Interval) =>
  `${siteId}${serializeState(state)}|${interval}`;

export function prefetchOverview(siteId: string, state: DashboardState): void {
  const interval = effectiveInterval(state);
  const key = keyOf(siteId, state, interval);
  if (early.has(key)) return;
  const answer = loadOverview(siteId, state, interval, new AbortController().signal);
  // A refused early answer (the session ended meanwhile) is asked again by the overview, with the token.
  answer.catch(() => early.delete(key));
  early.set(key, answer);
  setTimeout(() => early.delete(key), EARLY_TTL_MS);
}

export function overviewData(siteId: string, state: DashboardState, interval: Interval, signal: AbortSignal) {
  const key = keyOf(siteId, state, interval);
  const answer = early.get(key);
  early.delete(key);
  return answer ?? loadOverview(siteId, state, interval, signal);
}
