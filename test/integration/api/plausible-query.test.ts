// POST /api/v2/query, the Plausible-compatible endpoint: Plausible's published v2 examples replayed on the DST
// fixture (test/helpers/statsFixture.ts, Europe/Berlin, 29 March 2026) and a day of sources and campaigns
// (10 April), answers equal to the Stats API v2's, errors in Plausible's shape, and who may ask.
import { randomUUID } from 'node:crypto';
import { setTeamPlan } from '../../../lib/accounts/teams';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { eventRow, insertDstFixture, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let user: TestUser;
let key: string;
let siteId: string;
const DOMAIN = 'shop.example.com';

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  // Many questions a minute: a plan without a per-minute limit (the limits have their own test below).
  user = await registerUser(ctx, 'unlimited', 'plausible');
  const res = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: DOMAIN, name: 'Shop', timezone: 'Europe/Berlin' },
  });
  siteId = res.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  await insertDstFixture(ctx.clickhouse, siteId);
  // 10 April 2026 (CEST, UTC+2): D from Google reads /pricing then /docs (300 s); E and F come from Twitter's
  // social campaign to /docs and /pricing; G comes direct to /. Every visit but D's is a bounce.
  const row = (over: Parameters<typeof eventRow>[1]) => eventRow(siteId, over);
  const twitter = { source_name: 'Twitter', utm_source: 'twitter', utm_medium: 'social' };
  await storeRows(ctx.clickhouse, [
    row({
      visitor_id: 'D',
      session_id: 'D1',
      country_code: 'EE',
      browser: 'Chrome',
      source_name: 'Google',
      pathname: '/pricing',
      ts: '2026-04-10T10:00:00Z',
    }),
    row({
      visitor_id: 'D',
      session_id: 'D1',
      country_code: 'EE',
      browser: 'Chrome',
      source_name: 'Google',
      pathname: '/docs',
      ts: '2026-04-10T10:05:00Z',
    }),
    row({
      visitor_id: 'E',
      session_id: 'E1',
      country_code: 'US',
      browser: 'Firefox',
      ...twitter,
      pathname: '/docs',
      ts: '2026-04-10T11:00:00Z',
    }),
    row({
      visitor_id: 'F',
      session_id: 'F1',
      country_code: 'US',
      browser: 'Safari',
      ...twitter,
      pathname: '/pricing',
      ts: '2026-04-10T12:00:00Z',
    }),
    row({
      visitor_id: 'G',
      session_id: 'G1',
      country_code: 'DE',
      browser: 'Chrome',
      pathname: '/',
      ts: '2026-04-10T13:00:00Z',
    }),
  ]);
});
afterAll(() => ctx.close());

/** A query as Plausible's docs send it: the key as a Bearer token. */
const query = (body: unknown, bearer = key) => call('POST', '/api/v2/query', { body, token: bearer });
const v2 = (endpoint: string, params: Record<string, string>) =>
  call('GET', `/api/external/v2/stats/${endpoint}?${new URLSearchParams({ site_id: siteId, ...params })}`, {
    apiKey: key,
  });

