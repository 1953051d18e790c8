// Stats API v2 over HTTP with the channel, referrer, city and region breakdowns, week buckets, the metrics
// visits, views_per_visit and time_on_page, and filter groups; every answer checked against the OpenAPI
// document on the way (test/helpers/http.ts).
import { createApiKey, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let key: string;
let siteId: string;

/**
 * 10 March 2026, UTC: S1 (V1) from a Google search in Berlin on /a, engaged 20 s; S2 (V2) tagged fb /
 * paid_social without referrer in Munich (Bavaria) on /b then /a; S3 (V3) direct on /a without geo.
 * 3 visitors, 4 pageviews, 3 visits.
 */
async function fixture(): Promise<void> {
  const row = (over: Parameters<typeof eventRow>[1]) => eventRow(siteId, over);
  const at = (minute: number) => `2026-03-10T10:${String(minute).padStart(2, '0')}:00Z`;
  await storeRows(ctx.clickhouse, [
    row({
      visitor_id: 'V1',
      session_id: 'S1',
      pathname: '/a',
      source_name: 'Google',
      referrer_domain: 'google.com',
      city: 'Berlin',
      region: 'Land Berlin',
      ts: at(0),
    }),
    row({
      visitor_id: 'V1',
      session_id: 'S1',
      type: 'engagement',
      source_name: '',
      pathname: '/a',
      engagement_ms: 20_000,
      ts: at(1),
    }),
    row({
      visitor_id: 'V2',
      session_id: 'S2',
      pathname: '/b',
      source_name: 'fb',
      utm_source: 'fb',
      utm_medium: 'paid_social',
      city: 'Munich',
      region: 'Bavaria',
      ts: at(0),
    }),
    row({ visitor_id: 'V2', session_id: 'S2', pathname: '/a', city: 'Munich', region: 'Bavaria', ts: at(2) }),
    row({ visitor_id: 'V3', session_id: 'S3', pathname: '/a', ts: at(0) }),
  ]);
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  const user = await registerUser(ctx, 'pro', 'dims');
  const res = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'UTC' },
  });
  siteId = res.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  await fixture();
});
afterAll(() => ctx.close());

const get = (version: 'v1' | 'v2', endpoint: string, params: Record<string, string>) =>
  call(
    'GET',
    `/api/external/${version}/stats/${endpoint}?${new URLSearchParams({ site_id: siteId, period: 'custom:2026-03-10,2026-03-16', ...params })}`,
    { apiKey: key },
  );

describe('Stats API v2', () => {
  it.each([
    [
      'visit:channel',
      'channel',
      [
        ['Direct', 1],
        ['Organic Search', 1],
        ['Paid Social', 1],
      ],
    ],
    [
      'visit:referrer',
      'referrer',
      [
        ['Direct / None', 2],
        ['google.com', 1],
      ],
    ],
    [
      'visit:city',
      'city',
      [
        ['Berlin', 1],
        ['Munich', 1],
      ],
    ],
    [
      'visit:region',
      'region',
      [
        ['Bavaria', 1],
        ['Land Berlin', 1],
      ],
    ],
  ])('breaks down by %s', async (property, name, expected) => {
    const res = await get('v2', 'breakdown', { metrics: 'visitors', property });
    expect(res.status).toBe(200);
    expect(res.body.data.results).toEqual(expected.map(([value, visitors]) => ({ [name]: value, visitors })));
  });

  it('answers visits, views per visit and time on page', async () => {
    const res = await get('v2', 'aggregate', { metrics: 'visits,views_per_visit,time_on_page' });
    expect(res.status).toBe(200);
    // 4 pageviews over 3 visits; 20 s engaged over 4 pageviews.
    expect(res.body.data.results).toEqual({
      visits: { value: 3 },
      views_per_visit: { value: 1.33 },
      time_on_page: { value: 5 },
    });
  });

  it('buckets by week, labelled by Monday', async () => {
    const res = await get('v2', 'timeseries', { metrics: 'visitors', interval: 'week' });
    expect(res.status).toBe(200);
    expect(res.body.data.results).toEqual([
      { date: '2026-03-09', visitors: 3 },
      { date: '2026-03-16', visitors: 0 },
    ]);
    expect(res.body.data.meta.interval).toBe('week');
  });

  it('filters by a group, and names it in filters_applied', async () => {
    const filters = JSON.stringify([
      [
        'or',
        [
          ['is', 'city', ['Berlin']],
          ['is', 'channel', ['Direct']],
        ],
      ],
    ]);
    const res = await get('v2', 'aggregate', { metrics: 'visitors,visits', filters });
    expect(res.status).toBe(200);
    expect(res.body.data.results).toEqual({ visitors: { value: 2 }, visits: { value: 2 } }); // S1, S3
    expect(res.body.data.meta.filters_applied).toEqual([
      {
        operator: 'or',
        clauses: [
          { key: 'city', operator: 'is', values: ['Berlin'] },
          { key: 'channel', operator: 'is', values: ['Direct'] },
        ],
      },
    ]);
  });

  it('refuses groups nested too deep and unsupported regular expressions with a code naming the problem', async () => {
    const deep = JSON.stringify([['not', ['or', [['and', [['not', ['is', 'city', ['Berlin']]]]]]]]]);
    const tooDeep = await get('v2', 'aggregate', { metrics: 'visitors', filters: deep });
    expect([tooDeep.status, tooDeep.body.error.code]).toEqual([400, 'FILTER_TOO_DEEP']);
    const regex = await get('v2', 'aggregate', {
      metrics: 'visitors',
      filters: JSON.stringify([['matches', 'page', ['(?<=a)b']]]),
    });
    expect([regex.status, regex.body.error.code]).toEqual([400, 'INVALID_REGEX']);
    expect(regex.body.error.message).toMatch(/look-around/);
  });

  it('leaves v1 as it was', async () => {
    const res = await get('v1', 'breakdown', { metrics: 'visitors', property: 'visit:channel' });
    expect([res.status, res.body.error.code]).toEqual([400, 'INVALID_PROPERTY']);
    const week = await get('v1', 'timeseries', { metrics: 'visitors', interval: 'week' });
    expect([week.status, week.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});
