// Answers a query plan from lib/stats (issue 27 point 2): the numbers always come from the query, the summary
// is a template that states them, and the suggestions are questions the interpreter answers.
import type { GoalRow } from '../accounts/goals';
import type { ClickHouseClient } from '../clickhouse/client';
import { countryName } from '../external/analytics';
import { realtimeSnapshot } from '../realtime/presence';
import type { Redis } from '../redis';
import { runConversions } from '../stats/conversions';
import type { ConversionQuery, Dimension, ModelMetric, StatsRow } from '../stats/model';
import type { ConversionFilter, ConversionMetric, Filter } from '../stats/params';
import { bucketLabels, monday, type ResolvedPeriod, resolveRange } from '../stats/period';
import { byMetricDesc, runStats } from '../stats/run';
import { addDays, addMonths, daysBetween, startOfDay, today } from '../stats/time';
import type { PlanDimension, PlanMetric, PlanRange, QueryPlan } from './plan';

export interface QuerySite {
  id: string;
  timezone: string;
  goals: GoalRow[];
  currency: string;
}

export type QueryResults =
  | { type: 'number'; value: number; label: string; change: number }
  | { type: 'table'; columns: string[]; rows: (string | number)[][] }
  | { type: 'timeseries'; points: { date: string; value: number }[] }
  | { type: 'list'; items: string[] };

export interface QueryAnswer {
  results: QueryResults;
  summary: string;
}

export interface AnswerDeps {
  clickhouse: ClickHouseClient;
  redis: Redis;
  redisPrefix: string;
}

export const RANGE_TEXT: Record<PlanRange, string> = {
  '24h': 'the last 24 hours',
  today: 'today',
  yesterday: 'yesterday',
  '7d': 'the last 7 days',
  '30d': 'the last 30 days',
  '90d': 'the last 90 days',
  '1y': 'the last 12 months',
  this_week: 'this week',
  last_week: 'last week',
  this_month: 'this month',
  last_month: 'last month',
};

const METRIC_TEXT: Record<PlanMetric, string> = {
  visitors: 'visitors',
  visits: 'visits',
  pageviews: 'pageviews',
  bounce_rate: 'bounce rate (%)',
  visit_duration: 'visit duration (s)',
  events: 'events',
  conversions: 'conversions',
  conversion_rate: 'conversion rate (%)',
  revenue: 'revenue',
};

const DIMENSION_TEXT: Record<PlanDimension, string> = {
  page: 'pages',
  entry_page: 'entry pages',
  exit_page: 'exit pages',
  country: 'countries',
  browser: 'browsers',
  device: 'devices',
  os: 'operating systems',
  source: 'sources',
  channel: 'channels',
  utm_source: 'UTM sources',
  utm_medium: 'UTM mediums',
  utm_campaign: 'campaigns',
  goal: 'goals',
  event: 'custom events',
};

/** The local days a plan's range covers, as of `now`. */
export function planPeriod(range: PlanRange, timeZone: string, now: number): ResolvedPeriod {
  if (range === '24h' || range === 'today' || range === '7d' || range === '30d' || range === '90d' || range === '1y')
    return resolveRange(range, timeZone, now);
  const day = today(timeZone, now);
  const span = (first: typeof day, last: typeof day): ResolvedPeriod => ({
    period: range,
    first,
    last,
    start: startOfDay(first, timeZone),
    end: startOfDay(addDays(last, 1), timeZone),
  });
  switch (range) {
    case 'yesterday':
      return span(addDays(day, -1), addDays(day, -1));
    case 'this_week':
      return span(monday(day), day);
    case 'last_week':
      return span(addDays(monday(day), -7), addDays(monday(day), -1));
    case 'this_month':
      return span({ ...day, day: 1 }, day);
    case 'last_month': {
      const first = addMonths({ ...day, day: 1 }, -1);
      return span(first, addDays({ ...day, day: 1 }, -1));
    }
  }
}

/** The period a comparison reads: the same span just before, or the same dates a year earlier. */
export function comparedPeriod(p: ResolvedPeriod, compare: 'previous_period' | 'previous_year', timeZone: string) {
  if (p.period === '24h') {
    const back = compare === 'previous_year' ? 365 * 86_400_000 : p.end - p.start;
    return { ...p, start: p.start - back, end: p.end - back };
  }
  const calendarMonth = p.period === 'last_month' || p.period === 'this_month';
  const shift = (d: typeof p.first, n: number) => (compare === 'previous_year' ? addMonths(d, -12) : addDays(d, n));
  const days = daysBetween(p.first, p.last) + 1;
  const first = calendarMonth && compare === 'previous_period' ? addMonths(p.first, -1) : shift(p.first, -days);
  const last =
    calendarMonth && compare === 'previous_period'
      ? p.period === 'last_month'
        ? addDays(p.first, -1)
        : addDays(addMonths(p.first, -1), days - 1)
      : shift(p.last, -days);
  return { ...p, first, last, start: startOfDay(first, timeZone), end: startOfDay(addDays(last, 1), timeZone) };
}