describe("Plausible's published examples", () => {
  it('simple aggregate: visitors and events over 7d', async () => {
    // 23–29 March: A (2 pageviews), B (B1, B2 and Signup), C (one pageview on the 29th, one on the 30th).
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'events'],
      date_range: '7d',
      date: '2026-03-29',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      results: [{ metrics: [3, 6], dimensions: [] }],
      meta: {},
      query: {
        site_id: DOMAIN,
        metrics: ['visitors', 'events'],
        date_range: ['2026-03-23T00:00:00+01:00', '2026-03-29T23:59:59+02:00'],
        filters: [],
        dimensions: [],
        order_by: [['visitors', 'desc']],
        include: {},
        pagination: { limit: 10000, offset: 0 },
      },
    });
  });

  it('custom date range of two dates', async () => {
    const res = await query({ site_id: DOMAIN, metrics: ['visitors'], date_range: ['2026-03-28', '2026-03-29'] });
    expect(res.body.results).toEqual([{ metrics: [3], dimensions: [] }]);
    expect(res.body.query.date_range).toEqual(['2026-03-28T00:00:00+01:00', '2026-03-29T23:59:59+02:00']);
  });

  it('timeseries by day under a filter: only days with data', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'events'],
      date_range: '7d',
      date: '2026-03-29',
      filters: [['is', 'visit:browser', ['Chrome', 'Firefox']]],
      dimensions: ['time:day'],
    });
    // 28th: A's two pageviews; 29th: B (3 events) and C (1).
    expect(res.body.results).toEqual([
      { metrics: [1, 2], dimensions: ['2026-03-28'] },
      { metrics: [2, 4], dimensions: ['2026-03-29'] },
    ]);
    expect(res.body.query.order_by).toEqual([
      ['time:day', 'asc'],
      ['visitors', 'desc'],
    ]);
  });

  it('timeseries by hour with time labels: the spring-forward day has 23', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: 'day',
      date: '2026-03-29',
      dimensions: ['time:hour'],
      include: { time_labels: true },
    });
    expect(res.body.results).toEqual([
      { metrics: [1], dimensions: ['2026-03-29 01:00:00'] },
      { metrics: [1], dimensions: ['2026-03-29 03:00:00'] },
      { metrics: [1], dimensions: ['2026-03-29 23:00:00'] },
    ]);
    const labels = res.body.meta.time_labels as string[];
    expect(labels).toHaveLength(23);
    expect(labels[0]).toBe('2026-03-29 00:00:00');
    expect(labels).not.toContain('2026-03-29 02:00:00');
    expect(labels[22]).toBe('2026-03-29 23:00:00');
    expect(res.body.query.include).toEqual({ time_labels: true });
  });

  it('`time` picks the bucket from the range', async () => {
    const day = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: 'day',
      date: '2026-03-29',
      dimensions: ['time'],
    });
    expect(day.body.query.dimensions).toEqual(['time:hour']);
    const days = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: '7d',
      date: '2026-03-29',
      dimensions: ['time'],
    });
    expect(days.body.query.dimensions).toEqual(['time:day']);
    const months = await query({
      site_id: DOMAIN,
      metrics: ['pageviews'],
      date_range: '6mo',
      date: '2026-04-10',
      dimensions: ['time'],
    });
    // March: A 2, B 2, C 2 (the 30th's too); April: 5.
    expect(months.body.results).toEqual([
      { metrics: [6], dimensions: ['2026-03-01'] },
      { metrics: [5], dimensions: ['2026-04-01'] },
    ]);
  });

  it('breakdown by source with pagination and total_rows', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'events', 'pageviews'],
      date_range: ['2026-04-10', '2026-04-10'],
      dimensions: ['visit:source'],
      include: { total_rows: true },
      pagination: { limit: 1, offset: 1 },
    });
    // Twitter 2 visitors; Direct / None and Google 1 each, ties by name.
    expect(res.body.results).toEqual([{ metrics: [1, 1, 1], dimensions: ['Direct / None'] }]);
    expect(res.body.meta).toEqual({ total_rows: 3 });
    expect(res.body.query.pagination).toEqual({ limit: 1, offset: 1 });
  });

  it('UTM medium: an unset value is "(not set)"', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'pageviews'],
      date_range: ['2026-04-10', '2026-04-10'],
      dimensions: ['visit:utm_medium'],
    });
    // D (2 pageviews) and G (1) have none; E and F came from social.
    expect(res.body.results).toEqual([
      { metrics: [2, 3], dimensions: ['(not set)'] },
      { metrics: [2, 2], dimensions: ['social'] },
    ]);
    const notSet = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: ['2026-04-10', '2026-04-10'],
      filters: [['is', 'visit:utm_medium', ['(not set)']]],
    });
    expect(notSet.body.results[0].metrics).toEqual([2]);
  });

  it('filtering by page and country', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: ['2026-04-10', '2026-04-10'],
      filters: [
        ['contains', 'event:page', ['/docs', '/pricing']],
        ['is', 'visit:country', ['EE', 'US']],
      ],
    });
    expect(res.body.results).toEqual([{ metrics: [3], dimensions: [] }]); // D, E, F
    expect(res.body.query.filters).toEqual([
      ['contains', 'event:page', ['/docs', '/pricing']],
      ['is', 'visit:country', ['EE', 'US']],
    ]);
  });

  it('a time dimension with another: pages by day', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: '7d',
      date: '2026-03-29',
      dimensions: ['time:day', 'event:page'],
    });
    expect(res.body.results).toEqual([
      { metrics: [1], dimensions: ['2026-03-28', '/a'] },
      { metrics: [1], dimensions: ['2026-03-28', '/b'] },
      { metrics: [2], dimensions: ['2026-03-29', '/a'] },
      { metrics: [1], dimensions: ['2026-03-29', '/c'] },
    ]);
    const ordered = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: '7d',
      date: '2026-03-29',
      dimensions: ['event:page', 'time:day'],
      order_by: [['event:page', 'desc']],
    });
    expect(ordered.body.results.map((r: { dimensions: string[] }) => r.dimensions)).toEqual([
      ['/c', '2026-03-29'],
      ['/b', '2026-03-28'],
      ['/a', '2026-03-28'],
      ['/a', '2026-03-29'],
    ]);
  });

  it('and and not groups', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'pageviews'],
      date_range: 'day',
      date: '2026-03-29',
      filters: [
        [
          'and',
          [
            ['not', ['is', 'visit:browser', ['Chrome']]],
            ['is_not', 'visit:country', ['DE']],
          ],
        ],
        ['not', ['not', ['is', 'visit:country', ['US']]]],
      ],
    });
    expect(res.body.results[0].metrics).toEqual([1, 2]); // B
  });
});

