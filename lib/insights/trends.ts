// Trend insights: a site metric, or a source, page or country's visitors, whose change from the previous 7
// days to the last 7 is both large and statistically significant (docs/intelligence.md "Insights").
//
// Counts (visitors, pageviews) are compared with the conditional test for two Poisson counts: if both weeks
// had the same rate, the current week's share of the two weeks' total n = a + b is Binomial(n, ½), so
// z = (a − b) / √(a + b). The bounce rate, a proportion of visits, uses the two-proportion z-test with the
// pooled rate. A trend needs |change| ≥ 20 %, |z| ≥ 3 (two-sided p < 0.003, strict because many keys are
// tried at once) and at least 50 in the larger week, so a small site's noise never reads as a trend.
import type { InsightDraft } from './store';
import { num, pctChange, signedPct } from './text';

export const TREND = { minChange: 20, minZ: 3, minVolume: 50, perDimension: 3 } as const;

/** z of the change from `before` to `now`, two Poisson counts (0 when both are 0). */
export function poissonZ(now: number, before: number): number {
  const n = now + before;
  return n > 0 ? (now - before) / Math.sqrt(n) : 0;
}

/** z of the change between two proportions k1/n1 (before) and k2/n2 (now), pooled (0 when undefined). */
export function proportionZ(k2: number, n2: number, k1: number, n1: number): number {
  if (n1 <= 0 || n2 <= 0) return 0;
  const p = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
  return se > 0 ? (k2 / n2 - k1 / n1) / se : 0;
}

export interface CountTrend {
  now: number;
  before: number;
  /** Percent change; null when `before` is 0 (a new source, page or country). */
  change: number | null;
  z: number;
}

/** The change of a count when it is a trend by the rule above, else undefined. */
export function countTrend(now: number, before: number): CountTrend | undefined {
  if (Math.max(now, before) < TREND.minVolume) return undefined;
  const change = pctChange(now, before);
  const z = poissonZ(now, before);
  if (change !== null && Math.abs(change) < TREND.minChange) return undefined;
  if (Math.abs(z) < TREND.minZ) return undefined;
  return { now, before, change, z };
}

/** The change of a bounce rate (whole %, of `visits`) when it is a trend, else undefined. */
export function rateTrend(
  now: { rate: number; visits: number },
  before: { rate: number; visits: number },
): CountTrend | undefined {
  if (Math.min(now.visits, before.visits) < TREND.minVolume) return undefined;
  const change = pctChange(now.rate, before.rate);
  if (change === null || Math.abs(change) < TREND.minChange) return undefined;
  const z = proportionZ((now.rate / 100) * now.visits, now.visits, (before.rate / 100) * before.visits, before.visits);
  if (Math.abs(z) < TREND.minZ) return undefined;
  return { now: now.rate, before: before.rate, change, z };
}

export interface WeekFigures {
  visitors: number;
  pageviews: number;
  visits: number;
  bounce_rate: number;
  /** Visitors by key (keys '' left out by the reader). */
  sources: Map<string, number>;
  pages: Map<string, number>;
  countries: Map<string, number>;
}

type Dimension = 'source' | 'page' | 'country';
const DIMENSIONS: { d: Dimension; field: 'sources' | 'pages' | 'countries'; label: string; of: string }[] = [
  { d: 'source', field: 'sources', label: 'Source', of: 'from' },
  { d: 'page', field: 'pages', label: 'Page', of: 'of' },
  { d: 'country', field: 'countries', label: 'Country', of: 'from' },
];

const ADVICE = {
  visitorsUp: 'See which sources and pages brought the extra visitors and invest in what worked.',
  visitorsDown:
    'Check that the tracking script is still on every page, then compare sources with the week before to find where visitors were lost.',
  bounceUp:
    'Compare landing pages with the week before: a slow or changed page, or traffic from a new source, often explains more visitors leaving at once.',
  bounceDown: 'Fewer visitors leave after one page; note what changed so you can keep it.',
  keyUp: (what: string) => `Find out why ${what} grew (a campaign, a link, a ranking) and build on it.`,
  keyDown: (what: string) =>
    `Find out why ${what} fell: a lost link or ranking, a broken page, or a campaign that ended.`,
};

