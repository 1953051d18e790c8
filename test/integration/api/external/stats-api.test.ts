// The Stats API over HTTP, on the DST fixture of test/helpers/statsFixture.ts (Europe/Berlin, 29 March 2026).
import { randomUUID } from 'node:crypto';
import { createApiKey, createWebsite, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { insertDstFixture } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let key: string;
let siteId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  const user = await registerUser(ctx, 'pro', 'stats');
  const res = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'Europe/Berlin' },
  });
  siteId = res.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  await insertDstFixture(ctx.clickhouse, siteId);
});
afterAll(() => ctx.close());

const get = (path: string, apiKey = key) => call('GET', `/api/external/v1/stats/${path}`, { apiKey });
const q = (params: Record<string, string>) => new URLSearchParams({ site_id: siteId, ...params }).toString();
const ALL = 'visitors,pageviews,visit_duration,bounce_rate,events';

describe('aggregate', () => {
  it('computes all five metrics for the local day, events approximated by pageviews', async () => {
    const res = await get(`aggregate?${q({ period: 'day', date: '2026-03-29', metrics: ALL })}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      results: {
        visitors: { value: 2 },
        pageviews: { value: 3 },
        visit_duration: { value: 640 },
        bounce_rate: { value: 33 },
        events: { value: 3 },
      },
      meta: {
        period: 'day',
        period_start: '2026-03-28T23:00:00.000Z',
        period_end: '2026-03-29T22:00:00.000Z',
        filters_applied: [],
      },
    });
  });

  it('with filters computes only visitors (V1 limitation) and says so', async () => {
    const res = await get(
      `aggregate?${q({ period: 'day', date: '2026-03-29', metrics: ALL, filters: 'country==US,FR;browser!=Chrome' })}`,
    );
    expect(res.body.data.results).toEqual({
      visitors: { value: 1 },
      pageviews: { value: null },
      visit_duration: { value: null },
      bounce_rate: { value: null },
      events: { value: null },
    });
    expect(res.body.data.meta.filters_applied).toEqual([
      { key: 'country', operator: 'is', values: ['US', 'FR'] },
      { key: 'browser', operator: 'is_not', values: ['Chrome'] },
    ]);
    expect(res.body.data.meta.note).toMatch(/V1 limitation/);
  });
});

describe('timeseries', () => {
  it('has one row per local hour of the DST day, zero-filled', async () => {
    const res = await get(
      `timeseries?${q({ period: 'day', date: '2026-03-29', metrics: 'pageviews,visitors', interval: 'hour' })}`,
    );
    expect(res.status).toBe(200);
    const rows = res.body.data.results as { date: string; pageviews: number; visitors: number }[];
    expect(rows).toHaveLength(23);
    expect(rows.map((r) => r.date)).not.toContain('2026-03-29 02:00:00');
    expect(rows.filter((r) => r.pageviews > 0)).toEqual([
      { date: '2026-03-29 01:00:00', pageviews: 1, visitors: 1 },
      { date: '2026-03-29 03:00:00', pageviews: 1, visitors: 1 },
      { date: '2026-03-29 23:00:00', pageviews: 1, visitors: 1 },
    ]);
    expect(res.body.data.meta.interval).toBe('hour');
  });

  it('by day over 7 days and by month over 6 months', async () => {
    const days = await get(`timeseries?${q({ period: '7d', date: '2026-03-29', metrics: 'visitors' })}`);
    expect(days.body.data.results).toEqual([
      { date: '2026-03-23', visitors: 0 },
      { date: '2026-03-24', visitors: 0 },
      { date: '2026-03-25', visitors: 0 },
      { date: '2026-03-26', visitors: 0 },
      { date: '2026-03-27', visitors: 0 },
      { date: '2026-03-28', visitors: 1 },
      { date: '2026-03-29', visitors: 2 },
    ]);
    const months = await get(
      `timeseries?${q({ period: '6mo', date: '2026-03-29', metrics: 'pageviews', interval: 'month' })}`,
    );
    expect(months.body.data.results.map((r: { date: string }) => r.date)).toEqual([
      '2025-10-01',
      '2025-11-01',
      '2025-12-01',
      '2026-01-01',
      '2026-02-01',
      '2026-03-01',
    ]);
    expect(months.body.data.results[5]).toEqual({ date: '2026-03-01', pageviews: 6 });
  });
});

describe('breakdown', () => {
  it('sorts by visitors, ties by value, and paginates', async () => {
    const res = await get(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors,pageviews,bounce_rate', property: 'visit:country' })}`,
    );
    expect(res.body.data.results).toEqual([
      { country: 'DE', visitors: 1, pageviews: 1, bounce_rate: 0 },
      { country: 'US', visitors: 1, pageviews: 2, bounce_rate: 50 },
    ]);
    expect(res.body.data.meta.pagination).toEqual({ page: 1, limit: 100, total: 2, has_more: false });
    const second = await get(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'pageviews', property: 'event:page', limit: '1', page: '1' })}`,
    );
    expect(second.body.data.results).toEqual([{ page: '/a', pageviews: 2 }]);
    expect(second.body.data.meta.pagination).toEqual({ page: 1, limit: 1, total: 2, has_more: true });
    expect(second.body.data.meta.property).toBe('event:page');
  });
});

describe('errors', () => {
  it('answers each bad request with its code in the error envelope', async () => {
    const missing = await get('aggregate?period=7d&metrics=visitors');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ success: false, error: { code: 'MISSING_SITE_ID' } });
    expect((await get(`breakdown?${q({ period: '7d', metrics: 'visitors' })}`)).body.error.code).toBe(
      'MISSING_PROPERTY',
    );
    expect(
      (await get(`timeseries?${q({ period: '7d', metrics: 'visitors', interval: 'hour' })}`)).body.error.code,
    ).toBe('INTERVAL_PERIOD_MISMATCH');
    expect(
      (await get(`aggregate?${q({ period: '7d', metrics: 'visitors', filters: 'planet==mars' })}`)).body.error.code,
    ).toBe('UNKNOWN_FILTER_KEY');
  });

  it('404 for an unknown or another team’s site, 403 for a site key elsewhere, 401 without a key', async () => {
    expect((await get(`aggregate?${q({ period: '7d', metrics: 'visitors', site_id: randomUUID() })}`)).status).toBe(
      404,
    );
    const other = await registerUser(ctx, 'pro', 'other');
    const theirs = await createWebsite(ctx, other, 'other.example.com');
    expect((await get(`aggregate?${q({ period: '7d', metrics: 'visitors', site_id: theirs.id })}`)).status).toBe(404);
    const { key: siteKey } = await createApiKey(ctx, other, 'site_access', theirs.id);
    const another = await createWebsite(ctx, other, 'another.example.com');
    const scoped = await get(`aggregate?${q({ period: '7d', metrics: 'visitors', site_id: another.id })}`, siteKey);
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe('FORBIDDEN');
    expect(
      (await call('GET', `/api/external/v1/stats/aggregate?${q({ period: '7d', metrics: 'visitors' })}`)).status,
    ).toBe(401);
  });
});

describe('v2', () => {
  const get2 = (path: string) => call('GET', `/api/external/v2/stats/${path}`, { apiKey: key });

  it('computes every metric under filters, JSON filters included, and counts events truly', async () => {
    const plain = await get2(`aggregate?${q({ period: 'day', date: '2026-03-29', metrics: ALL })}`);
    expect(plain.body.data.results.events).toEqual({ value: 4 }); // 3 pageviews + Signup
    expect(plain.body.data.meta.note).toBeUndefined();
    // US: B's events (B1, B2 and Signup); sessions with a US pageview: B1 (0 s, bounce) and B2 (120 s).
    const us = await get2(
      `aggregate?${q({ period: 'day', date: '2026-03-29', metrics: ALL, filters: JSON.stringify([['is', 'country', ['US']]]) })}`,
    );
    expect(us.body.data.results).toEqual({
      visitors: { value: 1 },
      pageviews: { value: 2 },
      visit_duration: { value: 60 },
      bounce_rate: { value: 50 },
      events: { value: 3 },
    });
    // contains is case-insensitive: pages containing "/C" → B2's pageview; its session lasted 120 s.
    const c = await get2(
      `aggregate?${q({ period: 'day', date: '2026-03-29', metrics: ALL, filters: JSON.stringify([['contains', 'page', ['/C']]]) })}`,
    );
    expect(c.body.data.results).toEqual({
      visitors: { value: 1 },
      pageviews: { value: 1 },
      visit_duration: { value: 120 },
      bounce_rate: { value: 0 },
      events: { value: 1 },
    });
    const v1Json = await get(
      `aggregate?${q({ period: 'day', metrics: 'visitors', filters: JSON.stringify([['is', 'country', ['US']]]) })}`,
    );
    expect(v1Json.status).toBe(400);
  });

  it('compares with the previous period of the same length', async () => {
    // The previous period is the whole local day before, 28 March (23:00Z on the 27th to 23:00Z on the 28th):
    // A1 (2 pageviews, 600 s).
    const res = await get2(
      `aggregate?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors,pageviews,visit_duration,bounce_rate', compare: 'previous_period' })}`,
    );
    expect(res.body.data.results).toEqual({
      visitors: { value: 2, change: 100 },
      pageviews: { value: 3, change: 50 },
      visit_duration: { value: 640, change: 7 },
      bounce_rate: { value: 33, change: null },
    });
    expect(res.body.data.meta.compare).toEqual({
      period_start: '2026-03-27T23:00:00.000Z',
      period_end: '2026-03-28T23:00:00.000Z',
    });
    expect(
      (await get2(`aggregate?${q({ period: 'day', metrics: 'visitors', compare: 'last_year' })}`)).body.error.code,
    ).toBe('VALIDATION_ERROR');
    const onTimeseries = await get2(
      `timeseries?${q({ period: 'day', metrics: 'visitors', compare: 'previous_period' })}`,
    );
    expect([onTimeseries.status, onTimeseries.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('refuses a parameter given twice instead of answering for one copy of it', async () => {
    // Unfiltered, this day has 2 visitors; reading either copy alone would answer 1 or 2 without a word.
    const twice = await get2(
      `aggregate?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors' })}&filters=${encodeURIComponent(JSON.stringify([['is', 'country', ['US']]]))}&filters=${encodeURIComponent(JSON.stringify([['is', 'country', ['DE']]]))}`,
    );
    expect(twice.status).toBe(400);
    expect(twice.body.error.code).toBe('VALIDATION_ERROR');
    expect(twice.body.error.message).toMatch(/filters/);
  });

  it('timeseries under a filter computes session metrics per local hour', async () => {
    const res = await get2(
      `timeseries?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors,bounce_rate', interval: 'hour', filters: JSON.stringify([['is', 'country', ['US']]]) })}`,
    );
    expect(res.body.data.results).toHaveLength(23);
    expect(res.body.data.results.filter((r: { visitors: number }) => r.visitors > 0)).toEqual([
      { date: '2026-03-29 01:00:00', visitors: 1, bounce_rate: 100 },
      { date: '2026-03-29 03:00:00', visitors: 1, bounce_rate: 0 },
    ]);
  });

  it('paginates a breakdown to its last page', async () => {
    const p2 = await get2(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors', property: 'visit:country', limit: '1', page: '2' })}`,
    );
    expect(p2.body.data.results).toEqual([{ country: 'US', visitors: 1 }]);
    expect(p2.body.data.meta.pagination).toEqual({ page: 2, limit: 1, total: 2, has_more: false });
    const p3 = await get2(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors', property: 'visit:country', limit: '1', page: '3' })}`,
    );
    expect(p3.body.data.results).toEqual([]);
  });

  it('breaks down by entry and exit page over whole sessions', async () => {
    const entry = await get2(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors,pageviews,bounce_rate', property: 'visit:entry_page' })}`,
    );
    expect(entry.body.data.results).toEqual([
      { entry_page: '/a', visitors: 2, pageviews: 3, bounce_rate: 50 },
      { entry_page: '/c', visitors: 1, pageviews: 1, bounce_rate: 0 },
    ]);
    const exit = await get2(
      `breakdown?${q({ period: 'day', date: '2026-03-29', metrics: 'visitors', property: 'visit:exit_page' })}`,
    );
    expect(exit.body.data.results).toEqual([
      { exit_page: '/a', visitors: 2 },
      { exit_page: '/c', visitors: 1 },
    ]);
    expect(
      (await get(`breakdown?${q({ period: 'day', metrics: 'visitors', property: 'visit:entry_page' })}`)).body.error
        .code,
    ).toBe('INVALID_PROPERTY');
  });
});