describe('the same numbers as the Stats API v2', () => {
  const METRICS = ['visitors', 'pageviews', 'visit_duration', 'bounce_rate', 'events', 'views_per_visit'];
  const cases: { period: string; date?: string; range: string | string[]; filters: unknown[] }[] = [
    { period: 'day', date: '2026-03-29', range: 'day', filters: [] },
    { period: '7d', date: '2026-03-29', range: '7d', filters: [] },
    { period: 'custom:2026-03-28,2026-04-10', range: ['2026-03-28', '2026-04-10'], filters: [] },
    {
      period: 'custom:2026-03-28,2026-04-10',
      range: ['2026-03-28', '2026-04-10'],
      filters: [['is', 'visit:country', ['US']]],
    },
    { period: 'month', date: '2026-04-10', range: 'month', filters: [['is_not', 'visit:browser', ['Chrome']]] },
  ];
  const v2Filters = (filters: unknown[]) =>
    JSON.stringify(
      (filters as [string, string, string[]][]).map(([op, dim, values]) => [op, dim.split(':')[1], values]),
    );

  it.each(cases)('aggregate, timeseries and breakdowns over $period', async ({ period, date, range, filters }) => {
    const anchor: Record<string, string> = date ? { date } : {};
    const params: Record<string, string> = {
      period,
      ...anchor,
      metrics: METRICS.join(','),
      ...(filters.length ? { filters: v2Filters(filters) } : {}),
    };
    const body = { site_id: siteId, metrics: METRICS, date_range: range, ...anchor, filters };

    const aggregate = await v2('aggregate', params);
    const ours = await query(body);
    expect(ours.body.results[0].metrics).toEqual(METRICS.map((m) => aggregate.body.data.results[m].value));

    const series = await v2('timeseries', params);
    const byDay = await query({ ...body, dimensions: ['time:day'] });
    const expected = (series.body.data.results as Record<string, number>[])
      .filter((r) => METRICS.some((m) => r[m] !== 0))
      .map((r) => ({ metrics: METRICS.map((m) => r[m]), dimensions: [r.date] }));
    expect(byDay.body.results).toEqual(expected);

    for (const property of [
      'event:page',
      'visit:source',
      'visit:country',
      'visit:entry_page',
      'visit:utm_medium',
      'visit:channel',
      'visit:referrer',
      'visit:city',
      'visit:region',
    ]) {
      const breakdown = await v2('breakdown', { ...params, property });
      const rows = await query({ ...body, dimensions: [property], order_by: [['visitors', 'desc']] });
      const column = property.split(':')[1];
      const theirs = (breakdown.body.data.results as Record<string, string | number>[]).map((r) => ({
        metrics: METRICS.map((m) => r[m]),
        dimensions: [r[column]],
      }));
      // The Stats API leaves out rows without a value; Plausible shows them as "(not set)".
      const named = rows.body.results.filter((r: { dimensions: string[] }) => r.dimensions[0] !== '(not set)');
      expect(named).toEqual(theirs);
    }
  });
});

