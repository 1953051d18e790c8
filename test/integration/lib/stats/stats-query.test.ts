// The stats query model over the DST fixture of test/helpers/statsFixture.ts; expected values are worked
// out in the comments.
import { randomUUID } from 'node:crypto';
import type { StatsQuery } from '../../../../lib/stats/model';
import { type ResolvedPeriod, resolvePeriod } from '../../../../lib/stats/period';
import { runStats } from '../../../../lib/stats/run';
import { parseDate } from '../../../../lib/stats/time';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { eventRow, insertDstFixture, storeRows } from '../../../helpers/statsFixture';

const TZ = 'Europe/Berlin';
const SITE = randomUUID();
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
  await insertDstFixture(ctx.clickhouse, SITE);
});
afterAll(() => ctx.close());

const day = () => resolvePeriod('day', parseDate('2026-03-29')!, TZ) as ResolvedPeriod;
const query = (over: Partial<StatsQuery>): StatsQuery => ({
  websiteId: SITE,
  timeZone: TZ,
  start: day().start,
  end: day().end,
  metrics: ['visitors', 'pageviews', 'events', 'visit_duration', 'bounce_rate'],
  filters: [],
  ...over,
});

it('aggregates the local day: events in [23:00Z on the 28th, 22:00Z on the 29th), sessions by their start', async () => {
  // visitors B, C; pageviews B1, B2, C1's first; events those + Signup; sessions B1 (0 s, bounce), B2 (120 s),
  // C1 (1,800 s, its second pageview after midnight still counts): mean 640 s, 1 of 3 bounced = 33 %.
  expect(await runStats(ctx.clickhouse, query({}))).toEqual([
    { key: '', values: { visitors: 2, pageviews: 3, events: 4, visit_duration: 640, bounce_rate: 33 } },
  ]);
});

it('buckets by local hour: 23 hours that day, labels in local time', async () => {
  const rows = await runStats(ctx.clickhouse, query({ dimension: 'time:hour', metrics: ['pageviews', 'bounce_rate'] }));
  expect(rows.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
    { key: '2026-03-29 01:00:00', values: { pageviews: 1, bounce_rate: 100 } },
    { key: '2026-03-29 03:00:00', values: { pageviews: 1, bounce_rate: 0 } },
    { key: '2026-03-29 23:00:00', values: { pageviews: 1, bounce_rate: 0 } },
  ]);
});

it('buckets by local day over 7 days: A1 lands on the 28th', async () => {
  const week = resolvePeriod('7d', parseDate('2026-03-29')!, TZ) as ResolvedPeriod;
  const rows = await runStats(
    ctx.clickhouse,
    query({
      start: week.start,
      end: week.end,
      dimension: 'time:day',
      metrics: ['visitors', 'pageviews', 'visit_duration'],
    }),
  );
  expect(rows.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
    { key: '2026-03-28', values: { visitors: 1, pageviews: 2, visit_duration: 600 } },
    { key: '2026-03-29', values: { visitors: 2, pageviews: 3, visit_duration: 640 } },
  ]);
});

it('breaks down by country and by page, and filters with one-of and negation', async () => {
  const byCountry = await runStats(ctx.clickhouse, query({ dimension: 'country' }));
  expect(byCountry.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
    { key: 'DE', values: { visitors: 1, pageviews: 1, events: 1, visit_duration: 1800, bounce_rate: 0 } },
    { key: 'US', values: { visitors: 1, pageviews: 2, events: 3, visit_duration: 60, bounce_rate: 50 } },
  ]);
  const byPage = await runStats(ctx.clickhouse, query({ dimension: 'page', metrics: ['visitors', 'pageviews'] }));
  expect(byPage.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
    { key: '/a', values: { visitors: 2, pageviews: 2 } },
    { key: '/c', values: { visitors: 1, pageviews: 1 } },
  ]);
  const us = await runStats(
    ctx.clickhouse,
    query({ metrics: ['visitors'], filters: [{ key: 'country', operator: 'is', values: ['US', 'FR'] }] }),
  );
  expect(us).toEqual([{ key: '', values: { visitors: 1 } }]);
  const notChrome = await runStats(
    ctx.clickhouse,
    query({ metrics: ['visitors'], filters: [{ key: 'browser', operator: 'is_not', values: ['Chrome'] }] }),
  );
  expect(notChrome).toEqual([{ key: '', values: { visitors: 1 } }]);
  const injected = await runStats(
    ctx.clickhouse,
    query({ metrics: ['visitors'], filters: [{ key: 'page', operator: 'is', values: ["/a' OR '1'='1"] }] }),
  );
  expect(injected).toEqual([]);
});

