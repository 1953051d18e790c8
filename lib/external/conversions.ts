// The External API's conversion reads (issue 22): goals, custom events with their properties, and revenue,
// over the conversion questions of the stats model (lib/stats/conversions.ts) for a range.
import type { GoalRow } from '../accounts/goals';
import type { ClickHouseClient } from '../clickhouse/client';
import { conversionRate, runConversions } from '../stats/conversions';
import type { ConversionQuery, RangeQuery } from '../stats/model';
import { bucketLabels, resolveRange } from '../stats/period';
import { topPropertyValues } from '../stats/reads/eventProperties';
import { otherCurrencyRevenue } from '../stats/reads/otherCurrencies';
import { byMetricDesc, runStats } from '../stats/run';
import type { SiteRef } from './analytics';
import type { CustomEventsData, GoalsData, RangeName, RevenueData } from './schemas';

export interface ConversionSite extends SiteRef {
  goals: GoalRow[];
  currency: string;
}

function question(site: ConversionSite, range: RangeName, now: number) {
  const p = resolveRange(range, site.timezone, now);
  const base: RangeQuery & Pick<ConversionQuery, 'conversionFilters' | 'goals' | 'currency'> = {
    websiteId: site.id,
    timeZone: site.timezone,
    start: p.start,
    end: p.end,
    filters: [],
    conversionFilters: [],
    goals: site.goals,
    currency: site.currency,
  };
  return { p, base };
}

const money = (value: number, currency: string) => ({ value, currency });

/** Every goal of the website, in their order, with its completions in the range (zeros when none). */
export async function goalReport(
  clickhouse: ClickHouseClient,
  site: ConversionSite,
  range: RangeName,
  now = Date.now(),
): Promise<GoalsData> {
  const { base } = question(site, range, now);
  const [rows, [total]] = await Promise.all([
    runConversions(clickhouse, { ...base, metrics: ['visitors', 'events', 'total_revenue'], dimension: 'goal' }),
    runStats(clickhouse, { ...base, metrics: ['visitors'] }),
  ]);
  const all = total?.values.visitors ?? 0;
  const byName = new Map(rows.map((r) => [r.key, r.values]));
  return {
    goals: site.goals.map((g) => {
      const v = byName.get(g.name) ?? {};
      return {
        id: g.id,
        name: g.name,
        kind: g.kind,
        visitors: v.visitors ?? 0,
        events: v.events ?? 0,
        conversion_rate: conversionRate(v.visitors ?? 0, all),
        revenue: g.kind === 'purchase' ? money(v.total_revenue ?? 0, site.currency) : null,
      };
    }),
    total_visitors: all,
  };
}

/** Custom events by completions (at most `limit`), each with its properties' most frequent values. */
export async function customEventReport(
  clickhouse: ClickHouseClient,
  site: ConversionSite,
  range: RangeName,
  limit: number,
  now = Date.now(),
): Promise<CustomEventsData> {
  const { base } = question(site, range, now);
  // Both reads at once (the properties of every name, kept for the listed ones): the answer waits for one
  // scan of the custom events instead of two in a row.
  const [names, properties] = await Promise.all([
    runConversions(clickhouse, { ...base, metrics: ['visitors', 'events'], dimension: 'name' }),
    topPropertyValues(clickhouse, base),
  ]);
  const rows = names
    .filter((r) => r.key !== '')
    .sort(byMetricDesc('events'))
    .slice(0, limit);
  return {
    events: rows.map((r) => ({
      name: r.key,
      visitors: r.values.visitors ?? 0,
      events: r.values.events ?? 0,
      properties: properties.filter((p) => p.name === r.key).map((p) => ({ key: p.key, values: p.values })),
    })),
  };
}

/**
 * Revenue of the range in the website currency: total and per purchase, by day and by the visit's source
 * (a server-side purchase in a visit counts under the source the visit came from), and what other
 * currencies brought, unconverted.
 */
export async function revenueReport(
  clickhouse: ClickHouseClient,
  site: ConversionSite,
  range: RangeName,
  now = Date.now(),
): Promise<RevenueData> {
  const { p, base } = question(site, range, now);
  const metrics = ['visitors', 'events', 'total_revenue', 'average_revenue'] as const;
  const [[total], days, sources, other] = await Promise.all([
    runConversions(clickhouse, { ...base, metrics }),
    runConversions(clickhouse, { ...base, metrics, dimension: 'time:day' }),
    runConversions(clickhouse, { ...base, metrics, dimension: 'source' }),
    otherCurrencyRevenue(clickhouse, { ...base, currency: site.currency }),
  ]);
  const byDay = new Map(days.map((r) => [r.key, r.values.total_revenue ?? 0]));
  return {
    currency: site.currency,
    total: money(total?.values.total_revenue ?? 0, site.currency),
    average: money(total?.values.average_revenue ?? 0, site.currency),
    purchases: total?.values.events ?? 0,
    by_day: bucketLabels(p, 'day', site.timezone).map((date) => ({
      date,
      revenue: money(byDay.get(date) ?? 0, site.currency),
    })),
    by_source: sources
      .filter((r) => (r.values.total_revenue ?? 0) !== 0)
      .sort(byMetricDesc('total_revenue'))
      .map((r) => ({
        source: r.key === '' ? 'Direct / None' : r.key,
        revenue: money(r.values.total_revenue ?? 0, site.currency),
        visitors: r.values.visitors ?? 0,
      })),
    other_currencies: other,
  };
}
