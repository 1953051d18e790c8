// One website's insights for one local day: the figures each rule needs, read through the stats query model
// (so they are the Stats API's numbers), then the trend, recommendation and prediction rules over them.
import type { Pool } from 'pg';
import type { GoalRow } from '../accounts/goals';
import type { ClickHouseClient } from '../clickhouse/client';
import { countryName } from '../external/analytics';
import { runConversions } from '../stats/conversions';
import type { RangeQuery, StatsRow } from '../stats/model';
import { monday } from '../stats/period';
import { pageErrors } from '../stats/reads/pageErrors';
import { runEventBreakdowns, runStats } from '../stats/run';
import { addDays, addMonths, daysBetween, formatDate, type LocalDate, startOfDay } from '../stats/time';
import { FORECAST, type MonthFigures, predictionInsights } from './prediction';
import { landingPageBounce, pageErrors as pageErrorRule, sourceNotConverting } from './recommendations';
import type { InsightDraft } from './store';
import { trendInsights, type WeekFigures } from './trends';

export interface InsightSite {
  id: string;
  timezone: string;
  currency: string;
  goals: readonly GoalRow[];
}

const keyed = (rows: readonly StatsRow[], metric: 'visitors' | 'pageviews') =>
  new Map(rows.filter((r) => r.key !== '').map((r) => [r.key, r.values[metric] ?? 0]));

async function weekFigures(clickhouse: ClickHouseClient, q: RangeQuery): Promise<WeekFigures> {
  const [by, sessions, pages] = await Promise.all([
    runEventBreakdowns(clickhouse, q, ['source', 'country']),
    runStats(clickhouse, { ...q, metrics: ['visits', 'bounce_rate'] }),
    runStats(clickhouse, { ...q, metrics: ['visitors'], dimension: 'page' }),
  ]);
  const total = by.total[0]?.values ?? {};
  const s = sessions[0]?.values ?? {};
  return {
    visitors: total.visitors ?? 0,
    pageviews: total.pageviews ?? 0,
    visits: s.visits ?? 0,
    bounce_rate: s.bounce_rate ?? 0,
    sources: keyed(by.source, 'visitors'),
    pages: keyed(pages, 'visitors'),
    countries: keyed(by.country, 'visitors'),
  };
}

/** Daily values of a time:day answer over [first, last], zeros for days without a row. */
function dailySeries(
  rows: readonly StatsRow[],
  metric: 'visitors' | 'total_revenue',
  first: LocalDate,
  last: LocalDate,
) {
  const by = new Map(rows.map((r) => [r.key, r.values[metric] ?? 0]));
  const out: number[] = [];
  for (let d = first; daysBetween(d, last) >= 0; d = addDays(d, 1)) out.push(by.get(formatDate(d)) ?? 0);
  return out;
}