const isConversion = (plan: QueryPlan) =>
  plan.metrics.some((m) => m === 'conversions' || m === 'conversion_rate' || m === 'revenue') ||
  plan.dimension === 'goal' ||
  plan.dimension === 'event' ||
  plan.filters.some((f) => f.key === 'goal' || f.key === 'event');

const CONVERSION_METRIC: Partial<Record<PlanMetric, ConversionMetric>> = {
  conversions: 'events',
  events: 'events',
  visitors: 'visitors',
  conversion_rate: 'conversion_rate',
  revenue: 'total_revenue',
};

/** The plan's one metric as the model names it (conversion questions use their own names). */
function modelMetric(plan: QueryPlan): ModelMetric {
  const m = plan.metrics[0];
  if (isConversion(plan)) return CONVERSION_METRIC[m] ?? 'events';
  return m as ModelMetric;
}

function dimensionOf(plan: QueryPlan): ConversionQuery['dimension'] | undefined {
  if (plan.interval) return `time:${plan.interval}` as Dimension;
  if (plan.dimension === 'goal') return 'goal';
  if (plan.dimension === 'event') return 'name';
  return plan.dimension ?? undefined;
}

/** Runs the plan's question over [start, end): one row per key ('' without a dimension). */
async function read(deps: AnswerDeps, site: QuerySite, plan: QueryPlan, start: number, end: number) {
  const filters: Filter[] = [];
  const conversionFilters: ConversionFilter[] = [];
  for (const f of plan.filters) {
    if (f.key === 'goal') conversionFilters.push({ key: 'goal', operator: 'is', values: [f.value] });
    else if (f.key === 'event') conversionFilters.push({ key: 'name', operator: 'is', values: [f.value] });
    else filters.push({ key: f.key, operator: f.operator, values: [f.value] });
  }
  const base = { websiteId: site.id, timeZone: site.timezone, start, end, filters };
  const metric = modelMetric(plan);
  const dimension = dimensionOf(plan);
  if (isConversion(plan)) {
    const rows = await runConversions(deps.clickhouse, {
      ...base,
      metrics: [metric as ConversionMetric],
      conversionFilters,
      dimension,
      goals: site.goals,
      currency: site.currency,
    });
    return { rows, metric };
  }
  const rows = await runStats(deps.clickhouse, { ...base, metrics: [metric], dimension: dimension as Dimension });
  return { rows, metric };
}

const metricValue = (rows: StatsRow[], metric: ModelMetric, key = '') =>
  rows.find((r) => r.key === key)?.values[metric] ?? 0;
const round = (x: number) => Math.round(x * 100) / 100;
const percentChange = (now: number, before: number) =>
  before === 0 ? (now === 0 ? 0 : 100) : round(((now - before) / before) * 100);

function keyText(plan: QueryPlan, key: string): string {
  if (key === '') return plan.dimension === 'source' ? 'Direct / None' : '(none)';
  return plan.dimension === 'country' ? countryName(key) : key;
}

function label(plan: QueryPlan, site: QuerySite): string {
  const metric = plan.metrics[0] === 'revenue' ? `revenue (${site.currency})` : METRIC_TEXT[plan.metrics[0]];
  const where = plan.filters.map((f) => `${f.key} ${f.operator === 'is_not' ? 'is not' : f.operator} ${f.value}`);
  return `${metric}${where.length ? ` where ${where.join(' and ')}` : ''}`;
}

