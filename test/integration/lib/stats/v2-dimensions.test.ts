// Stats v2's channel, referrer, city and region (visit keys the rollups do not hold), week buckets, visits,
// views per visit and time on page, and the filter operators contains_not, matches, matches_not and the
// or/and/not groups, on a hand-computed fixture read raw, from daily rollups and from merged windows.
import { randomUUID } from 'node:crypto';
import { selectRows } from '../../../../lib/clickhouse/client';
import type { EventRow } from '../../../../lib/ingest/job/rows';
import { statsResponse } from '../../../../lib/stats/api';
import { channelSql } from '../../../../lib/stats/channel';
import type { Dimension, ModelMetric, StatsRow } from '../../../../lib/stats/model';
import type { FilterClause, StatsParams } from '../../../../lib/stats/params';
import { parseJsonFilters } from '../../../../lib/stats/params';
import { runStats } from '../../../../lib/stats/run';
import { addDays, parseDate, startOfDay } from '../../../../lib/stats/time';
import { CHANNEL_CASES } from '../../../helpers/channelCases';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { readStates } from '../../../helpers/readStates';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

jest.setTimeout(180_000);

const TZ = 'UTC';
const SITE = randomUUID();
/** Tuesday 10 March to Tuesday 17 March 2026: six days of the week of Monday the 9th, two of the 16th's. */
const DAYS = [
  '2026-03-10',
  '2026-03-11',
  '2026-03-12',
  '2026-03-13',
  '2026-03-14',
  '2026-03-15',
  '2026-03-16',
  '2026-03-17',
];
const N = DAYS.length;
const ROLLED: [string, string] = ['2026-03-11', '2026-03-16'];
const ADDITIVE: ModelMetric[] = ['visitors', 'pageviews', 'events', 'visits'];
const METRICS: ModelMetric[] = [...ADDITIVE, 'views_per_visit', 'visit_duration', 'bounce_rate'];

let ctx: TestContext;

/**
 * Every day at 10:00 UTC, the same visitors:
 * - S1 (V1): from a Google search (Berlin, Land Berlin, DE) on /a, then /b from inside the site (Potsdam,
 *   Brandenburg: not the visit's), engaged 30 s on /a and 12 s on /b — Organic Search, google.com;
 * - S2 (V2): utm fb / paid_social from l.facebook.com (Munich, Bavaria, DE) on /a, and a custom event Signup
 *   — Paid Social, l.facebook.com;
 * - S3 (V3): utm newsletter / email without referrer (Paris, Île-de-France, FR) on /c then /a, engaged 21 s
 *   on /c — Email, Direct / None;
 * - S4 (V4): direct on /b, no geo (US) — Direct, Direct / None, no city or region;
 * - S5 (V5): from blog.example.org (Berlin, Land Berlin, DE) on /a — Referral, blog.example.org;
 * - E6 (V6): a server pageview without a session from Bing (Hamburg, Hamburg, DE) on /a: its own values —
 *   Organic Search, bing.com;
 * - S7 (V7): a session with a custom event only: no visit values ('').
 * A day: 7 visitors, 8 pageviews, 10 events (pageviews and custom events), 5 visits, 63 s engaged.
 */