/** The trend, recommendation and prediction insights of `day` (a complete local day) for one website. */
export async function computeInsights(
  pool: Pool,
  clickhouse: ClickHouseClient,
  site: InsightSite,
  day: LocalDate,
): Promise<InsightDraft[]> {
  const tz = site.timezone;
  const at = (d: LocalDate) => startOfDay(d, tz);
  const query = (first: LocalDate, afterLast: LocalDate): RangeQuery => ({
    websiteId: site.id,
    timeZone: tz,
    start: at(first),
    end: at(afterLast),
    filters: [],
  });
  const next = addDays(day, 1);
  const now = query(addDays(day, -6), next);
  const before = query(addDays(day, -13), addDays(day, -6));
  const week = formatDate(monday(day));
  const range = `the 7 days to ${formatDate(day)}`;

  const monthStart = { ...day, day: 1 };
  const monthEnd = addDays(addMonths(day, 1), -1);
  const lastMonthStart = addMonths(day, -1);
  const historyStart = addDays(day, 1 - FORECAST.patternWeeks * 7);
  const history = query(historyStart, next);
  const conversionBase = { conversionFilters: [], goals: site.goals, currency: site.currency };
  const activeGoals = site.goals.filter((g) => g.is_active).map((g) => g.name);
  const goalFilter = { key: 'goal' as const, operator: 'is' as const, values: activeGoals };

  const ignored = await pool.query<{ fingerprint: string }>(
    "SELECT fingerprint FROM error_groups WHERE website_id = $1 AND status = 'ignored'",
    [site.id],
  );
  const [
    thisWeek,
    lastWeek,
    landing,
    errors,
    converted,
    dailyVisitors,
    dailyRevenue,
    monthVisitors,
    lastMonthVisitors,
    lastMonthRevenue,
  ] = await Promise.all([
    weekFigures(clickhouse, now),
    weekFigures(clickhouse, before),
    runStats(clickhouse, { ...now, metrics: ['visits', 'bounce_rate'], dimension: 'entry_page' }),
    pageErrors(
      clickhouse,
      site.id,
      now,
      before,
      ignored.rows.map((r) => r.fingerprint),
    ),
    activeGoals.length
      ? Promise.all([
          runConversions(clickhouse, {
            ...now,
            ...conversionBase,
            conversionFilters: [goalFilter],
            metrics: ['visitors'],
            dimension: 'source',
          }),
          runConversions(clickhouse, {
            ...now,
            ...conversionBase,
            conversionFilters: [goalFilter],
            metrics: ['visitors'],
          }),
        ])
      : undefined,
    runStats(clickhouse, { ...history, metrics: ['visitors'], dimension: 'time:day' }),
    runConversions(clickhouse, { ...history, ...conversionBase, metrics: ['total_revenue'], dimension: 'time:day' }),
    runStats(clickhouse, { ...query(monthStart, next), metrics: ['visitors'] }),
    runStats(clickhouse, { ...query(lastMonthStart, monthStart), metrics: ['visitors'] }),
    runConversions(clickhouse, { ...query(lastMonthStart, monthStart), ...conversionBase, metrics: ['total_revenue'] }),
  ]);

  const name = (d: 'source' | 'page' | 'country', key: string) => (d === 'country' ? countryName(key) : key);
  const drafts = trendInsights(thisWeek, lastWeek, week, range, name);

  drafts.push(
    ...landingPageBounce(
      landing.map((r) => ({ page: r.key, visits: r.values.visits ?? 0, bounceRate: r.values.bounce_rate ?? 0 })),
      { visits: thisWeek.visits, bounceRate: thisWeek.bounce_rate },
      week,
      range,
    ),
    ...pageErrorRule(
      errors.map((e) => ({
        page: e.page,
        errorVisitors: e.visitors,
        errorVisitorsBefore: e.visitorsBefore,
        occurrences: e.occurrences,
        pageVisitors: thisWeek.pages.get(e.page) ?? 0,
        topMessage: e.topMessage,
        topType: e.topType,
      })),
      week,
      range,
    ),
  );
  if (converted) {
    const [bySource, [all]] = converted;
    const convertedBy = keyed(bySource, 'visitors');
    drafts.push(
      ...sourceNotConverting(
        [...thisWeek.sources.entries()].map(([source, visitors]) => ({
          source,
          visitors,
          visitorsBefore: lastWeek.sources.get(source) ?? 0,
          converted: convertedBy.get(source) ?? 0,
        })),
        { visitors: thisWeek.visitors, converted: all?.values.visitors ?? 0, goals: activeGoals },
        week,
        range,
      ),
    );
  }

  const visitorsDaily = dailySeries(dailyVisitors, 'visitors', historyStart, day);
  const revenueDaily = dailySeries(dailyRevenue, 'total_revenue', historyStart, day);
  const inMonth = day.day; // the history's last `day.day` values are this month's
  const sumLast = (xs: number[], n: number) => xs.slice(xs.length - n).reduce((s, x) => s + x, 0);
  const visitors: MonthFigures = {
    daily: visitorsDaily,
    soFar: monthVisitors[0]?.values.visitors ?? 0,
    dailySoFar: sumLast(visitorsDaily, inMonth),
    lastMonth: lastMonthVisitors[0]?.values.visitors ?? 0,
  };
  const revenueLastMonth = lastMonthRevenue[0]?.values.total_revenue ?? 0;
  const revenueSoFar = Math.round(sumLast(revenueDaily, inMonth) * 100) / 100;
  const revenue: MonthFigures | undefined =
    revenueDaily.some((x) => x !== 0) || revenueLastMonth !== 0
      ? { daily: revenueDaily, soFar: revenueSoFar, dailySoFar: revenueSoFar, lastMonth: revenueLastMonth }
      : undefined;
  drafts.push(...predictionInsights(visitors, revenue, day, monthEnd, site.currency));
  return drafts;
}
