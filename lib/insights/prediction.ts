// Prediction insights: this month's visitors and revenue, forecast from the days so far and the weekly
// pattern (docs/intelligence.md "Insights").
//
// Model: each day's value is level × factor(weekday). The factors are each weekday's mean over the mean of all
// days, from the last (up to 8) whole weeks of history; the level is the mean of the last 14 days' values
// divided by their factors. The rest of the month is expected at level × factor per day. Its error: the daily
// residuals of those 14 days give σ; the sum of r remaining days has variance r·σ² plus (Σ factors)²·σ²/m for
// the level's own uncertainty (m days estimated it), and the interval is ±1.96 standard deviations (95 %),
// never below what the month already has.
import { addDays, daysBetween, formatDate, type LocalDate, monthName } from '../stats/time';
import type { InsightDraft } from './store';
import { money, num, pctChange } from './text';

export const FORECAST = { minDays: 7, levelDays: 14, patternWeeks: 8, z: 1.96 } as const;

const weekday = (d: LocalDate) => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();

export interface Forecast {
  /** Expected sum of the remaining days, and its standard deviation. */
  rest: number;
  sd: number;
  /** Days of history used (from the first day with data). */
  days: number;
}

/**
 * The expected sum of the days after `last` up to and including `monthEnd`, from daily values ending on `last`
 * (oldest first). Undefined with fewer than 7 days since the first non-zero one, or nothing but zeros.
 */
export function forecastRest(values: readonly number[], last: LocalDate, monthEnd: LocalDate): Forecast | undefined {
  const first = values.findIndex((v) => v !== 0);
  if (first < 0) return undefined;
  const series = values.slice(first);
  const n = series.length;
  if (n < FORECAST.minDays) return undefined;
  const dateOf = (i: number) => addDays(last, i - (n - 1));

  // Weekday factors from whole weeks (every weekday counted as often); flat before two weeks of data.
  const factor = new Array<number>(7).fill(1);
  const weeks = Math.min(FORECAST.patternWeeks, Math.floor(n / 7));
  if (weeks >= 2) {
    const sums = new Array<number>(7).fill(0);
    let total = 0;
    for (let i = n - weeks * 7; i < n; i++) {
      sums[weekday(dateOf(i))] += series[i];
      total += series[i];
    }
    const mean = total / (weeks * 7);
    if (mean > 0) for (let w = 0; w < 7; w++) factor[w] = sums[w] / weeks / mean;
  }

  // Level: the recent days' values, each divided by its weekday's factor (weekdays with no traffic skipped).
  const recent: { v: number; f: number }[] = [];
  for (let i = Math.max(0, n - FORECAST.levelDays); i < n; i++)
    recent.push({ v: series[i], f: factor[weekday(dateOf(i))] });
  const usable = recent.filter((r) => r.f > 0);
  if (usable.length === 0) return undefined;
  const level = usable.reduce((s, r) => s + r.v / r.f, 0) / usable.length;
  const m = recent.length;
  const sq = recent.reduce((s, r) => s + (r.v - level * r.f) ** 2, 0);
  const sigma2 = m > 1 ? sq / (m - 1) : 0;

  let rest = 0;
  let factors = 0;
  const remaining = daysBetween(last, monthEnd);
  for (let k = 1; k <= remaining; k++) {
    const f = factor[weekday(addDays(last, k))];
    rest += level * f;
    factors += f;
  }
  const sd = Math.sqrt(remaining * sigma2 + (factors * factors * sigma2) / m);
  return { rest, sd, days: n };
}

export interface MonthFigures {
  /** Daily values up to and including the as-of day, oldest first (visitors or revenue). */
  daily: readonly number[];
  /** The month's figure so far, as the Stats API reports it for the month (visitors: unique in the month). */
  soFar: number;
  /** Sum of the daily values of this month so far (the days the figure so far covers). */
  dailySoFar: number;
  /** Last month's whole figure. */
  lastMonth: number;
}