function fixture(): EventRow[] {
  const rows: EventRow[] = [];
  for (const day of DAYS) {
    const at = (minute: number) => new Date(Date.parse(`${day}T10:00:00Z`) + minute * 60_000).toISOString();
    const row = (over: Partial<EventRow> & { ts: string }) => rows.push(eventRow(SITE, over));
    const s = (name: string) => `${name}-${day}`;
    const berlin = { city: 'Berlin', region: 'Land Berlin', country_code: 'DE' };
    const v1 = { visitor_id: 'V1', session_id: s('S1') };
    row({
      ...v1,
      ...berlin,
      pathname: '/a',
      referrer: 'https://www.google.com/',
      referrer_domain: 'google.com',
      source_name: 'Google',
      ts: at(0),
    });
    const inside = {
      referrer: 'https://shop.example.com/a',
      referrer_domain: 'shop.example.com',
      source_name: 'Direct / None',
    };
    row({ ...v1, ...inside, pathname: '/b', city: 'Potsdam', region: 'Brandenburg', country_code: 'DE', ts: at(2) });
    const engaged = { type: 'engagement', source_name: '' };
    row({ ...v1, ...engaged, pathname: '/a', engagement_ms: 30_000, ts: at(1) });
    row({ ...v1, ...engaged, pathname: '/b', engagement_ms: 12_000, ts: at(3) });
    const v2 = { visitor_id: 'V2', session_id: s('S2') };
    const fb = { utm_source: 'fb', utm_medium: 'paid_social', utm_campaign: 'spring', source_name: 'fb' };
    row({
      ...v2,
      ...fb,
      pathname: '/a',
      referrer: 'https://l.facebook.com/',
      referrer_domain: 'l.facebook.com',
      city: 'Munich',
      region: 'Bavaria',
      country_code: 'DE',
      ts: at(0),
    });
    row({ ...v2, type: 'event', name: 'Signup', pathname: '', source_name: '', ts: at(1) });
    const v3 = { visitor_id: 'V3', session_id: s('S3'), city: 'Paris', region: 'Île-de-France', country_code: 'FR' };
    row({ ...v3, pathname: '/c', utm_source: 'newsletter', utm_medium: 'email', source_name: 'newsletter', ts: at(0) });
    row({ ...v3, ...engaged, pathname: '/c', engagement_ms: 21_000, ts: at(1) });
    row({ ...v3, ...inside, pathname: '/a', ts: at(2) });
    row({ visitor_id: 'V4', session_id: s('S4'), pathname: '/b', country_code: 'US', ts: at(0) });
    row({
      visitor_id: 'V5',
      session_id: s('S5'),
      ...berlin,
      pathname: '/a',
      referrer: 'https://blog.example.org/post',
      referrer_domain: 'blog.example.org',
      source_name: 'blog.example.org',
      ts: at(0),
    });
    row({
      visitor_id: 'V6',
      session_id: '',
      pathname: '/a',
      referrer: 'https://www.bing.com/',
      referrer_domain: 'bing.com',
      source_name: 'Bing',
      city: 'Hamburg',
      region: 'Hamburg',
      country_code: 'DE',
      ts: at(0),
    });
    row({
      visitor_id: 'V7',
      session_id: s('S7'),
      type: 'event',
      name: 'Signup',
      pathname: '',
      source_name: '',
      country_code: 'DE',
      ts: at(0),
    });
  }
  return rows;
}

const range = {
  start: startOfDay(parseDate(DAYS[0])!, TZ),
  end: startOfDay(addDays(parseDate(DAYS[N - 1])!, 1), TZ),
};
const base = { websiteId: SITE, timeZone: TZ, ...range, metrics: METRICS };
const json = (filters: unknown): FilterClause[] => {
  const parsed = parseJsonFilters(JSON.stringify(filters));
  if (!Array.isArray(parsed)) throw new Error(parsed.message);
  return parsed;
};
const total = async (filters: FilterClause[] = [], metrics = METRICS) =>
  (await runStats(ctx.clickhouse, { ...base, metrics, filters }))[0]?.values ?? {};
const byKey = (rows: StatsRow[], m: ModelMetric) => Object.fromEntries(rows.map((r) => [r.key, r.values[m]]));
const additive = (v: StatsRow['values']) => Object.fromEntries(ADDITIVE.map((m) => [m, v[m] ?? 0]));

/** A day's numbers times the days; visitors are the same people every day. */
const days = (visitors: number, pageviews: number, events: number, visits: number) => ({
  visitors,
  pageviews: pageviews * N,
  events: events * N,
  visits: visits * N,
});

beforeAll(async () => {
  ctx = await createTestContext();
  await storeRows(ctx.clickhouse, fixture());
  await ctx.clickhouse.command({
    query: 'DELETE FROM late_marks WHERE website_id = {w:UUID}',
    query_params: { w: SITE },
  });
});
afterAll(() => ctx.close());

describe('channel rules in SQL', () => {
  it('ClickHouse gives every case of the table its hand-worked channel', async () => {
    const sql = `SELECT t[1] AS name, ${channelSql({ source: 't[2]', utmSource: 't[3]', utmMedium: 't[4]', utmCampaign: 't[5]', referrer: 't[6]' })} AS channel
      FROM (SELECT arrayJoin({cases:Array(Array(String))}) AS t)`;
    const cases = CHANNEL_CASES.map(([name, v]) => [
      name,
      v.source,
      v.utmSource,
      v.utmMedium,
      v.utmCampaign,
      v.referrer,
    ]);
    const rows = await selectRows<{ name: string; channel: string }>(ctx.clickhouse, sql, { cases });
    expect(Object.fromEntries(rows.map((r) => [r.name, r.channel]))).toEqual(
      Object.fromEntries(CHANNEL_CASES.map(([name, , channel]) => [name, channel])),
    );
  });
});

