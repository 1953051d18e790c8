// Goals, custom events, properties and revenue in Stats v2 (issue 22) over HTTP, on a hand-made fixture whose
// expected values are worked out below; then the same questions after the days are rolled up and merged into
// a window (page goals are then read from the rollups, the rest raw; conversion rates divide by visitors the
// rollups may answer: nothing may change).

import { rollUpWebsite } from '../../../../jobs/rollups/website';
import { computeWindow } from '../../../../jobs/rollups/windows';
import { rollupCoverage, windowRun } from '../../../../lib/stats/coverage';
import { parseDate } from '../../../../lib/stats/time';
import { createApiKey, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { addConversionGoals, conversionsFixture } from '../../../helpers/conversionsFixture';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let key: string;
let siteId: string;
let user: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'unlimited', 'conversions');
  const site = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'UTC' },
  });
  siteId = site.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  await addConversionGoals(call, user, siteId);
  await storeRows(ctx.clickhouse, conversionsFixture(siteId, '2026-03-10'));
});
afterAll(() => ctx.close());

const PERIOD = { period: 'custom:2026-03-09,2026-03-10' };
const get = (endpoint: string, params: Record<string, string>) =>
  call('GET', `/api/external/v2/stats/${endpoint}?${new URLSearchParams({ site_id: siteId, ...PERIOD, ...params })}`, {
    apiKey: key,
  });
const filters = (...clauses: unknown[]) => JSON.stringify(clauses);
const usd = (value: number) => ({ value, currency: 'USD' });

/** Every question of the suite with its expected answer, asked before and after the rollup. */
const QUESTIONS: [string, string, Record<string, string>, unknown][] = [
  [
    'goal breakdown: converted visitors, completions, conversion rate, revenue',
    'breakdown',
    { property: 'event:goal', metrics: 'visitors,events,conversion_rate,total_revenue,average_revenue' },
    [
      { goal: 'Signup', visitors: 3, events: 3, conversion_rate: 60, total_revenue: usd(0), average_revenue: usd(0) },
      { goal: 'Docs', visitors: 2, events: 2, conversion_rate: 40, total_revenue: usd(0), average_revenue: usd(0) },
      {
        goal: 'Purchase',
        visitors: 2,
        events: 3,
        conversion_rate: 40,
        total_revenue: usd(100),
        average_revenue: usd(50),
      },
      {
        goal: 'Thank you',
        visitors: 1,
        events: 1,
        conversion_rate: 20,
        total_revenue: usd(0),
        average_revenue: usd(0),
      },
    ],
  ],
  [
    'goal breakdown under a visit-key filter: rates of the filtered visitors',
    'breakdown',
    { property: 'event:goal', metrics: 'visitors,conversion_rate', filters: filters(['is', 'country', ['US']]) },
    [
      { goal: 'Purchase', visitors: 2, conversion_rate: 66.67 },
      { goal: 'Signup', visitors: 1, conversion_rate: 33.33 },
      { goal: 'Thank you', visitors: 1, conversion_rate: 33.33 },
      { goal: 'Docs', visitors: 0, conversion_rate: 0 },
    ],
  ],
  [
    'custom events by name',
    'breakdown',
    { property: 'event:name', metrics: 'visitors,events' },
    [
      { name: 'Signup', visitors: 3, events: 3 },
      { name: 'Download', visitors: 1, events: 1 },
    ],
  ],
  [
    'a custom property, with a conversion rate over all visitors',
    'breakdown',
    { property: 'event:props:plan', metrics: 'visitors,events,conversion_rate' },
    [
      { plan: 'free', visitors: 1, events: 1, conversion_rate: 20 },
      { plan: 'pro', visitors: 1, events: 1, conversion_rate: 20 },
    ],
  ],
  [
    'names filtered by a property',
    'breakdown',
    { property: 'event:name', metrics: 'events', filters: filters(['is', 'props:method', ['google']]) },
    [{ name: 'Signup', events: 1 }],
  ],
  [
    'countries of a goal’s completions, rates per country',
    'breakdown',
    { property: 'visit:country', metrics: 'visitors,conversion_rate', filters: filters(['is', 'goal', ['Signup']]) },
    [
      { country: 'DE', visitors: 2, conversion_rate: 100 },
      { country: 'US', visitors: 1, conversion_rate: 33.33 },
    ],
  ],
];