function changeText(t: CountTrend): string {
  return t.change === null ? `up from 0 to ${num(t.now)}` : `${signedPct(t.change)} (${num(t.before)} → ${num(t.now)})`;
}

/**
 * Every trend between two weeks. `week` is the period key (the ISO week's Monday), `range` the two weeks in
 * words; `name` gives a country code its name.
 */
export function trendInsights(
  now: WeekFigures,
  before: WeekFigures,
  week: string,
  range: string,
  name: (d: Dimension, key: string) => string = (_d, k) => k,
): InsightDraft[] {
  const out: InsightDraft[] = [];
  const base = { type: 'trend' as const, period: week };
  const detail = (t: CountTrend) => ({ now: t.now, before: t.before, z: Math.round(t.z * 100) / 100 });

  for (const metric of ['visitors', 'pageviews'] as const) {
    const t = countTrend(now[metric], before[metric]);
    if (!t) continue;
    const up = t.now > t.before;
    out.push({
      ...base,
      rule: `site_${metric}`,
      subject: '',
      severity: up ? 'info' : (t.change ?? 0) <= -50 ? 'critical' : 'warning',
      title: `${metric === 'visitors' ? 'Visitors' : 'Pageviews'} ${up ? 'up' : 'down'} ${num(Math.abs(t.change ?? 100), 1)}% week over week`,
      description: `The site had ${num(t.now)} ${metric} in ${range}, against ${num(t.before)} the 7 days before: ${changeText(t)}, a change far beyond normal weekly variation (z = ${num(t.z, 1)}).`,
      metric_name: metric,
      metric_value: t.now,
      metric_change: t.change,
      recommendation: up ? ADVICE.visitorsUp : ADVICE.visitorsDown,
      details: detail(t),
    });
  }

  const b = rateTrend(
    { rate: now.bounce_rate, visits: now.visits },
    { rate: before.bounce_rate, visits: before.visits },
  );
  if (b) {
    const worse = b.now > b.before;
    out.push({
      ...base,
      rule: 'site_bounce_rate',
      subject: '',
      severity: worse ? 'warning' : 'info',
      title: `Bounce rate ${worse ? 'up' : 'down'} from ${num(b.before)}% to ${num(b.now)}%`,
      description: `${num(b.now)}% of the ${num(now.visits)} visits in ${range} left after one page without interacting, against ${num(b.before)}% of ${num(before.visits)} visits the 7 days before (${signedPct(b.change ?? 0)}, z = ${num(b.z, 1)}).`,
      metric_name: 'bounce_rate',
      metric_value: b.now,
      metric_change: b.change,
      recommendation: worse ? ADVICE.bounceUp : ADVICE.bounceDown,
      details: detail(b),
    });
  }

  for (const { d, field, label, of } of DIMENSIONS) {
    const keys = new Set([...now[field].keys(), ...before[field].keys()]);
    const found: { key: string; t: CountTrend }[] = [];
    for (const key of keys) {
      const t = countTrend(now[field].get(key) ?? 0, before[field].get(key) ?? 0);
      if (t) found.push({ key, t });
    }
    // The strongest few, ties by key: a flood of small moves helps nobody.
    found.sort((x, y) => Math.abs(y.t.z) - Math.abs(x.t.z) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    for (const { key, t } of found.slice(0, TREND.perDimension)) {
      const up = t.now > t.before;
      const what = `visitors ${of} ${name(d, key)}`;
      out.push({
        ...base,
        rule: `${d}_visitors`,
        subject: key,
        severity: up ? 'info' : 'warning',
        title:
          t.change === null
            ? `New ${label.toLowerCase()}: ${name(d, key)} brought ${num(t.now)} visitors`
            : `${label} ${name(d, key)}: visitors ${up ? 'up' : 'down'} ${num(Math.abs(t.change), 1)}%`,
        description: `Visitors ${of} ${name(d, key)} in ${range}: ${num(t.now)}, against ${num(t.before)} the 7 days before (${changeText(t)}, z = ${num(t.z, 1)}).`,
        metric_name: 'visitors',
        metric_value: t.now,
        metric_change: t.change,
        recommendation: up ? ADVICE.keyUp(what) : ADVICE.keyDown(what),
        details: detail(t),
      });
    }
  }
  return out;
}