describe.each(readStates(() => ctx.clickhouse, { id: SITE, timeZone: TZ, rolled: ROLLED, range }))(
  'read from %s',
  (_state, prepare) => {
    beforeAll(prepare);

    it('totals: visits, views per visit and time on page', async () => {
      const all = await total([], [...METRICS, 'time_on_page']);
      expect(additive(all)).toEqual(days(7, 8, 10, 5));
      expect(all.views_per_visit).toBe(1.6); // 64 pageviews / 40 visits
      expect(all.time_on_page).toBe(8); // 63 s a day over 8 pageviews: 7.875
    });

    it('time on page by page: engaged time on the page per pageview of it', async () => {
      const rows = await runStats(ctx.clickhouse, {
        ...base,
        metrics: ['time_on_page'],
        filters: [],
        dimension: 'page',
      });
      // /a: 30 s over 5 pageviews; /b: 12 s over 2; /c: 21 s over 1.
      expect(byKey(rows, 'time_on_page')).toEqual({ '/a': 6, '/b': 6, '/c': 21 });
    });

    it('time on page by exit page: the visits’ engaged time per pageview of theirs', async () => {
      const rows = await runStats(ctx.clickhouse, {
        ...base,
        metrics: ['time_on_page', 'visits'],
        filters: [],
        dimension: 'exit_page',
      });
      // /b: S1 (42 s, 2 pageviews) and S4 (1) → 14; /a: S2 (1), S3 (21 s, 2), S5 (1) → 5.25.
      expect(Object.fromEntries(rows.map((r) => [r.key, r.values]))).toEqual({
        '/b': { time_on_page: 14, visits: 2 * N },
        '/a': { time_on_page: 5, visits: 3 * N },
      });
    });

    it('week buckets start on Monday and add up to the range', async () => {
      const rows = await runStats(ctx.clickhouse, {
        ...base,
        metrics: ['visitors', 'pageviews', 'visits', 'views_per_visit'],
        filters: [],
        dimension: 'time:week',
      });
      expect(Object.fromEntries(rows.map((r) => [r.key, r.values]))).toEqual({
        '2026-03-09': { visitors: 7, pageviews: 48, visits: 30, views_per_visit: 1.6 },
        '2026-03-16': { visitors: 7, pageviews: 16, visits: 10, views_per_visit: 1.6 },
      });
    });

    it.each([
      [
        'channel',
        {
          'Organic Search': days(2, 3, 3, 1), // S1 and E6 (by its own values)
          'Paid Social': days(1, 1, 2, 1),
          Email: days(1, 2, 2, 1),
          Direct: days(1, 1, 1, 1),
          Referral: days(1, 1, 1, 1),
          '': days(1, 0, 1, 0), // S7: no pageview, no visit values
        },
      ],
      [
        'referrer',
        {
          'google.com': days(1, 2, 2, 1),
          'bing.com': days(1, 1, 1, 0),
          'l.facebook.com': days(1, 1, 2, 1),
          'Direct / None': days(2, 3, 3, 2), // S3 (tagged, no referrer) and S4
          'blog.example.org': days(1, 1, 1, 1),
          '': days(1, 0, 1, 0),
        },
      ],
      [
        'city',
        {
          Berlin: days(2, 3, 3, 2), // S1 (its Potsdam pageview too) and S5
          Munich: days(1, 1, 2, 1),
          Paris: days(1, 2, 2, 1),
          Hamburg: days(1, 1, 1, 0),
          '': days(2, 1, 2, 1), // S4 without geo, S7
        },
      ],
      [
        'region',
        {
          'Land Berlin': days(2, 3, 3, 2),
          Bavaria: days(1, 1, 2, 1),
          'Île-de-France': days(1, 2, 2, 1),
          Hamburg: days(1, 1, 1, 0),
          '': days(2, 1, 2, 1),
        },
      ],
    ] as const)('by %s: the visit’s values, and the filters on them add up', async (key, expected) => {
      const all = await total();
      const rows = await runStats(ctx.clickhouse, { ...base, filters: [], dimension: key as Dimension });
      expect(Object.fromEntries(rows.map((r) => [r.key, additive(r.values)]))).toEqual(expected);
      for (const r of rows) {
        const is = await total([{ key, operator: 'is', values: [r.key] }]);
        const isNot = await total([{ key, operator: 'is_not', values: [r.key] }]);
        expect([r.key, is]).toEqual([r.key, r.values]);
        for (const m of ADDITIVE) expect([r.key, m, (is[m] ?? 0) + (isNot[m] ?? 0)]).toEqual([r.key, m, all[m]]);
      }
    });

    it.each([
      // Referrers ending in .org or .com: S1, E6, S2, S5.
      ['matches', [['matches', 'referrer', ['\\.(org|com)$']]], days(4, 5, 6, 3)],
      // The rest: S3, S4, and S7 (whose '' does not match).
      ['matches_not', [['matches_not', 'referrer', ['\\.(org|com)$']]], days(3, 3, 4, 2)],
      // Events not on a page containing /a: /b twice, /c, and the two custom events without a page (V1, V2, V3,
      // V4, V7); visits holding a pageview not on /a: S1 (/b), S3 (/c), S4 (/b).
      ['contains_not', [['contains_not', 'page', ['/a']]], days(5, 3, 5, 3)],
      [
        'or of two visit keys',
        [
          [
            'or',
            [
              ['is', 'channel', ['Email']],
              ['is', 'city', ['Munich']],
            ],
          ],
        ],
        days(2, 3, 4, 2),
      ],
      // /c's pageview (S3) and every event of S5; visits holding such a pageview: S3, S5.
      [
        'or of a page and a visit key',
        [
          [
            'or',
            [
              ['is', 'page', ['/c']],
              ['is', 'channel', ['Referral']],
            ],
          ],
        ],
        days(2, 2, 2, 2),
      ],
      // Not DE: S3 (FR), S4 (US), S7 (no visit values).
      ['not', [['not', ['is', 'country', ['DE']]]], days(3, 3, 4, 2)],
      // Not Direct, or on /b: every visit but S4, and S4's one pageview is on /b.
      [
        'nested',
        [
          [
            'or',
            [
              ['not', ['is', 'channel', ['Direct']]],
              ['is', 'page', ['/b']],
            ],
          ],
        ],
        days(7, 8, 10, 5),
      ],
      [
        'a group beside a clause',
        [
          ['is', 'country', ['DE']],
          [
            'or',
            [
              ['is', 'channel', ['Organic Search']],
              ['matches', 'page', ['^/c$']],
            ],
          ],
        ],
        days(2, 3, 3, 1), // S1 and E6 (DE, Organic Search); S3 is FR
      ],
    ])('filter %s', async (_name, filters, expected) => {
      expect(additive(await total(json(filters)))).toEqual(expected);
    });

    it('the Stats API v2 answers channel breakdowns, new metrics and week buckets', async () => {
      const website = { id: SITE, timezone: TZ };
      const params = (over: Partial<StatsParams>): StatsParams => ({
        siteId: SITE,
        period: `custom:${DAYS[0]},${DAYS[N - 1]}`,
        metrics: ['visitors', 'visits', 'views_per_visit'],
        filters: [],
        conversionFilters: [],
        interval: 'day',
        limit: 100,
        page: 1,
        ...over,
      });
      const breakdown = await statsResponse(
        ctx.clickhouse,
        website,
        'breakdown',
        params({ property: 'visit:channel' }),
        'v2',
      );
      expect(breakdown.results).toEqual([
        { channel: 'Organic Search', visitors: 2, visits: 8, views_per_visit: 3 },
        { channel: 'Direct', visitors: 1, visits: 8, views_per_visit: 1 },
        { channel: 'Email', visitors: 1, visits: 8, views_per_visit: 2 },
        { channel: 'Paid Social', visitors: 1, visits: 8, views_per_visit: 1 },
        { channel: 'Referral', visitors: 1, visits: 8, views_per_visit: 1 },
      ]);
      const weeks = await statsResponse(
        ctx.clickhouse,
        website,
        'timeseries',
        params({ interval: 'week', metrics: ['visits'] }),
        'v2',
      );
      expect(weeks.results).toEqual([
        { date: '2026-03-09', visits: 30 },
        { date: '2026-03-16', visits: 10 },
      ]);
      const grouped = await statsResponse(
        ctx.clickhouse,
        website,
        'aggregate',
        params({ metrics: ['visitors'], filters: json([['not', ['is', 'channel', ['Direct']]]]) }),
        'v2',
      );
      expect(grouped.results).toEqual({ visitors: { value: 6 } });
      expect(grouped.meta.filters_applied).toEqual([
        { operator: 'not', clauses: [{ key: 'channel', operator: 'is', values: ['Direct'] }] },
      ]);
    });
  },
);