describe('goals, custom events, properties and revenue', () => {
  // 5 May 2026 (CEST). Goals: Signup (the event), Pricing (page /pricing), Purchase (purchases).
  // P1 (Google): /, Signup {plan: pro}, a 100 USD purchase; P2: /pricing, Signup {plan: free}; P3: / only.
  // Visitors 3. Signup: P1, P2 → 2 (66.67 %); Pricing: P2 → 1 (33.33 %); Purchase: P1 → 1 (33.33 %), 100 USD.
  const MAY = ['2026-05-05', '2026-05-05'];
  beforeAll(async () => {
    for (const goal of [
      { name: 'Signup' },
      { name: 'Pricing', kind: 'page', path: '/pricing' },
      { name: 'Purchase', kind: 'purchase' },
    ]) {
      const res = await call('POST', `/api/websites/${siteId}/goals`, { token: user.token, body: goal });
      expect(res.status).toBe(201);
    }
    const at = (t: string) => `2026-05-05T${t}:00Z`;
    const P1 = { visitor_id: 'P1', session_id: 'P1', country_code: 'US', browser: 'Chrome', source_name: 'Google' };
    const P2 = { visitor_id: 'P2', session_id: 'P2', country_code: 'DE', browser: 'Firefox' };
    const P3 = { visitor_id: 'P3', session_id: 'P3', country_code: 'US', browser: 'Chrome' };
    const custom = (v: object, t: string, props: object) =>
      eventRow(siteId, { ...v, ts: at(t), type: 'event', name: 'Signup', pathname: '', props: JSON.stringify(props) });
    await storeRows(ctx.clickhouse, [
      eventRow(siteId, { ...P1, ts: at('08:00'), pathname: '/' }),
      custom(P1, '08:01', { plan: 'pro' }),
      eventRow(siteId, {
        ...P1,
        ts: at('08:02'),
        type: 'purchase',
        pathname: '',
        revenue: 100,
        currency: 'USD',
        props: JSON.stringify({ payment_provider: 'server', status: 'succeeded' }),
      }),
      eventRow(siteId, { ...P2, ts: at('09:00'), pathname: '/pricing' }),
      custom(P2, '09:01', { plan: 'free' }),
      eventRow(siteId, { ...P3, ts: at('10:00'), pathname: '/' }),
    ]);
  });

  it('goal breakdown with conversion rates, as the Stats API v2 answers it', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'events', 'conversion_rate'],
      date_range: MAY,
      dimensions: ['event:goal'],
    });
    expect(res.body.results).toEqual([
      { metrics: [2, 2, 66.67], dimensions: ['Signup'] },
      { metrics: [1, 1, 33.33], dimensions: ['Pricing'] },
      { metrics: [1, 1, 33.33], dimensions: ['Purchase'] },
    ]);
    const v2Rows = await v2('breakdown', {
      period: 'custom:2026-05-05,2026-05-05',
      property: 'event:goal',
      metrics: 'visitors,events,conversion_rate',
    });
    expect(res.body.results).toEqual(
      v2Rows.body.data.results.map((r: Record<string, number | string>) => ({
        metrics: [r.visitors, r.events, r.conversion_rate],
        dimensions: [r.goal],
      })),
    );
  });

  it('revenue metrics of a goal, in the website currency', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors', 'total_revenue', 'average_revenue', 'conversion_rate'],
      date_range: MAY,
      filters: [['is', 'event:goal', ['Purchase']]],
    });
    expect(res.body.results).toEqual([
      { metrics: [1, { value: 100, currency: 'USD' }, { value: 100, currency: 'USD' }, 33.33], dimensions: [] },
    ]);
  });

  it('custom properties by day, filtered on the event name', async () => {
    const res = await query({
      site_id: DOMAIN,
      metrics: ['visitors'],
      date_range: MAY,
      dimensions: ['time:day', 'event:props:plan'],
      filters: [['is', 'event:name', ['Signup']]],
      order_by: [
        ['time:day', 'asc'],
        ['event:props:plan', 'desc'],
      ],
    });
    expect(res.body.results).toEqual([
      { metrics: [1], dimensions: ['2026-05-05', 'pro'] },
      { metrics: [1], dimensions: ['2026-05-05', 'free'] },
    ]);
  });

  it('refuses what conversion questions cannot answer, naming it', async () => {
    const body = { site_id: DOMAIN, date_range: MAY };
    const refusals: [object, string, RegExp][] = [
      [{ metrics: ['conversion_rate'] }, 'CONVERSION_RATE_NEEDS_GOAL', /conversion_rate/],
      [{ metrics: ['visitors'], filters: [['is', 'event:goal', ['Nope']]] }, 'UNKNOWN_GOAL', /'Nope'/],
      [{ metrics: ['bounce_rate'], dimensions: ['event:goal'] }, 'UNSUPPORTED_METRIC', /'bounce_rate'/],
      [{ metrics: ['visitors'], dimensions: ['event:props:a b'] }, 'INVALID_PROPERTY_KEY', /'event:props:a b'/],
    ];
    // Every dimension with a conversion filter is answered (or refused), never a 500.
    for (const dimension of [
      'visit:entry_page',
      'visit:exit_page',
      'event:page',
      'visit:utm_medium',
      'time:hour',
      'time:month',
    ]) {
      const res = await query({
        ...body,
        metrics: ['visitors', 'conversion_rate'],
        dimensions: [dimension],
        filters: [['is', 'event:goal', ['Signup']]],
      });
      expect([dimension, res.status]).toEqual([dimension, 200]);
    }
    for (const [extra, code, mention] of refusals) {
      const res = await query({ ...body, ...extra });
      expect([res.status, res.body.code]).toEqual([400, code]);
      expect(res.body.error).toMatch(mention);
    }
  });
});

