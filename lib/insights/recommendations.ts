// Recommendation insights: named rules over the last 7 days' figures (docs/intelligence.md "Insights" lists
// each with its thresholds). Every rule is a pure function of aggregates, so a test can build its input by hand.

import type { InsightDraft } from './store';
import { num, pctChange, signedPct } from './text';
import { countTrend } from './trends';

export const RULES = {
  /** An entry page with many visits whose bounce rate is far above the site's. */
  landingPageBounce: { name: 'landing_page_bounce', minVisits: 100, minExcessPoints: 20, max: 3 },
  /** A page on which many visitors hit a JavaScript error. */
  pageErrors: { name: 'page_errors', minVisitors: 20, minShare: 5, criticalShare: 25, max: 3 },
  /** A source whose visitors grew (a trend by the trend test) but who convert far below the site's rate. */
  sourceNotConverting: { name: 'source_not_converting', minExpected: 5, maxShareOfExpected: 0.5, max: 3 },
} as const;

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface LandingPage {
  page: string;
  visits: number;
  /** Whole %. */
  bounceRate: number;
}

/** Rule landing_page_bounce: visits ≥ 100 and a bounce rate ≥ 20 points above the site's. */
export function landingPageBounce(
  pages: readonly LandingPage[],
  site: { visits: number; bounceRate: number },
  week: string,
  range: string,
): InsightDraft[] {
  const r = RULES.landingPageBounce;
  return pages
    .filter((p) => p.page !== '' && p.visits >= r.minVisits && p.bounceRate - site.bounceRate >= r.minExcessPoints)
    .map((p) => ({ p, excess: (p.visits * (p.bounceRate - site.bounceRate)) / 100 }))
    .sort((a, b) => b.excess - a.excess || byKey(a.p.page, b.p.page))
    .slice(0, r.max)
    .map(({ p }) => ({
      type: 'recommendation' as const,
      rule: r.name,
      subject: p.page,
      period: week,
      severity: 'warning' as const,
      title: `Visitors landing on ${p.page} leave at once`,
      description: `${num(p.bounceRate)}% of the ${num(p.visits)} visits that began on ${p.page} in ${range} left without interacting, against ${num(site.bounceRate)}% across the site's ${num(site.visits)} visits.`,
      metric_name: 'bounce_rate',
      metric_value: p.bounceRate,
      metric_change: pctChange(p.bounceRate, site.bounceRate),
      recommendation: `Review ${p.page}: check that it loads quickly, matches what the links and ads sending people there promise, and offers a clear next step. Bringing it to the site's ${num(site.bounceRate)}% would keep about ${num(Math.round((p.visits * (p.bounceRate - site.bounceRate)) / 100))} more visits a week.`,
      details: { visits: p.visits, site_bounce_rate: site.bounceRate },
    }));
}

export interface PageErrors {
  page: string;
  /** Distinct visitors who hit an error on the page, this week and the week before. */
  errorVisitors: number;
  errorVisitorsBefore: number;
  /** Error occurrences this week. */
  occurrences: number;
  /** Distinct visitors of the page this week. */
  pageVisitors: number;
  /** The error that reached most visitors there. */
  topMessage: string;
  topType: string;
}

