// The External API's analytics reads (spec "External API": analytics overview, visitors, pages, countries,
// technology), assembled from the stats query model with DESIGN §3's definitions: total_visitors = visits,
// unique_visitors = visitors, total_page_views = pageviews; technology count = visitors, percentage of the
// range's visitors to one decimal; visitor records one per visit, newest first.
import type { ClickHouseClient } from '../clickhouse/client';
import type { StatsRow } from '../stats/model';
import { bucketLabels, resolveRange } from '../stats/period';
import { listVisits } from '../stats/reads/visitList';
import { byMetricDesc, runEventBreakdowns, runStats } from '../stats/run';
import { parseDate, startOfDay } from '../stats/time';
import type { AnalyticsData, CountriesData, PagesData, RangeName, TechnologyData, VisitorsData } from './schemas';

export interface SiteRef {
  id: string;
  domain: string;
  name: string;
  timezone: string;
}

/** `range` wins over the legacy `timeRange`; 7d when neither is given. */
export function chooseRange(q: { range?: RangeName; timeRange?: RangeName }): RangeName {
  return q.range ?? q.timeRange ?? '7d';
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** The English name of an ISO 3166 alpha-2 code; the code itself when it names no region. */
export function countryName(code: string): string {
  try {
    return regionNames.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

function window(site: SiteRef, range: RangeName, now: number) {
  const p = resolveRange(range, site.timezone, now);
  return { p, base: { websiteId: site.id, timeZone: site.timezone, start: p.start, end: p.end, filters: [] } };
}

/** The rows that name a value and have some of `metric`, largest first (ties by value), at most `limit`. */
function ranked(rows: StatsRow[], metric: 'pageviews' | 'visitors', limit = Infinity): StatsRow[] {
  return rows
    .filter((r) => r.key !== '' && (r.values[metric] ?? 0) > 0)
    .sort(byMetricDesc(metric))
    .slice(0, limit);
}

export async function analyticsOverview(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  range: RangeName,
  now = Date.now(),
): Promise<AnalyticsData> {
  const { p, base } = window(site, range, now);
  const days = await runStats(clickhouse, {
    ...base,
    metrics: ['visits', 'visitors', 'pageviews'],
    dimension: 'time:day',
    total: true,
  });
  const byDay = new Map(days.map((r) => [r.key, r.values]));
  const t = byDay.get('') ?? {};
  const dates = bucketLabels(p, 'day', site.timezone);
  return {
    website: { id: site.id, domain: site.domain, name: site.name },
    time_range: range,
    date_range: {
      start: dates[0],
      end: dates[dates.length - 1],
      startDateTime: new Date(p.start).toISOString(),
      endDateTime: new Date(p.end).toISOString(),
    },
    summary: { total_visitors: t.visits ?? 0, total_page_views: t.pageviews ?? 0, unique_visitors: t.visitors ?? 0 },
    daily_stats: dates.map((date) => {
      const v = byDay.get(date) ?? {};
      return {
        date,
        website_id: site.id,
        total_visitors: v.visits ?? 0,
        unique_visitors: v.visitors ?? 0,
        page_views: v.pageviews ?? 0,
      };
    }),
  };
}

export async function visitorList(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  range: RangeName,
  page: { limit: number; offset: number },
  now = Date.now(),
): Promise<VisitorsData> {
  const { p, base } = window(site, range, now);
  const pageOf = (from: number) =>
    listVisits(
      clickhouse,
      { ...base, start: Math.max(base.start, from) },
      { limit: page.limit + 1, offset: page.offset },
    );
  // Newest first, so a page that the range's last day fills lies wholly in that day: try it alone first.
  // Otherwise the visits per day (rollups for closed days) say how far back the page reaches, so the list
  // folds only those days' sessions rather than the whole range's.
  let rows = await pageOf(startOfDay(p.last, site.timezone));
  if (rows.length <= page.limit) {
    const perDay = await runStats(clickhouse, { ...base, metrics: ['visits'], dimension: 'time:day' });
    const visitsOn = new Map(perDay.map((r) => [r.key, r.values.visits ?? 0]));
    let needed = page.offset + page.limit + 1;
    let from = base.start;
    for (const day of bucketLabels(p, 'day', site.timezone).reverse()) {
      needed -= visitsOn.get(day) ?? 0;
      if (needed <= 0) {
        from = startOfDay(parseDate(day)!, site.timezone);
        break;
      }
    }
    // One more than asked tells whether another page exists without counting every visit.
    rows = await pageOf(from);
  }
  const nonEmpty = (s: string) => (s === '' ? null : s);
  return {
    visitors: rows.slice(0, page.limit).map((r) => ({
      id: r.session_id,
      visitor_id: r.visitor_id,
      country_code: nonEmpty(r.country_code),
      country_name: r.country_code ? countryName(r.country_code) : null,
      city: nonEmpty(r.city),
      device_type: r.device_type,
      browser: r.browser,
      os: r.os,
      value_score: r.value_score,
      visited_at: new Date(r.started_ms).toISOString(),
      landing_page: r.landing_page,
      referrer: nonEmpty(r.referrer),
      had_interaction: r.had_interaction,
    })),
    pagination: { limit: page.limit, offset: page.offset, has_more: rows.length > page.limit },
  };
}

export async function topPages(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  range: RangeName,
  limit: number,
  now = Date.now(),
): Promise<PagesData> {
  const { base } = window(site, range, now);
  const rows = ranked(
    await runStats(clickhouse, { ...base, metrics: ['pageviews'], dimension: 'page' }),
    'pageviews',
    limit,
  );
  // Scores only for the pages shown: a visit's score is joined to every page it viewed, which costs far
  // more than counting views, so the ranking comes first.
  const scored = rows.length
    ? await runStats(clickhouse, { ...base, metrics: ['value_score'], dimension: 'page', keys: rows.map((r) => r.key) })
    : [];
  const score = new Map(scored.map((r) => [r.key, r.values.value_score ?? 0]));
  return {
    pages: rows.map((r) => ({ url: r.key, views: r.values.pageviews ?? 0, avg_value_score: score.get(r.key) ?? 0 })),
  };
}

export async function topCountries(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  range: RangeName,
  limit: number,
  now = Date.now(),
): Promise<CountriesData> {
  const { base } = window(site, range, now);
  const rows = ranked(
    await runStats(clickhouse, { ...base, metrics: ['visitors', 'value_score'], dimension: 'country' }),
    'visitors',
    limit,
  );
  return {
    countries: rows.map((r) => ({
      country_code: r.key,
      country_name: countryName(r.key),
      visitors: r.values.visitors ?? 0,
      avg_value_score: r.values.value_score ?? 0,
    })),
  };
}

export async function technology(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  range: RangeName,
  now = Date.now(),
): Promise<TechnologyData> {
  const { base } = window(site, range, now);
  const by = await runEventBreakdowns(clickhouse, base, ['device', 'browser', 'os']);
  const totalVisitors = by.total[0]?.values.visitors ?? 0;
  const rows = (list: StatsRow[]) =>
    ranked(list, 'visitors').map((r) => {
      const n = r.values.visitors ?? 0;
      return {
        name: r.key,
        count: n,
        percentage: totalVisitors ? Math.min(100, Math.round((n / totalVisitors) * 1000) / 10) : 0,
      };
    });
  return {
    devices: rows(by.device),
    browsers: rows(by.browser),
    operating_systems: rows(by.os),
    total_visitors: totalVisitors,
  };
}
