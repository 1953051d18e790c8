// Visit keys (country, browser, device, os, source, utm_*) are a visit's values, its first pageview's, for
// every event of the visit: a breakdown by a key and the filters on it add up (breakdown row X = filter is X,
// is X + is not X = total), read raw, from daily rollups and from merged windows alike.
import { randomUUID } from 'node:crypto';
import type { EventRow } from '../../../../lib/ingest/job/rows';
import { statsResponse } from '../../../../lib/stats/api';
import type { Dimension, ModelMetric, StatsRow } from '../../../../lib/stats/model';
import type { Filter, StatsParams } from '../../../../lib/stats/params';
import { runEventBreakdowns, runStats } from '../../../../lib/stats/run';
import { addDays, parseDate, startOfDay } from '../../../../lib/stats/time';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { readStates } from '../../../helpers/readStates';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

jest.setTimeout(120_000);

const TZ = 'Europe/Berlin';
const SITE = randomUUID();
const DAYS = ['2026-03-10', '2026-03-11', '2026-03-12', '2026-03-13', '2026-03-14'];
/** Rolled up (and merged into a window) in the later states; the range's first and last day stay raw. */
const ROLLED: [string, string] = ['2026-03-11', '2026-03-13'];
const KEYS = ['country', 'browser', 'device', 'os', 'source', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
type Key = (typeof KEYS)[number];
const METRICS: ModelMetric[] = [
  'visitors',
  'pageviews',
  'events',
  'visits',
  'visit_duration',
  'bounce_rate',
  'value_score',
];
/** Every visitor's visits share their values, so visitors add up as well. */
const ADDITIVE: ModelMetric[] = ['visitors', 'pageviews', 'events', 'visits'];

let ctx: TestContext;

/**
 * Each day, at 10:00 local:
 * - V1: a Chrome visit from a Google ad (DE, desktop, Windows) viewing /a, then /b from inside the site, and a
 *   server-side custom event of the visit without browser, country, device or OS;
 * - V2: a Firefox visit (US, mobile, iOS) whose second pageview comes from another client (FR, tablet,
 *   Android, Safari);
 * - V3: a Chrome bounce from Twitter (DE, desktop, Linux, campaign autumn) with an engagement event;
 * - V4: a server pageview without a session (its own values: US, no browser, Bing);
 * - V5: a session with a custom event only (Edge, DE): no pageview, so no visit values.
 */
function fixture(): EventRow[] {
  const rows: EventRow[] = [];
  for (const day of DAYS) {
    const at = (minute: number) =>
      new Date(startOfDay(parseDate(day)!, TZ) + 10 * 3600_000 + minute * 60_000).toISOString();
    const row = (over: Partial<EventRow> & { ts: string }) => rows.push(eventRow(SITE, over));
    const s = (name: string) => `${name}-${day}`;
    const chrome = {
      visitor_id: 'V1',
      session_id: s('S1'),
      browser: 'Chrome',
      country_code: 'DE',
      device_type: 'desktop',
      os: 'Windows',
    };
    row({
      ...chrome,
      pathname: '/a',
      source_name: 'Google',
      utm_source: 'google',
      utm_medium: 'cpc',
      utm_campaign: 'spring',
      ts: at(0),
    });
    row({ ...chrome, pathname: '/b', ts: at(2) });
    row({
      ...chrome,
      type: 'event',
      name: 'Order',
      pathname: '',
      source_name: '',
      browser: '',
      country_code: '',
      device_type: '',
      os: '',
      ts: at(4),
    });
    const firefox = {
      visitor_id: 'V2',
      session_id: s('S2'),
      browser: 'Firefox',
      country_code: 'US',
      device_type: 'mobile',
      os: 'iOS',
    };
    row({ ...firefox, pathname: '/a', ts: at(1) });
    row({
      ...firefox,
      pathname: '/c',
      browser: 'Safari',
      country_code: 'FR',
      device_type: 'tablet',
      os: 'Android',
      ts: at(6),
    });
    const twitter = {
      visitor_id: 'V3',
      session_id: s('S3'),
      browser: 'Chrome',
      country_code: 'DE',
      device_type: 'desktop',
      os: 'Linux',
      source_name: 'Twitter',
    };
    row({ ...twitter, pathname: '/b', utm_source: 'twitter', utm_medium: 'social', utm_campaign: 'autumn', ts: at(3) });
    row({ ...twitter, type: 'engagement', engagement_ms: 30_000, pathname: '/b', ts: at(5) });
    row({
      visitor_id: 'V4',
      session_id: '',
      pathname: '/a',
      source_name: 'Bing',
      browser: '',
      country_code: 'US',
      ts: at(7),
    });
    row({
      visitor_id: 'V5',
      session_id: s('S5'),
      type: 'event',
      name: 'Signup',
      pathname: '',
      source_name: '',
      browser: 'Edge',
      country_code: 'DE',
      ts: at(8),
    });
  }
  return rows;
}

const range = {
  start: startOfDay(parseDate(DAYS[0])!, TZ),
  end: startOfDay(addDays(parseDate(DAYS[DAYS.length - 1])!, 1), TZ),
};
const base = { websiteId: SITE, timeZone: TZ, ...range, metrics: METRICS };
const filter = (key: Key, operator: Filter['operator'], value: string): Filter[] => [
  { key, operator, values: [value] },
];
const total = async (filters: Filter[] = []) => (await runStats(ctx.clickhouse, { ...base, filters }))[0]?.values ?? {};
const sum = (rows: StatsRow[], m: ModelMetric) => rows.reduce((n, r) => n + (r.values[m] ?? 0), 0);
const pick = (values: StatsRow['values'], metrics: ModelMetric[]) =>
  Object.fromEntries(metrics.map((m) => [m, values[m] ?? 0]));

/** Every disagreement between a key's breakdown and its filters, as readable lines (none when they add up). */
async function disagreements(key: Key): Promise<string[]> {
  const out: string[] = [];
  const all = await total();
  const rows = await runStats(ctx.clickhouse, { ...base, filters: [], dimension: key as Dimension });
  for (const m of ADDITIVE)
    if (sum(rows, m) !== all[m]) out.push(`${key}: rows' ${m} ${sum(rows, m)} ≠ total ${all[m]}`);
  for (const r of rows) {
    const is = await total(filter(key, 'is', r.key));
    const isNot = await total(filter(key, 'is_not', r.key));
    if (JSON.stringify(pick(is, METRICS)) !== JSON.stringify(pick(r.values, METRICS))) {
      out.push(`${key}=${r.key}: row ${JSON.stringify(r.values)} ≠ filter ${JSON.stringify(is)}`);
    }
    for (const m of ADDITIVE) {
      if ((is[m] ?? 0) + (isNot[m] ?? 0) !== all[m])
        out.push(`${key}=${r.key}: ${m} is ${is[m]} + is not ${isNot[m]} ≠ ${all[m]}`);
    }
  }
  return out;
}

/** The Stats API's breakdown by visit:browser and its visitors under browser!=Chrome. */
async function statsApiChrome(version: 'v1' | 'v2') {
  const params = (over: Partial<StatsParams>): StatsParams => ({
    siteId: SITE,
    period: `custom:${DAYS[0]},${DAYS[DAYS.length - 1]}`,
    metrics: ['visitors'],
    filters: [],
    conversionFilters: [],
    interval: 'day',
    limit: 100,
    page: 1,
    ...over,
  });
  const website = { id: SITE, timezone: TZ };
  const breakdown = await statsResponse(
    ctx.clickhouse,
    website,
    'breakdown',
    params({ property: 'visit:browser' }),
    version,
  );
  const notChrome = await statsResponse(
    ctx.clickhouse,
    website,
    'aggregate',
    params({ filters: [{ key: 'browser', operator: 'is_not', values: ['Chrome'] }] }),
    version,
  );
  return {
    rows: breakdown.results,
    notChrome: (notChrome.results as Record<string, { value: number | null }>).visitors.value,
  };
}

beforeAll(async () => {
  ctx = await createTestContext();
  await storeRows(ctx.clickhouse, fixture());
  // The fixture lands long after its ts: its late marks would make the rolled days read raw.
  await ctx.clickhouse.command({
    query: 'DELETE FROM late_marks WHERE website_id = {w:UUID}',
    query_params: { w: SITE },
  });
});
afterAll(() => ctx.close());

describe.each(readStates(() => ctx.clickhouse, { id: SITE, timeZone: TZ, rolled: ROLLED, range }))(
  'read from %s',
  (_state, prepare) => {
    beforeAll(prepare);

    it('a Chrome visit’s server event without browser is Chrome: breakdown and browser!=Chrome agree', async () => {
      // V2, V4 (no session: its own, no browser) and V5 (no pageview: no visit values); not V1 for its server event.
      expect((await total(filter('browser', 'is_not', 'Chrome'))).visitors).toBe(3);
      const rows = await runStats(ctx.clickhouse, { ...base, filters: [], dimension: 'browser' });
      const visitors = Object.fromEntries(rows.map((r) => [r.key, r.values.visitors]));
      // V1 and V3 (V5's session has no pageview: no browser); V2 by its first pageview; V4 without a session by its own ('').
      expect(visitors).toEqual({ Chrome: 2, Firefox: 1, '': 2 });
      expect((await total(filter('browser', 'is', 'Chrome'))).events).toBe(
        rows.find((r) => r.key === 'Chrome')?.values.events,
      );
      for (const version of ['v1', 'v2'] as const) {
        const api = await statsApiChrome(version);
        expect(api.rows).toEqual([
          { browser: 'Chrome', visitors: 2 },
          { browser: 'Firefox', visitors: 1 },
        ]);
        expect(api.notChrome).toBe(3);
      }
      // The External API's technology breakdowns (several keys in one pass) agree as well.
      const shared = await runEventBreakdowns(ctx.clickhouse, { ...base, filters: [] }, [
        'browser',
        'country',
        'device',
        'os',
      ]);
      expect(Object.fromEntries(shared.browser.map((r) => [r.key, r.values.visitors]))).toEqual(visitors);
    });

    it('a visit that changes client keeps its first pageview’s country, device, OS and browser', async () => {
      for (const [key, first, later] of [
        ['country', 'US', 'FR'],
        ['device', 'mobile', 'tablet'],
        ['os', 'iOS', 'Android'],
        ['browser', 'Firefox', 'Safari'],
      ] as const) {
        const rows = await runStats(ctx.clickhouse, {
          ...base,
          filters: [],
          dimension: key,
          metrics: ['pageviews', 'visits'],
        });
        expect([key, rows.find((r) => r.key === later)]).toEqual([key, undefined]);
        expect([key, rows.find((r) => r.key === first)?.values.pageviews]).toEqual([key, key === 'country' ? 15 : 10]); // V2's 2 a day (and V4's, US)
        expect([key, (await total(filter(key, 'is', later))).pageviews ?? 0]).toEqual([key, 0]);
      }
    });

    it('several visit-key filters select the visits whose values satisfy all of them', async () => {
      const visitors = async (filters: Filter[]) => (await total(filters)).visitors ?? 0;
      const both = (a: Filter[], b: Filter[]) => [...a, ...b];
      expect(await visitors(both(filter('country', 'is', 'DE'), filter('browser', 'is', 'Chrome')))).toBe(2); // V1, V3
      // V4 by its own values (US, no browser), V5 without visit values; not V1 (its browserless event) nor V2 (its FR Safari pageview).
      expect(await visitors(both(filter('country', 'is_not', 'DE'), filter('browser', 'is_not', 'Firefox')))).toBe(2);
      expect(await visitors(both(filter('country', 'is', ''), filter('source', 'is_not', 'Google')))).toBe(1); // V5
    });

    it.each(KEYS)('a breakdown by %s and its filters add up', async (key) => {
      expect(await disagreements(key)).toEqual([]);
    });
  },
);