it('places a visit written in two inserts across midnight on the day it began, whole', async () => {
  // Written as the ingest writer would: the first pageview in one insert, the next in a later one, so the
  // sessions table holds two parts of the visit, one on each side of the local midnight of the 31st.
  const site = randomUUID();
  const v = { visitor_id: 'N', session_id: 'N1' };
  for (const ts of ['2026-03-30T21:50:00Z', '2026-03-30T22:10:00Z']) {
    await storeRows(ctx.clickhouse, [eventRow(site, { ...v, ts })]);
  }
  const on = (date: string) => resolvePeriod('day', parseDate(date)!, TZ) as ResolvedPeriod;
  const ask = (date: string) =>
    runStats(
      ctx.clickhouse,
      query({
        websiteId: site,
        start: on(date).start,
        end: on(date).end,
        metrics: ['visits', 'pageviews', 'visit_duration', 'bounce_rate'],
      }),
    );
  // 30 March: the visit, both pageviews' 20 minutes; its first pageview only.
  expect(await ask('2026-03-30')).toEqual([
    { key: '', values: { visits: 1, pageviews: 1, visit_duration: 1200, bounce_rate: 0 } },
  ]);
  // 31 March: the second pageview, but no visit began that day.
  expect(await ask('2026-03-31')).toEqual([
    { key: '', values: { visits: 0, pageviews: 1, visit_duration: 0, bounce_rate: 0 } },
  ]);
});

it('computes only the breakdown values asked for, each as the full breakdown has it', async () => {
  const week = resolvePeriod('7d', parseDate('2026-03-29')!, TZ) as ResolvedPeriod;
  const ask = (keys?: string[]) =>
    runStats(
      ctx.clickhouse,
      query({
        start: week.start,
        end: week.end,
        dimension: 'page',
        metrics: ['visitors', 'pageviews', 'visits', 'value_score'],
        keys,
      }),
    );
  const all = await ask();
  expect(all.map((r) => r.key).sort()).toEqual(['/a', '/b', '/c']);
  const some = await ask(['/a', '/c', '/nowhere']);
  expect(some.sort((a, b) => a.key.localeCompare(b.key))).toEqual(
    all.filter((r) => r.key !== '/b').sort((a, b) => a.key.localeCompare(b.key)),
  );
  await expect(ask([])).resolves.toEqual([]);
  await expect(runStats(ctx.clickhouse, query({ dimension: 'time:day', keys: ['2026-03-29'] }))).rejects.toThrow(
    RangeError,
  );
});

it('reads a range of whole UTC days by the day alone: the first and last millisecond in, the ones beside them out', async () => {
  // A UTC website's ranges are whole days of the events' sort key, read without comparing ts (inWindows in
  // lib/stats/sql/fragments.ts); rows a millisecond either side of 24-26 March must stay out, those on its
  // edges in.
  const site = randomUUID();
  const rows = [
    ['/before', 'b', '2026-03-23T23:59:59.999Z'],
    ['/first', 'f', '2026-03-24T00:00:00.000Z'],
    ['/last', 'l', '2026-03-26T23:59:59.999Z'],
    ['/after', 'a', '2026-03-27T00:00:00.000Z'],
  ].map(([pathname, v, ts]) => eventRow(site, { pathname, visitor_id: v, session_id: v, country_code: 'DE', ts }));
  await storeRows(ctx.clickhouse, rows);
  const days = { start: Date.parse('2026-03-24T00:00:00Z'), end: Date.parse('2026-03-27T00:00:00Z') };
  const ask = (over: Partial<StatsQuery>) =>
    runStats(
      ctx.clickhouse,
      query({ websiteId: site, timeZone: 'UTC', ...days, metrics: ['visitors', 'pageviews'], ...over }),
    );
  expect(await ask({})).toEqual([{ key: '', values: { visitors: 2, pageviews: 2 } }]);
  const byPage = [
    { key: '/first', values: { visitors: 1, pageviews: 1 } },
    { key: '/last', values: { visitors: 1, pageviews: 1 } },
  ];
  expect((await ask({ dimension: 'page' })).sort((a, b) => a.key.localeCompare(b.key))).toEqual(byPage);
  const filtered = await ask({ dimension: 'page', filters: [{ key: 'country', operator: 'is', values: ['DE'] }] });
  expect(filtered.sort((a, b) => a.key.localeCompare(b.key))).toEqual(byPage);
  // A window of part days (a website's own midnights) compares ts: one hour later, /after is in, /first out.
  const later = { start: days.start + 3_600_000, end: days.end + 3_600_000 };
  expect((await ask({ ...later, dimension: 'page' })).map((r) => r.key).sort()).toEqual(['/after', '/last']);
});