describe('errors in Plausible’s shape', () => {
  const base = { site_id: DOMAIN, metrics: ['visitors'], date_range: '7d' };
  const refused = async (body: unknown, code: string, mention: string | RegExp) => {
    const res = await query(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
    expect(res.body.error).toEqual(expect.stringMatching(mention));
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);
  };

  it('names the unknown or unsupported part', async () => {
    await refused({ ...base, metrics: ['visitors', 'sessions'] }, 'UNKNOWN_METRIC', /'sessions'/);
    await refused({ ...base, metrics: ['scroll_depth'] }, 'UNSUPPORTED_METRIC', /'scroll_depth'/);
    await refused({ ...base, dimensions: ['visit:planet'] }, 'UNKNOWN_DIMENSION', /'visit:planet'/);
    await refused({ ...base, dimensions: ['visit:city_name'] }, 'UNSUPPORTED_DIMENSIONS', /'visit:city_name'/);
    await refused(
      { ...base, dimensions: ['event:goal', 'event:props:plan'] },
      'UNSUPPORTED_DIMENSIONS',
      /'event:goal' and 'event:props:plan'/,
    );
    await refused(
      { ...base, dimensions: ['visit:utm_medium', 'visit:utm_source'] },
      'UNSUPPORTED_DIMENSIONS',
      /'visit:utm_medium' and 'visit:utm_source'/,
    );
    await refused({ ...base, filters: [['like', 'event:page', ['/']]] }, 'UNKNOWN_FILTER_OPERATOR', /'like'/);
    await refused({ ...base, filters: [['matches', 'event:page', ['^/a$']]] }, 'UNSUPPORTED_FILTER', /'matches'/);
    await refused(
      {
        ...base,
        filters: [
          [
            'or',
            [
              ['is', 'visit:country', ['US']],
              ['is', 'visit:country', ['DE']],
            ],
          ],
        ],
      },
      'UNSUPPORTED_FILTER',
      /'or'/,
    );
    await refused(
      { ...base, filters: [['not', ['contains', 'event:page', ['/a']]]] },
      'UNSUPPORTED_FILTER',
      /'contains'/,
    );
    await refused(
      { ...base, filters: [['is', 'visit:country_name', ['Estonia']]] },
      'UNSUPPORTED_FILTER',
      /'visit:country_name'/,
    );
    await refused({ ...base, filters: [['is', 'visit:planet', ['Mars']]] }, 'UNKNOWN_DIMENSION', /'visit:planet'/);
    await refused(
      { ...base, include: { comparisons: { mode: 'previous_period' } } },
      'UNSUPPORTED_INCLUDE',
      /comparisons/,
    );
  });

  it('refuses filters nested deeper than 3, bad values and shapes', async () => {
    const leaf = ['is', 'visit:country', ['US']];
    await query({ ...base, filters: [['and', [['not', leaf]]]] }).then((r) => expect(r.status).toBe(200));
    await refused({ ...base, filters: [['and', [['not', ['not', leaf]]]]] }, 'FILTERS_TOO_DEEP', /at most 3/);
    await refused({ ...base, filters: [['is', 'visit:country', 'US']] }, 'INVALID_FILTER', /visit:country/);
    await refused({ ...base, filters: [['is', 'visit:country', [1]]] }, 'INVALID_FILTER', /strings/);
    await refused({ ...base, filters: ['is'] }, 'INVALID_FILTER', /Invalid filter/);
    await refused({ ...base, filters: [['is', 'time:day', ['2026-03-29']]] }, 'INVALID_FILTER', /date_range/);
    await refused({ ...base, date_range: '5d' }, 'INVALID_DATE_RANGE', /'"5d"'/);
    await refused({ ...base, date_range: ['2026-04-02', '2026-04-01'] }, 'INVALID_DATE_RANGE', /date_range/);
    await refused({ ...base, date_range: ['1999-12-31', '2000-01-02'] }, 'INVALID_DATE_RANGE', /2000-01-01/);
    await refused({ ...base, date_range: ['2026-04-01', 'tomorrow'] }, 'INVALID_DATE_RANGE', /ISO 8601/);
    await refused({ ...base, order_by: [['pageviews', 'desc']] }, 'INVALID_ORDER_BY', /pageviews/);
    await refused({ ...base, include: { time_labels: true } }, 'INVALID_QUERY', /time_labels/);
    await refused({ ...base, limit: 10 }, 'INVALID_QUERY', /limit/);
    await refused({ ...base, pagination: { limit: 0 } }, 'INVALID_QUERY', /pagination\.limit/);
    await refused({ metrics: ['visitors'], date_range: '7d' }, 'INVALID_QUERY', /site_id/);
    await refused(
      { ...base, date_range: '12mo', date: '2026-03-29', dimensions: ['time:day', 'event:page'] },
      'UNSUPPORTED_DIMENSIONS',
      /at most 31 time buckets/,
    );
    await refused(
      { ...base, date_range: ['2000-01-01', '2026-01-01'], dimensions: ['time:hour'] },
      'INVALID_DATE_RANGE',
      /more than 10000 time buckets/,
    );
    const notJson = await call('POST', '/api/v2/query', { rawBody: '{"site_id":', token: key });
    expect([notJson.status, notJson.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(typeof notJson.body.error).toBe('string');
  });

  it('never answers a hostile body with a 500', async () => {
    const bodies: unknown[] = [
      null,
      [],
      'x',
      { ...base, filters: [null] },
      { ...base, filters: [[]] },
      { ...base, filters: [['is', null, []]] },
      { ...base, filters: [['not']] },
      { ...base, filters: [['and', 'x']] },
      { ...base, filters: [['is', 'event:page', ['/'], null]] },
      { ...base, filters: [['__proto__', 'event:page', ['/']]] },
      { ...base, filters: [['is', 'constructor', ['/']]] },
      { ...base, metrics: ['constructor'] },
      { ...base, metrics: [] },
      { ...base, dimensions: ['__proto__'] },
      { ...base, order_by: [['__proto__', 'asc']] },
      { ...base, date_range: '__proto__' },
      { ...base, date_range: 'custom:2026-01-01,2026-01-02' },
      { ...base, date: '2026-13-01' },
      { ...base, date: '1999-12-31' },
      { ...base, date_range: ['0001-01-01T00:00:00Z', '2026-01-01T00:00:00Z'] },
      { ...base, date_range: ['2026-01-01T00:00:00Z'] },
      { ...base, site_id: `${'a'.repeat(200)}'; DROP TABLE websites; --` },
      { ...base, pagination: { limit: 1.5 } },
      { ...base, include: { total_rows: 'yes' } },
      { ...base, filters: [['is', 'event:props:plan', ['x'.repeat(500)]]], dimensions: ['event:props:a:b'] },
    ];
    for (const body of bodies) {
      const res = await query(body);
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(500);
      if (res.status !== 200) expect(typeof res.body.error).toBe('string');
    }
  });

  it('answers date-time ranges to the second', async () => {
    // 01:00–03:59:59 local on the 29th: B1 at 01:30 and B2 at 03:10 (the clocks skip 02:00).
    const res = await query({
      ...base,
      metrics: ['visitors', 'pageviews', 'events'],
      date_range: ['2026-03-29T01:00:00+01:00', '2026-03-29T03:59:59+02:00'],
    });
    expect(res.body.results[0].metrics).toEqual([1, 2, 3]);
    expect(res.body.query.date_range).toEqual(['2026-03-29T01:00:00+01:00', '2026-03-29T03:59:59+02:00']);
  });
});

describe('who may ask', () => {
  const body = { site_id: DOMAIN, metrics: ['visitors'], date_range: 'day', date: '2026-03-29' };

  it('a key as Bearer or X-API-Key, the site by domain or UUID, a signed-in user', async () => {
    expect((await query(body)).body.results[0].metrics).toEqual([2]);
    const byId = await query({ ...body, site_id: siteId.toUpperCase() });
    expect([byId.status, byId.body.query.site_id]).toEqual([200, DOMAIN]);
    const header = await call('POST', '/api/v2/query', { body, apiKey: key });
    expect(header.body.results[0].metrics).toEqual([2]);
    const signedIn = await query(body, user.token);
    expect(signedIn.body.results[0].metrics).toEqual([2]);
  });

  it('401 without or with a bad key, 404 for another team’s site, 403 for a site key elsewhere', async () => {
    const none = await call('POST', '/api/v2/query', { body });
    expect([none.status, none.body.code, typeof none.body.error]).toEqual([401, 'UNAUTHORIZED', 'string']);
    expect((await query(body, 'tmk_not-a-key')).status).toBe(401);

    const other = await registerUser(ctx, 'pro', 'other');
    const theirs = await createWebsite(ctx, other, 'other.example.com');
    const { key: theirKey } = await createApiKey(ctx, other);
    for (const site of [theirs.id, 'other.example.com', randomUUID(), 'nowhere.example.com']) {
      const res = await query({ ...body, site_id: site });
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
    }
    const wrongTeam = await query(body, theirKey);
    expect(wrongTeam.status).toBe(404);
    // The Stats API v2's per-minute window (pro: 30) and monthly quota, charged to that key's team.
    expect(wrongTeam.headers.get('x-ratelimit-limit')).toBe('30');
    expect(wrongTeam.headers.get('x-usage-limit')).toBe('10000');

    const { key: siteKey } = await createApiKey(ctx, other, 'site_access', theirs.id);
    const another = await createWebsite(ctx, other, 'another.example.com');
    const scoped = await query({ ...body, site_id: 'another.example.com' }, siteKey);
    expect([scoped.status, scoped.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await query({ ...body, site_id: another.id }, siteKey)).status).toBe(403);
    expect((await query({ ...body, site_id: 'other.example.com' }, siteKey)).status).toBe(200);
  });

  it('a domain two websites of the caller share is refused as ambiguous', async () => {
    await createWebsite(ctx, user, 'twice.example.com');
    await createWebsite(ctx, user, 'twice.example.com');
    const res = await query({ ...body, site_id: 'twice.example.com' });
    expect([res.status, res.body.code]).toEqual([400, 'AMBIGUOUS_SITE_ID']);
  });

  it('keys of a free-plan team are refused, as on the Stats API', async () => {
    const free = await registerUser(ctx, 'pro', 'free');
    await createWebsite(ctx, free, 'free.example.com');
    const { key: freeKey } = await createApiKey(ctx, free);
    await setTeamPlan(ctx.pool, free.teamId, 'free', 'free');
    const res = await query({ ...body, site_id: 'free.example.com' }, freeKey);
    expect([res.status, res.body.code]).toEqual([403, 'API_PAID_PLAN_REQUIRED']);
  });
});
