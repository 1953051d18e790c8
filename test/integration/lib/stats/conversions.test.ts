// Goals, custom events, properties and revenue in Stats v2 (issue 22) over HTTP, on a hand-made fixture whose
// expected values are worked out below; then the same questions after the days are rolled up (conversions
// are read raw, conversion rates divide by visitors the rollups may answer: they must not change).
import { rollUpWebsite } from '../../../../jobs/rollups/website';
import type { EventRow } from '../../../../lib/ingest/job/rows';
import { createApiKey, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let key: string;
let siteId: string;
let user: TestUser;

/**
 * Website in UTC, revenue in USD, everything on 10 March 2026. Goals: Signup (event), Thank you (page
 * /thank-you), Docs (page /docs/*), Purchase (purchases).
 * - V1 US Chrome (Google): /, /pricing, event Signup {plan: pro, method: email}, /thank-you, purchase 100 USD.
 * - V2 DE Firefox: /docs/intro, event Signup {plan: free, method: google}, event Download {file: a.pdf}.
 * - V3 US Firefox (Google): /, purchase 50 EUR, purchase 30 USD, refund of 30 USD.
 * - V4 DE Chrome: /docs/api/x, then a server `goal` Signup (no browser, no page).
 * - V5 US Chrome: / (a bounce).
 * Visitors 5 (US 3). Signup: V1, V2, V4 → 3 visitors, 3 completions, 60 %. Thank you: V1 → 20 %. Docs: V2, V4
 * (`*` crosses `/`) → 40 %. Purchase: V1, V3 → 2 visitors, 3 succeeded purchases, 40 %; revenue in USD
 * 100 + 30 − 30 = 100.00 over 2 USD purchases → average 50.00 (the EUR one is not converted).
 */
function fixture(site: string): EventRow[] {
  const at = (hhmm: string) => `2026-03-10T${hhmm}:00.000Z`;
  const visit = (v: number, country: string, browser: string, source = 'Direct / None') => ({
    visitor_id: `v${v}`,
    session_id: `s${v}`,
    country_code: country,
    browser,
    source_name: source,
  });
  const V1 = visit(1, 'US', 'Chrome', 'Google');
  const V2 = visit(2, 'DE', 'Firefox');
  const V3 = visit(3, 'US', 'Firefox', 'Google');
  const V4 = visit(4, 'DE', 'Chrome');
  const V5 = visit(5, 'US', 'Chrome');
  const pv = (v: object, hhmm: string, pathname: string) => eventRow(site, { ...v, ts: at(hhmm), pathname });
  const custom = (v: object, hhmm: string, name: string, props: object, type = 'event') =>
    eventRow(site, { ...v, ts: at(hhmm), type, name, pathname: '', props: JSON.stringify(props) });
  const purchase = (v: object, hhmm: string, amount: number, currency: string, status = 'succeeded') =>
    eventRow(site, {
      ...v,
      ts: at(hhmm),
      type: 'purchase',
      pathname: '',
      revenue: amount,
      currency,
      props: JSON.stringify({ payment_provider: 'server', status }),
    });
  const server = { country_code: '', browser: '', source_name: '' };
  return [
    pv(V1, '10:00', '/'),
    pv(V1, '10:01', '/pricing'),
    custom(V1, '10:02', 'Signup', { plan: 'pro', method: 'email' }),
    pv(V1, '10:03', '/thank-you'),
    purchase({ ...V1, ...server }, '10:04', 100, 'USD'),
    pv(V2, '11:00', '/docs/intro'),
    custom(V2, '11:01', 'Signup', { plan: 'free', method: 'google' }),
    custom(V2, '11:02', 'Download', { file: 'a.pdf' }),
    pv(V3, '12:00', '/'),
    purchase({ ...V3, ...server }, '12:01', 50, 'EUR'),
    purchase({ ...V3, ...server }, '12:02', 30, 'USD'),
    purchase({ ...V3, ...server }, '12:10', 30, 'USD', 'refunded'),
    pv(V4, '13:00', '/docs/api/x'),
    custom({ ...V4, ...server }, '13:01', 'Signup', {}, 'goal'),
    pv(V5, '14:00', '/'),
  ];
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'pro', 'conversions');
  const site = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'UTC' },
  });
  siteId = site.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  for (const goal of [
    { name: 'Signup' },
    { name: 'Thank you', kind: 'page', path: '/thank-you' },
    { name: 'Docs', kind: 'page', path: '/docs/*' },
    { name: 'Purchase', kind: 'purchase' },
  ]) {
    const res = await call('POST', `/api/websites/${siteId}/goals`, { token: user.token, body: goal });
    expect(res.status).toBe(201);
  }
  await storeRows(ctx.clickhouse, fixture(siteId));
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
    const rolled = await rollUpWebsite(
      ctx.clickhouse,
      { id: siteId, timezone: 'UTC' },
      Date.parse('2026-03-13T00:00:00Z'),
    );
    expect(rolled.days).toBeGreaterThanOrEqual(1);
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
});