const AGGREGATES: [string, Record<string, string>, unknown][] = [
  [
    'revenue of the range: purchases in the website currency, refunds subtracted',
    { metrics: 'total_revenue,average_revenue,events' },
    { total_revenue: { value: usd(100) }, average_revenue: { value: usd(50) }, events: { value: 3 } },
  ],
  [
    'one goal: visitors, completions and rate',
    { metrics: 'visitors,events,conversion_rate', filters: filters(['is', 'goal', ['Signup']]) },
    { visitors: { value: 3 }, events: { value: 3 }, conversion_rate: { value: 60 } },
  ],
  [
    'goals whose name contains a text',
    { metrics: 'visitors,events', filters: filters(['contains', 'goal', ['doc']]) },
    { visitors: { value: 2 }, events: { value: 2 } },
  ],
];

async function expectAnswers() {
  for (const [what, endpoint, params, expected] of QUESTIONS) {
    const res = await get(endpoint, params);
    expect({ what, status: res.status, results: res.body.data?.results }).toEqual({
      what,
      status: 200,
      results: expected,
    });
  }
  for (const [what, params, expected] of AGGREGATES) {
    const res = await get('aggregate', params);
    expect({ what, status: res.status, results: res.body.data?.results }).toEqual({
      what,
      status: 200,
      results: expected,
    });
  }
  const series = await get('timeseries', {
    metrics: 'visitors,conversion_rate',
    interval: 'day',
    filters: filters(['is', 'goal', ['Purchase']]),
  });
  expect(series.body.data.results).toEqual([
    { date: '2026-03-09', visitors: 0, conversion_rate: 0 },
    { date: '2026-03-10', visitors: 2, conversion_rate: 40 },
  ]);
}