describe('a visit’s source and utm values, and its events', () => {
  // G1 (visitor X) lands from Google with utm values on /home, views /p by a link inside the site (stored
  // with no source of its own: Direct / None, no utm), sends Signup and an engagement event. D1 (visitor Y)
  // comes direct: /home, /p. A server pageview with no session (visitor Z) keeps its own source, Bing; a
  // session E1 (visitor W) with a custom event only has no visit, so no visit values: ''.
  const site = randomUUID();
  const at = (minute: number) => new Date(Date.parse('2026-03-24T10:00:00Z') + minute * 60_000).toISOString();
  const google = { source_name: 'Google', utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'spring' };
  const period = () => resolvePeriod('day', parseDate('2026-03-24')!, TZ) as ResolvedPeriod;
  const ask = (over: Partial<StatsQuery>) =>
    runStats(ctx.clickhouse, query({ websiteId: site, start: period().start, end: period().end, ...over }));
  const byKey = (rows: { key: string }[]) => [...rows].sort((a, b) => a.key.localeCompare(b.key));

  beforeAll(async () => {
    const X = { visitor_id: 'X', session_id: 'G1' };
    const Y = { visitor_id: 'Y', session_id: 'D1' };
    await storeRows(ctx.clickhouse, [
      eventRow(site, { ...X, ...google, pathname: '/home', ts: at(0) }),
      eventRow(site, { ...X, pathname: '/p', referrer_domain: 'shop.example.com', ts: at(1) }),
      eventRow(site, { ...X, type: 'event', name: 'Signup', pathname: '', source_name: '', ts: at(2) }),
      eventRow(site, { ...X, type: 'engagement', engagement_ms: 20_000, pathname: '/p', source_name: '', ts: at(3) }),
      eventRow(site, { ...Y, pathname: '/home', ts: at(10) }),
      eventRow(site, { ...Y, pathname: '/p', ts: at(11) }),
      eventRow(site, { visitor_id: 'Z', session_id: '', source_name: 'Bing', pathname: '/home', ts: at(20) }),
      eventRow(site, {
        visitor_id: 'W',
        session_id: 'E1',
        type: 'event',
        name: 'Signup',
        pathname: '',
        source_name: 'Twitter',
        ts: at(30),
      }),
    ]);
  });

  it('counts every event of a visit under the visit’s source, an event without a session under its own', async () => {
    const metrics: StatsQuery['metrics'] = ['visitors', 'pageviews', 'events', 'visits'];
    expect(byKey(await ask({ dimension: 'source', metrics }))).toEqual([
      { key: '', values: { visitors: 1, pageviews: 0, events: 1, visits: 0 } },
      { key: 'Bing', values: { visitors: 1, pageviews: 1, events: 1, visits: 0 } },
      { key: 'Direct / None', values: { visitors: 1, pageviews: 2, events: 2, visits: 1 } },
      { key: 'Google', values: { visitors: 1, pageviews: 2, events: 3, visits: 1 } },
    ]);
    expect(byKey(await ask({ dimension: 'utm_campaign', metrics }))).toEqual([
      { key: '', values: { visitors: 3, pageviews: 3, events: 4, visits: 1 } },
      { key: 'spring', values: { visitors: 1, pageviews: 2, events: 3, visits: 1 } },
    ]);
  });

  it('filters by the visit’s source: a pageview reached inside a Google visit is not Direct / None', async () => {
    const metrics: StatsQuery['metrics'] = ['visitors', 'pageviews', 'events', 'visits', 'bounce_rate'];
    const direct: StatsQuery['filters'] = [{ key: 'source', operator: 'is', values: ['Direct / None'] }];
    expect(await ask({ metrics, filters: direct })).toEqual([
      { key: '', values: { visitors: 1, pageviews: 2, events: 2, visits: 1, bounce_rate: 0 } },
    ]);
    expect(
      byKey(
        await ask({
          dimension: 'page',
          metrics: ['visitors', 'pageviews'],
          filters: [{ key: 'utm_medium', operator: 'is', values: ['cpc'] }],
        }),
      ),
    ).toEqual([
      { key: '/home', values: { visitors: 1, pageviews: 1 } },
      { key: '/p', values: { visitors: 1, pageviews: 1 } },
    ]);
    expect(
      await ask({
        metrics: ['visitors', 'pageviews', 'visits'],
        filters: [{ key: 'source', operator: 'is_not', values: ['Google', 'Direct / None'] }],
      }),
    ).toEqual([{ key: '', values: { visitors: 2, pageviews: 1, visits: 0 } }]);
    expect(
      await ask({
        metrics: ['visitors', 'events'],
        filters: [{ key: 'source', operator: 'contains', values: ['twit', 'goog'] }],
      }),
    ).toEqual([{ key: '', values: { visitors: 1, events: 3 } }]);
  });

  it('gives entry and exit pages their visits’ pageviews and custom events as events, not engagement', async () => {
    const metrics: StatsQuery['metrics'] = ['visitors', 'pageviews', 'events', 'visits'];
    expect(await ask({ dimension: 'entry_page', metrics })).toEqual([
      { key: '/home', values: { visitors: 2, pageviews: 4, events: 5, visits: 2 } },
    ]);
    expect(await ask({ dimension: 'exit_page', metrics })).toEqual([
      { key: '/p', values: { visitors: 2, pageviews: 4, events: 5, visits: 2 } },
    ]);
  });
});
