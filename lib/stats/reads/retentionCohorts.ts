// Retention cohorts counted in the store (issue 25, docs/intelligence.md "Retention"): one aggregated query per
// website returns, for each granularity, cohort and period, how many of the cohort's visitors visited in that
// period, so no visitor row ever leaves ClickHouse.
//
// - A visit is a pageview or custom event (the `visitors` metric's definition, DESIGN §3), on its local date in
//   the website's time zone: once dates are local, weeks (toMonday, as the stats code's weeks) and months are
//   calendar arithmetic and a DST change cannot move a visit across a boundary.
// - A visitor's cohort is the period of their first visit in the whole stored history, not in the range.
// - Only persistent ids count. A browser event without a page-supplied visitor_id carries the cookieless id,
//   the first 32 lowercase hex digits of a daily-salted SHA-256 (lib/ingest/accept/browser.ts), new every day
//   by design; it can never return. So a browser-only id of exactly that shape is left out; every other id
//   counts: server-sent visitorIds (identified users are identified by them), and page-supplied ids, which the
//   tracker makes UUIDs (with dashes). A page that supplies 32 hex digits of its own is read as cookieless.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { T } from '../sql/fragments';
import { addDays, formatDate, type LocalDate, startOfDay } from '../time';

export const RETENTION_GRANULARITIES = ['daily', 'weekly', 'monthly'] as const;
export type RetentionGranularity = (typeof RETENTION_GRANULARITIES)[number];
/** Periods after the first that are kept (spec: `periods` 1-12). */
export const MAX_RETENTION_PERIOD = 12;

/** Visitors of one cohort seen in one period (period 0 = every visitor of the cohort). */
export interface CohortCount {
  granularity: RetentionGranularity;
  cohort_date: string;
  period_number: number;
  visitors: number;
}

/** The shape of the cookieless id; see the header. */
const COOKIELESS_ID = '^[0-9a-f]{32}$';

/**
 * Per granularity, cohort (first local day of its period) and period 0-12, the cohort's visitors who visited in
 * that period, counting visits up to the end of local day `asOf`; cohorts whose period starts before the period
 * holding `from` are left out.
 */
export async function retentionCohortCounts(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  from: LocalDate,
  asOf: LocalDate,
): Promise<CohortCount[]> {
  const rows = await selectRows<{ g: RetentionGranularity; cohort: string; period: number; visitors: string }>(
    clickhouse,
    `SELECT g, multiIf(g = 'daily', first, g = 'weekly', toMonday(first), toStartOfMonth(first)) AS cohort,
            period, count() AS visitors
     FROM (
       SELECT first, days FROM (
         SELECT visitor_id,
                minIf(toDate(ts, {tz:String}), type != 'identify') AS first,
                groupUniqArrayIf(toDate(ts, {tz:String}), type != 'identify') AS days,
                max(source != 'browser') AS server_sent
         FROM events
         WHERE website_id = {w:UUID} AND ts < {until:${T}} AND toDate(ts) <= toDate({until:${T}})
           AND type IN ('pageview', 'event', 'identify')
         GROUP BY visitor_id
         HAVING length(days) > 0 AND visitor_id != '' AND (server_sent OR NOT match(visitor_id, {cookieless:String}))
       )
       WHERE first >= toStartOfMonth({from:Date})
     )
     ARRAY JOIN ['daily', 'weekly', 'monthly'] AS g
     ARRAY JOIN arrayDistinct(arrayFilter(p -> p <= {maxPeriod:UInt8}, arrayMap(x -> multiIf(
         g = 'daily', dateDiff('day', first, x),
         g = 'weekly', intDiv(dateDiff('day', toMonday(first), toMonday(x)), 7),
         (toYear(x) * 12 + toMonth(x)) - (toYear(first) * 12 + toMonth(first))), days))) AS period
     WHERE cohort >= multiIf(g = 'daily', {from:Date}, g = 'weekly', toMonday({from:Date}), toStartOfMonth({from:Date}))
     GROUP BY g, cohort, period
     ORDER BY g, cohort, period`,
    {
      w: site.id,
      tz: site.timezone,
      until: startOfDay(addDays(asOf, 1), site.timezone) / 1000,
      from: formatDate(from),
      cookieless: COOKIELESS_ID,
      maxPeriod: MAX_RETENTION_PERIOD,
    },
  );
  return rows.map((r) => ({
    granularity: r.g,
    cohort_date: r.cohort,
    period_number: Number(r.period),
    visitors: Number(r.visitors),
  }));
}