describe('conversions in Stats v2', () => {
  it('answers the hand-computed values read raw', async () => {
    await expectAnswers();
  });

  it('answers the same once the days are rolled up', async () => {
    // The fixture's rows are history written long before the rollup: no late mark makes its days stale.
    await ctx.clickhouse.command({
      query: 'DELETE FROM late_marks WHERE website_id = {w:UUID}',
      query_params: { w: siteId },
    });
    const rolled = await rollUpWebsite(
      ctx.clickhouse,
      { id: siteId, timezone: 'UTC' },
      Date.parse('2026-03-13T00:00:00Z'),
    );
    expect(rolled.days).toBeGreaterThanOrEqual(1);
    await expectAnswers();
  });

  it('answers the same from a merged window over the rolled-up days', async () => {
    const coverage = (await rollupCoverage(ctx.clickhouse, siteId, 'UTC'))!;
    // The range's rolled-up days: the 9th is before the first rolled-up day, read raw.
    const day = parseDate('2026-03-10')!;
    await computeWindow(ctx.clickhouse, siteId, 'UTC', day, day, coverage);
    expect(await windowRun(ctx.clickhouse, siteId, 'UTC', '2026-03-10', '2026-03-10', 0)).toMatch(/^[1-9]\d*$/);
    await expectAnswers();
  });

  it('lists the filters applied, conversion ones too', async () => {
    const res = await get('aggregate', {
      metrics: 'visitors',
      filters: filters(['is', 'goal', ['Signup']], ['is', 'country', ['US']]),
    });
    expect(res.body.data.meta.filters_applied).toEqual([
      { key: 'country', operator: 'is', values: ['US'] },
      { key: 'goal', operator: 'is', values: ['Signup'] },
    ]);
    expect(res.body.data.results).toEqual({ visitors: { value: 1 } });
  });

  it.each([
    [{ metrics: 'conversion_rate' }, 'CONVERSION_RATE_NEEDS_GOAL'],
    [{ metrics: 'visitors', filters: filters(['is', 'goal', ['Nope']]) }, 'UNKNOWN_GOAL'],
    [{ metrics: 'bounce_rate', filters: filters(['is', 'goal', ['Signup']]) }, 'METRIC_NOT_SUPPORTED'],
    [{ metrics: 'visitors', filters: filters(['is', "props:a'b", ['x']]) }, 'INVALID_PROPERTY_KEY'],
    [{ metrics: 'visitors', filters: filters(['is', 'nonsense', ['x']]) }, 'UNKNOWN_FILTER_KEY'],
  ])('refuses %j with 400 %s', async (params, code) => {
    const res = await get('aggregate', params as Record<string, string>);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code });
  });

  it('refuses a property key outside the documented characters, and conversion metrics on v1', async () => {
    const bad = await get('breakdown', { property: 'event:props:a b', metrics: 'visitors' });
    expect({ status: bad.status, code: bad.body.error?.code }).toEqual({ status: 400, code: 'INVALID_PROPERTY_KEY' });
    const v1 = await call(
      'GET',
      `/api/external/v1/stats/aggregate?${new URLSearchParams({ site_id: siteId, ...PERIOD, metrics: 'total_revenue' })}`,
      { apiKey: key },
    );
    expect({ status: v1.status, code: v1.body.error?.code }).toEqual({ status: 400, code: 'INVALID_METRIC' });
  });

  it('keeps goals of each kind through the goals API, refusing a path where it does not belong', async () => {
    const list = await call('GET', `/api/websites/${siteId}/goals`, { token: user.token });
    expect(
      list.body.data.goals.map((g: { name: string; kind: string; path: string | null }) => [g.name, g.kind, g.path]),
    ).toEqual([
      ['Signup', 'event', null],
      ['Thank you', 'page', '/thank-you'],
      ['Docs', 'page', '/docs/*'],
      ['Purchase', 'purchase', null],
    ]);
    for (const body of [
      { name: 'No path', kind: 'page' },
      { name: 'Odd', kind: 'event', path: '/x' },
      { kind: 'event' },
    ]) {
      const res = await call('POST', `/api/websites/${siteId}/goals`, { token: user.token, body });
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'VALIDATION_ERROR',
      });
    }
    const named = await call('POST', `/api/websites/${siteId}/goals`, {
      token: user.token,
      body: { kind: 'page', path: '/welcome' },
    });
    expect(named.body.data.goal).toMatchObject({ name: 'Visit /welcome', kind: 'page', path: '/welcome' });
  });

  // Last: it deletes the raw pageviews. Page goals over rolled-up days are read from the page rollups, so
  // their answers stand; the merged window (made above) serves the range, the daily rows each day.
  it('reads page goals of rolled-up days from the rollups, not the raw pageviews', async () => {
    await ctx.clickhouse.command({
      query: "DELETE FROM events WHERE website_id = {w:UUID} AND type = 'pageview'",
      query_params: { w: siteId },
    });
    const goals = filters(['is', 'goal', ['Signup', 'Thank you', 'Docs']]);
    const byGoal = await get('breakdown', { property: 'event:goal', metrics: 'visitors,events', filters: goals });
    expect(byGoal.body.data.results).toEqual([
      { goal: 'Signup', visitors: 3, events: 3 },
      { goal: 'Docs', visitors: 2, events: 2 },
      { goal: 'Thank you', visitors: 1, events: 1 },
    ]);
    const docs = await get('aggregate', {
      metrics: 'visitors,events',
      filters: filters(['contains', 'goal', ['doc']]),
    });
    expect(docs.body.data.results).toEqual({ visitors: { value: 2 }, events: { value: 2 } });
    // A day after the rolled-up ones is read raw, and merged with them: V2 again and a new visitor.
    await storeRows(ctx.clickhouse, [
      eventRow(siteId, { ts: '2026-03-12T09:00:00.000Z', visitor_id: 'v2', session_id: 's2b', pathname: '/docs/faq' }),
      eventRow(siteId, { ts: '2026-03-12T09:05:00.000Z', visitor_id: 'v6', session_id: 's6', pathname: '/docs/faq' }),
    ]);
    const longer = await call(
      'GET',
      `/api/external/v2/stats/breakdown?${new URLSearchParams({ site_id: siteId, period: 'custom:2026-03-09,2026-03-12', property: 'event:goal', metrics: 'visitors,events', filters: goals })}`,
      { apiKey: key },
    );
    expect(longer.body.data.results).toEqual([
      { goal: 'Docs', visitors: 3, events: 4 },
      { goal: 'Signup', visitors: 3, events: 3 },
      { goal: 'Thank you', visitors: 1, events: 1 },
    ]);
    const series = await get('timeseries', {
      metrics: 'visitors,conversion_rate',
      interval: 'day',
      filters: filters(['is', 'goal', ['Thank you', 'Docs']]),
    });
    expect(series.body.data.results).toEqual([
      { date: '2026-03-09', visitors: 0, conversion_rate: 0 },
      { date: '2026-03-10', visitors: 3, conversion_rate: 60 },
    ]);
  });
});