export interface MonthForecast {
  value: number;
  lower: number;
  upper: number;
  change: number | null;
  days: number;
}

/**
 * The month's forecast: what it has plus the rest. Visitors are unique in the month, not a sum of days, so
 * the expected rest is added in proportion: the month's figure grows by the share the rest adds to the days'
 * sum (exact for visitors who come on one day only, a little high for returning ones).
 */
export function monthForecast(
  f: MonthFigures,
  asOf: LocalDate,
  monthEnd: LocalDate,
  opts: { decimals: number; unique: boolean },
): MonthForecast | undefined {
  const rest = forecastRest(f.daily, asOf, monthEnd);
  if (!rest || daysBetween(asOf, monthEnd) <= 0) return undefined;
  const scale = opts.unique && f.dailySoFar > 0 ? f.soFar / f.dailySoFar : 1;
  const round = (x: number) => Math.round(x * 10 ** opts.decimals) / 10 ** opts.decimals;
  const value = round(f.soFar + scale * rest.rest);
  const lower = round(Math.max(f.soFar, f.soFar + scale * (rest.rest - FORECAST.z * rest.sd)));
  const upper = round(f.soFar + scale * (rest.rest + FORECAST.z * rest.sd));
  return { value, lower, upper, change: pctChange(value, f.lastMonth), days: rest.days };
}

/** The prediction insights for the month of `asOf`: visitors, and revenue when the site has any. */
export function predictionInsights(
  visitors: MonthFigures,
  revenue: MonthFigures | undefined,
  asOf: LocalDate,
  monthEnd: LocalDate,
  currency: string,
): InsightDraft[] {
  const out: InsightDraft[] = [];
  const month = monthName(asOf.month);
  const lastMonth = monthName(asOf.month === 1 ? 12 : asOf.month - 1);
  const period = formatDate(asOf).slice(0, 7);
  const daysIn = asOf.day;
  const left = daysBetween(asOf, monthEnd);
  const kinds = [
    { metric: 'visitors', f: visitors, decimals: 0, unique: true, fmt: (x: number) => `${num(x)} visitors` },
    ...(revenue
      ? [{ metric: 'revenue', f: revenue, decimals: 2, unique: false, fmt: (x: number) => money(x, currency) }]
      : []),
  ];
  for (const k of kinds) {
    const p = monthForecast(k.f, asOf, monthEnd, { decimals: k.decimals, unique: k.unique });
    if (!p) continue;
    const below = k.f.lastMonth > 0 && p.upper < k.f.lastMonth;
    const versus =
      p.change === null
        ? `${lastMonth} had none to compare with.`
        : `That is ${num(Math.abs(p.change), 1)}% ${p.change < 0 ? 'less' : 'more'} than ${lastMonth}'s ${k.fmt(k.f.lastMonth)}.`;
    out.push({
      type: 'prediction',
      rule: `month_${k.metric}`,
      subject: k.metric,
      period,
      severity: below ? 'warning' : 'info',
      title: `${month} should end with about ${k.fmt(p.value)}`,
      description: `From ${k.fmt(k.f.soFar)} in the first ${num(daysIn)} ${daysIn === 1 ? 'day' : 'days'} and the weekly pattern of the last ${num(Math.min(p.days, FORECAST.patternWeeks * 7))} days, ${month} is forecast at ${k.fmt(p.value)} (95% interval ${k.fmt(p.lower)} to ${k.fmt(p.upper)}) with ${num(left)} ${left === 1 ? 'day' : 'days'} to go. ${versus}`,
      metric_name: k.metric,
      metric_value: p.value,
      metric_change: p.change,
      recommendation: below
        ? `Even the forecast's upper bound is below ${lastMonth}'s ${k.metric}: look at the trends and sources that fell and act in the ${num(left)} days left.`
        : `No action needed; the forecast updates every night, and its interval narrows as the month fills in.`,
      details: { lower: p.lower, upper: p.upper, so_far: k.f.soFar, last_month: k.f.lastMonth, days_left: left },
    });
  }
  return out;
}