/** The answer of a plan: its results from lib/stats (or realtime presence) and a summary stating them. */
export async function answerPlan(
  deps: AnswerDeps,
  site: QuerySite,
  plan: QueryPlan,
  now = Date.now(),
): Promise<QueryAnswer> {
  if (plan.intent === 'realtime') return answerRealtime(deps, site, plan, now);
  const p = planPeriod(plan.range, site.timezone, now);
  const when = RANGE_TEXT[plan.range];
  const what = label(plan, site);
  if (plan.interval) {
    const { rows, metric } = await read(deps, site, plan, p.start, p.end);
    const byKey = new Map(rows.map((r) => [r.key, r.values[metric] ?? 0]));
    const interval = plan.interval === 'hour' && daysBetween(p.first, p.last) > 6 ? 'day' : plan.interval;
    const points = bucketLabels(p, interval, site.timezone).map((date) => ({ date, value: byKey.get(date) ?? 0 }));
    const peak = points.reduce((a, b) => (b.value > a.value ? b : a), points[0] ?? { date: '', value: 0 });
    return {
      results: { type: 'timeseries', points },
      summary: `${capital(what)} by ${interval} over ${when}: ${points.length} points, the highest ${peak.value} on ${peak.date}.`,
    };
  }
  if (plan.dimension) {
    const { rows, metric } = await read(deps, site, plan, p.start, p.end);
    const ranked = rows
      .filter(
        (r) =>
          (r.values[metric] ?? 0) !== 0 && !(r.key === '' && (plan.dimension === 'goal' || plan.dimension === 'event')),
      )
      .sort(byMetricDesc(metric))
      .slice(0, plan.limit);
    const top = ranked.map((r) => [keyText(plan, r.key), r.values[metric] ?? 0] as [string, number]);
    const head = `Top ${DIMENSION_TEXT[plan.dimension]} by ${what} over ${when}`;
    const summary = top.length
      ? `${head}: ${top
          .slice(0, 5)
          .map(([k, v]) => `${k} (${v})`)
          .join(', ')}.`
      : `${head}: none.`;
    if (plan.result === 'list') return { results: { type: 'list', items: top.map(([k]) => k) }, summary };
    return {
      results: { type: 'table', columns: [plan.dimension, plan.metrics[0]], rows: top },
      summary,
    };
  }
  const compare = plan.compare_to ?? 'previous_period';
  const before = comparedPeriod(p, compare, site.timezone);
  const [current, previous] = await Promise.all([
    read(deps, site, plan, p.start, p.end),
    read(deps, site, plan, before.start, before.end),
  ]);
  const value = round(metricValue(current.rows, current.metric));
  const old = round(metricValue(previous.rows, previous.metric));
  const change = percentChange(value, old);
  const versus = compare === 'previous_year' ? 'the same period a year earlier' : 'the previous period';
  const summary = plan.compare_to
    ? `${capital(what)} over ${when}: ${value}, against ${old} in ${versus} (${change >= 0 ? '+' : ''}${change}%).`
    : `${capital(what)} over ${when}: ${value}.`;
  return { results: { type: 'number', value, label: `${what} over ${when}`, change }, summary };
}

async function answerRealtime(deps: AnswerDeps, site: QuerySite, plan: QueryPlan, now: number): Promise<QueryAnswer> {
  const live = await realtimeSnapshot(deps.redis, deps.redisPrefix, site.id, now);
  if (plan.dimension === 'page' || plan.dimension === 'country') {
    const rows: [string, number][] =
      plan.dimension === 'page'
        ? live.top_pages.slice(0, plan.limit).map((x) => [x.url, x.visitors])
        : live.countries.slice(0, plan.limit).map((x) => [countryName(x.country_code), x.visitors]);
    return {
      results: { type: 'table', columns: [plan.dimension, 'visitors'], rows },
      summary: rows.length
        ? `Right now, by ${plan.dimension}: ${rows.map(([k, v]) => `${k} (${v})`).join(', ')}.`
        : `Nobody is on the site right now.`,
    };
  }
  if (plan.metrics[0] === 'pageviews')
    return {
      results: { type: 'number', value: live.pageviews_last_30m, label: 'pageviews in the last 30 minutes', change: 0 },
      summary: `${live.pageviews_last_30m} pageviews in the last 30 minutes.`,
    };
  return {
    results: { type: 'number', value: live.live_visitors, label: 'visitors on the site right now', change: 0 },
    summary: `${live.live_visitors} visitors on the site right now.`,
  };
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Follow-up questions the interpreter answers, shaped by the plan just answered. */
export function suggestionsFor(plan: QueryPlan | undefined): string[] {
  const range = plan && plan.intent !== 'realtime' ? RANGE_TEXT[plan.range] : 'the last 7 days';
  const out = [
    plan?.compare_to
      ? `Visitors over ${range} compared to last year`
      : `Visitors over ${range} compared to the previous period`,
    `Top pages over ${range}`,
    `Visitors by day over ${range === 'the last 24 hours' ? 'the last 7 days' : range}`,
    `Top countries over ${range}`,
    'How many visitors are on the site right now?',
  ];
  return out.slice(0, 4);
}