/** Rule page_errors: ≥ 20 visitors hit an error on the page, ≥ 5 % of its visitors (critical from 25 %). */
export function pageErrors(pages: readonly PageErrors[], week: string, range: string): InsightDraft[] {
  const r = RULES.pageErrors;
  const share = (p: PageErrors) => (100 * p.errorVisitors) / Math.max(p.pageVisitors, p.errorVisitors);
  return pages
    .filter((p) => p.page !== '' && p.errorVisitors >= r.minVisitors && share(p) >= r.minShare)
    .sort((a, b) => b.errorVisitors - a.errorVisitors || byKey(a.page, b.page))
    .slice(0, r.max)
    .map((p) => {
      const s = Math.round(share(p) * 10) / 10;
      const change = pctChange(p.errorVisitors, p.errorVisitorsBefore);
      return {
        type: 'recommendation' as const,
        rule: r.name,
        subject: p.page,
        period: week,
        severity: s >= r.criticalShare ? ('critical' as const) : ('warning' as const),
        title: `${num(p.errorVisitors)} visitors hit errors on ${p.page}`,
        description: `${num(p.errorVisitors)} of the ${num(Math.max(p.pageVisitors, p.errorVisitors))} visitors of ${p.page} in ${range} (${num(s, 1)}%) saw a JavaScript error there, ${num(p.occurrences)} errors in all${change === null ? '' : ` (${signedPct(change)} visitors affected compared with the 7 days before)`}. The most widespread: ${p.topType ? `${p.topType}: ` : ''}${p.topMessage}`,
        metric_name: 'error_visitors',
        metric_value: p.errorVisitors,
        metric_change: change,
        recommendation: `Open Errors, fix the error "${truncate(p.topMessage, 120)}" on ${p.page} first (it reaches the most visitors), then mark its group resolved to see whether it comes back.`,
        details: { share: s, occurrences: p.occurrences, page_visitors: p.pageVisitors },
      };
    });
}

export interface SourceConversions {
  source: string;
  visitors: number;
  visitorsBefore: number;
  /** Visitors from the source who completed any active goal this week. */
  converted: number;
}

/**
 * Rule source_not_converting: the source's visitors grew (the trend test: ≥ 20 %, z ≥ 3, ≥ 50), the site
 * converts (a rate R > 0 over its active goals), the source would have brought at least 5 conversions at R,
 * and it brought at most half of that.
 */
export function sourceNotConverting(
  sources: readonly SourceConversions[],
  site: { visitors: number; converted: number; goals: readonly string[] },
  week: string,
  range: string,
): InsightDraft[] {
  const r = RULES.sourceNotConverting;
  if (site.goals.length === 0 || site.visitors <= 0 || site.converted <= 0) return [];
  const rate = site.converted / site.visitors;
  const sitePct = Math.round(rate * 10_000) / 100;
  const goals = site.goals.length === 1 ? `the goal ${site.goals[0]}` : `any of the ${site.goals.length} goals`;
  return sources
    .filter((s) => s.source !== '')
    .map((s) => ({ s, t: countTrend(s.visitors, s.visitorsBefore), expected: s.visitors * rate }))
    .filter(
      ({ s, t, expected }) =>
        t !== undefined &&
        t.now > t.before &&
        expected >= r.minExpected &&
        s.converted <= expected * r.maxShareOfExpected,
    )
    .sort((a, b) => b.expected - b.s.converted - (a.expected - a.s.converted) || byKey(a.s.source, b.s.source))
    .slice(0, r.max)
    .map(({ s, t, expected }) => {
      const pct = Math.round((s.converted / s.visitors) * 10_000) / 100;
      return {
        type: 'recommendation' as const,
        rule: r.name,
        subject: s.source,
        period: week,
        severity: s.converted === 0 ? ('warning' as const) : ('info' as const),
        title: `${s.source} brings more visitors but ${s.converted === 0 ? 'no' : 'few'} conversions`,
        description: `Visitors from ${s.source} grew to ${num(s.visitors)} in ${range} (${t?.change === null || t === undefined ? 'up from 0' : signedPct(t.change)} on the 7 days before), but ${s.converted === 0 ? 'none of them' : `only ${num(s.converted)} of them (${num(pct, 2)}%)`} completed ${goals}, against ${num(sitePct, 2)}% across the site: about ${num(Math.round(expected))} were to be expected.`,
        metric_name: 'visitors',
        metric_value: s.visitors,
        metric_change: t?.change ?? null,
        recommendation: `Check what visitors from ${s.source} land on and whether it leads to ${goals}: a landing page made for that audience, or a campaign aimed at people ready to act, turns the extra traffic into results.`,
        details: { converted: s.converted, conversion_rate: pct, site_conversion_rate: sitePct },
      };
    });
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
