// External API v1 read side over HTTP: the OpenAPI document, hand-computed analytics on the DST fixture,
// every endpoint's statuses, the authorization matrix, rate limits, quota and usage. Every response these
// tests see is also checked against the OpenAPI document by test/helpers/http.ts.

import { randomUUID } from 'node:crypto';
import { validate } from '@readme/openapi-parser';
import { revokeApiKey } from '../../../../lib/accounts/apiKeys';
import { setTeamLimits, setTeamPlan } from '../../../../lib/accounts/teams';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { withDateAt } from '../../../helpers/clock';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { checkAgainstOpenApi } from '../../../helpers/openapiValidate';
import { eventRow, insertDstFixture, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let site: string; // Europe/Berlin, the DST fixture
let other: string; // the same team's second website
let otherCode: string;
let fullKey: string;
let siteKey: string;
let revokedKey: string;
let otherTeamKey: string;
let freeKey: string;
let freeSite: string;

const V1 = '/api/external/v1';
/** 2026-03-31 12:00 in Berlin: "7d" is 25–31 March, which holds the whole fixture. */
const NOW = Date.parse('2026-03-31T10:00:00Z');

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'ext-owner');
  // Rate limits get their own test team; here they would only get in the way.
  await setTeamLimits(ctx.pool, owner.teamId, { rpm: null, monthly: null });
  const created = await call('POST', '/api/websites', {
    token: owner.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'Europe/Berlin' },
  });
  site = created.body.data.website.id;
  ({ id: other, tracking_code: otherCode } = await createWebsite(ctx, owner, 'other.example.com'));
  fullKey = (await createApiKey(ctx, owner)).key;
  siteKey = (await createApiKey(ctx, owner, 'site_access', site)).key;
  const revoked = await createApiKey(ctx, owner);
  await revokeApiKey(ctx.pool, owner.teamId, revoked.id);
  revokedKey = revoked.key;

  const stranger = await registerUser(ctx, 'pro', 'ext-stranger');
  await setTeamLimits(ctx.pool, stranger.teamId, { rpm: null, monthly: null });
  otherTeamKey = (await createApiKey(ctx, stranger)).key;

  // A key made while paid keeps existing when its team drops to free, and stops working.
  const lapsed = await registerUser(ctx, 'pro', 'ext-free');
  freeSite = (await createWebsite(ctx, lapsed, 'free.example.com')).id;
  freeKey = (await createApiKey(ctx, lapsed)).key;
  await setTeamPlan(ctx.pool, lapsed.teamId, 'free', 'free');

  await insertDstFixture(ctx.clickhouse, site);
});
afterAll(() => ctx.close());

/** `null` sends no credential at all. */
const get = (path: string, apiKey: string | null = fullKey) =>
  call('GET', `${V1}${path}`, { apiKey: apiKey ?? undefined });

/** Runs `fn` with Date (only) pinned to NOW and moving on in real time; network timers stay real. */
const atNow = <T>(fn: () => Promise<T>) => withDateAt(NOW, fn, true);

describe('the OpenAPI document', () => {
  it('is public, cached for 5 minutes, OpenAPI 3.1.0 with API version 1.0.0, and valid', async () => {
    const res = await call('GET', `${V1}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    const result = await validate(structuredClone(res.body));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const beside = await call('GET', '/api/openapi.json');
    expect(beside.status).toBe(200);
    expect(beside.headers.get('cache-control')).toBe('public, max-age=300');
    expect(beside.body).toEqual(res.body);
  });

  it('covers ingestion and the dashboard APIs too, each with its credentials', async () => {
    const { body: doc } = await call('GET', '/api/openapi.json');
    const operation = (method: string, path: string) => doc.paths[path]?.[method];
    const jwt = [{ BearerJwt: [] }];
    const apiKey = [{ ApiKeyHeader: [] }, { BearerApiKey: [] }];
    expect(operation('post', '/api/v1/events').security).toEqual(apiKey);
    expect(operation('post', '/api/v1/events').responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/IngestResult',
    );
    for (const path of ['/api/events/{trackingCode}', '/api/track/{trackingCode}', '/e/{trackingCode}']) {
      expect(operation('post', path).security).toEqual([]);
      expect(Object.keys(operation('post', path).requestBody.content).sort()).toEqual([
        'application/json',
        'text/plain',
      ]);
    }
    expect(operation('post', '/api/auth/login').security).toEqual([]);
    expect(operation('post', '/api/auth/token').security).toEqual([{ SessionCookie: [] }]);
    for (const [method, path] of [
      ['get', '/api/users/me'],
      ['put', '/api/users/me/password'],
      ['post', '/api/websites'],
      ['get', '/api/websites/{websiteId}'],
      ['put', '/api/websites/{websiteId}/general'],
      ['put', '/api/websites/{websiteId}/tracking'],
      ['get', '/api/websites/{websiteId}/snippet'],
      ['post', '/api/websites/{websiteId}/goals'],
      ['post', '/api/websites/{websiteId}/exclusions/ip'],
      ['put', '/api/websites/{websiteId}/team-members/{memberId}'],
      ['put', '/api/websites/{websiteId}/errors/{groupId}'],
      ['post', '/api/teams/{teamId}/api-keys'],
      ['get', '/api/teams/{teamId}/api-keys/{keyId}/activity'],
      ['get', '/api/teams/{teamId}/usage'],
      ['post', '/api/teams/{teamId}/invites'],
    ]) {
      expect(operation(method, path)?.security).toEqual(jwt);
    }
    expect(operation('get', '/api/invites/{token}').security).toEqual([]);
  });

  it('documents every endpoint, both security schemes, the limits and the error envelope', async () => {
    const { body: doc } = await call('GET', `${V1}/openapi.json`);
    for (const path of [
      '/v1/usage',
      '/v1/websites',
      '/v1/websites/{websiteId}',
      '/v1/analytics/{websiteId}',
      '/v1/analytics/{websiteId}/visitors',
      '/v1/analytics/{websiteId}/pages',
      '/v1/analytics/{websiteId}/countries',
      '/v1/analytics/{websiteId}/technology',
      '/v1/heatmaps/{websiteId}/pages',
      '/v1/replays/{websiteId}/sessions',
      '/v1/errors/{websiteId}/groups',
      '/v1/track/realtime/{websiteId}',
      '/v1/stats/aggregate',
      '/v1/stats/timeseries',
      '/v1/stats/breakdown',
      '/v2/stats/breakdown',
    ]) {
      expect(doc.paths[`/api/external${path}`]?.get).toBeDefined();
    }
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      'ApiKeyHeader',
      'BearerApiKey',
      'BearerJwt',
      'SessionCookie',
      'ShareToken',
    ]);
    expect(doc.components.securitySchemes.ApiKeyHeader).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    const visitorsLimit = doc.paths['/api/external/v1/analytics/{websiteId}/visitors'].get.parameters.find(
      (p: { name: string }) => p.name === 'limit',
    );
    expect(visitorsLimit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    const status = doc.paths['/api/external/v1/errors/{websiteId}/groups'].get.parameters.find(
      (p: { name: string }) => p.name === 'status',
    );
    expect(status.schema.enum).toEqual(['unresolved', 'resolved', 'ignored']);
    const range = doc.paths['/api/external/v1/analytics/{websiteId}/pages'].get.parameters.find(
      (p: { name: string }) => p.name === 'range',
    );
    expect(range.schema.enum).toEqual(['24h', '7d', '30d', '90d', '1y']);
    expect(
      doc.paths['/api/external/v1/analytics/{websiteId}'].get.responses['404'].content['application/json'].schema.$ref,
    ).toBe('#/components/schemas/ErrorEnvelope');
    expect(doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining([
        'VALIDATION_ERROR',
        'UNAUTHORIZED',
        'FORBIDDEN',
        'API_PAID_PLAN_REQUIRED',
        'NOT_FOUND',
        'INTERNAL_ERROR',
      ]),
    );
  });

  it('the response check in the test client refuses what the document does not describe', () => {
    const url = `${V1}/analytics/${site}/pages`;
    expect(() =>
      checkAgainstOpenApi('GET', url, 200, {
        success: true,
        data: { pages: [{ url: '/a', views: -1, avg_value_score: 1 }] },
        timestamp: new Date().toISOString(),
      }),
    ).toThrow(/does not match/);
    expect(() => checkAgainstOpenApi('GET', url, 418, {})).toThrow(/does not list/);
    expect(() =>
      checkAgainstOpenApi('GET', url, 200, { success: true, data: { pages: [] }, timestamp: new Date().toISOString() }),
    ).not.toThrow();
  });
});

describe('analytics on the hand-computed DST fixture (Europe/Berlin, now = 31 March 2026 12:00)', () => {
  it('overview: summary and one daily row per local day, the session on the day it began', async () => {
    const res = await atNow(() => get(`/analytics/${site}?range=7d`));
    expect(res.status).toBe(200);
    const zero = (date: string) => ({ date, website_id: site, total_visitors: 0, unique_visitors: 0, page_views: 0 });
    expect(res.body.data).toEqual({
      website: { id: site, domain: 'shop.example.com', name: 'Shop' },
      time_range: '7d',
      date_range: {
        start: '2026-03-25',
        end: '2026-03-31',
        startDateTime: '2026-03-24T23:00:00.000Z',
        endDateTime: '2026-03-31T22:00:00.000Z',
      },
      // A1, B1, B2 and C1; A, B and C; six pageviews.
      summary: { total_visitors: 4, total_page_views: 6, unique_visitors: 3 },
      daily_stats: [
        zero('2026-03-25'),
        zero('2026-03-26'),
        zero('2026-03-27'),
        { date: '2026-03-28', website_id: site, total_visitors: 1, unique_visitors: 1, page_views: 2 },
        // B1, B2, C1 began on the 29th; C's second pageview (00:20) is on the 30th, its visit is not.
        { date: '2026-03-29', website_id: site, total_visitors: 3, unique_visitors: 2, page_views: 3 },
        { date: '2026-03-30', website_id: site, total_visitors: 0, unique_visitors: 1, page_views: 1 },
        zero('2026-03-31'),
      ],
    });
  });

  it('the default range is 7d, timeRange is an alias, range wins over it, and 24h/today see nothing here', async () => {
    const [byDefault, alias, both, day, today] = await atNow(() =>
      Promise.all([
        get(`/analytics/${site}`),
        get(`/analytics/${site}?timeRange=30d`),
        get(`/analytics/${site}?range=7d&timeRange=30d`),
        get(`/analytics/${site}?range=24h`),
        get(`/analytics/${site}?timeRange=today`),
      ]),
    );
    expect(byDefault.body.data.time_range).toBe('7d');
    expect(alias.body.data.time_range).toBe('30d');
    expect(alias.body.data.daily_stats).toHaveLength(30);
    expect(alias.body.data.summary).toEqual({ total_visitors: 4, total_page_views: 6, unique_visitors: 3 });
    expect(both.body.data.time_range).toBe('7d');
    expect(day.body.data.summary).toEqual({ total_visitors: 0, total_page_views: 0, unique_visitors: 0 });
    // the last 24 hours up to the request: now has moved on by a few milliseconds
    const { startDateTime, endDateTime, ...days } = day.body.data.date_range;
    expect(days).toEqual({ start: '2026-03-30', end: '2026-03-31' });
    expect(Date.parse(endDateTime) - Date.parse(startDateTime)).toBe(86_400_000);
    expect(Date.parse(endDateTime) - NOW).toBeLessThan(10_000);
    expect(today.body.data.daily_stats).toEqual([
      { date: '2026-03-31', website_id: site, total_visitors: 0, unique_visitors: 0, page_views: 0 },
    ]);
  });

  it('visitors: one record per visit, newest first, value scores per DESIGN §3, paginated', async () => {
    const res = await atNow(() => get(`/analytics/${site}/visitors?range=7d`));
    expect(res.status).toBe(200);
    const common = { city: null, device_type: 'desktop', os: 'Linux', referrer: null };
    expect(res.body.data.visitors).toEqual([
      {
        id: 'C1',
        visitor_id: 'C',
        country_code: 'DE',
        country_name: 'Germany',
        browser: 'Chrome',
        value_score: 20,
        visited_at: '2026-03-29T21:50:00.000Z',
        landing_page: '/a',
        had_interaction: false,
        ...common,
      },
      // one pageview and a custom event: 10 + 15 for the interaction
      {
        id: 'B2',
        visitor_id: 'B',
        country_code: 'US',
        country_name: 'United States',
        browser: 'Firefox',
        value_score: 25,
        visited_at: '2026-03-29T01:10:00.000Z',
        landing_page: '/c',
        had_interaction: true,
        ...common,
      },
      {
        id: 'B1',
        visitor_id: 'B',
        country_code: 'US',
        country_name: 'United States',
        browser: 'Firefox',
        value_score: 10,
        visited_at: '2026-03-29T00:30:00.000Z',
        landing_page: '/a',
        had_interaction: false,
        ...common,
      },
      {
        id: 'A1',
        visitor_id: 'A',
        country_code: 'DE',
        country_name: 'Germany',
        browser: 'Chrome',
        value_score: 20,
        visited_at: '2026-03-28T22:30:00.000Z',
        landing_page: '/a',
        had_interaction: false,
        ...common,
      },
    ]);
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, has_more: false });
    const page = await atNow(() => get(`/analytics/${site}/visitors?range=7d&limit=2&offset=1`));
    expect(page.body.data.visitors.map((v: { id: string }) => v.id)).toEqual(['B2', 'B1']);
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 1, has_more: true });
    const last = await atNow(() => get(`/analytics/${site}/visitors?range=7d&limit=2&offset=2`));
    expect(last.body.data.pagination.has_more).toBe(false);
  });

  it('visitors: a page filled by the last day alone, and one reaching back further, agree with each other', async () => {
    const lister = await registerUser(ctx, 'pro', 'ext-visits');
    const w = (await createWebsite(ctx, lister, 'visits.example.com')).id;
    const listerKey = (await createApiKey(ctx, lister)).key;
    const at = (minutesAgo: number) =>
      new Date(Math.floor(Date.now() / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();
    // five visits in the last minutes of today (UTC), newest first: v0 … v4
    const rows = [0, 1, 2, 3, 4].map((i) =>
      eventRow(w, { visitor_id: `p${i}`, session_id: `v${i}`, pathname: `/${i}`, ts: at(i + 1) }),
    );
    await storeRows(ctx.clickhouse, rows);
    const ids = async (q: string) => {
      const res = await get(`/analytics/${w}/visitors?range=7d&${q}`, listerKey);
      return { ids: res.body.data.visitors.map((v: { id: string }) => v.id), more: res.body.data.pagination.has_more };
    };
    expect(await ids('limit=2')).toEqual({ ids: ['v0', 'v1'], more: true });
    expect(await ids('limit=2&offset=2')).toEqual({ ids: ['v2', 'v3'], more: true });
    expect(await ids('limit=2&offset=4')).toEqual({ ids: ['v4'], more: false });
    expect(await ids('limit=10')).toEqual({ ids: ['v0', 'v1', 'v2', 'v3', 'v4'], more: false });
  });

  it('pages: views, and the mean score of the visits that viewed each page', async () => {
    const res = await atNow(() => get(`/analytics/${site}/pages?range=7d`));
    // /a: A1 (20), B1 (10), C1 (20) → 16.7; /b: A1; /c: B2. Ties in views by url.
    expect(res.body.data.pages).toEqual([
      { url: '/a', views: 4, avg_value_score: 16.7 },
      { url: '/b', views: 1, avg_value_score: 20 },
      { url: '/c', views: 1, avg_value_score: 25 },
    ]);
    const one = await atNow(() => get(`/analytics/${site}/pages?range=7d&limit=1`));
    expect(one.body.data.pages).toHaveLength(1);
  });

  it('countries: visitors with names, and the mean visit score', async () => {
    const res = await atNow(() => get(`/analytics/${site}/countries?range=30d`));
    expect(res.body.data.countries).toEqual([
      { country_code: 'DE', country_name: 'Germany', visitors: 2, avg_value_score: 20 },
      { country_code: 'US', country_name: 'United States', visitors: 1, avg_value_score: 17.5 },
    ]);
  });

  it('technology: visitors per device, browser and OS with percentages of all visitors', async () => {
    const res = await atNow(() => get(`/analytics/${site}/technology?range=1y`));
    expect(res.body.data).toEqual({
      devices: [{ name: 'desktop', count: 3, percentage: 100 }],
      browsers: [
        { name: 'Chrome', count: 2, percentage: 66.7 },
        { name: 'Firefox', count: 1, percentage: 33.3 },
      ],
      operating_systems: [{ name: 'Linux', count: 3, percentage: 100 }],
      total_visitors: 3,
    });
  });
});

describe('websites, usage and browser-data endpoints', () => {
  it('lists the team’s websites for a full key and only its own for a site key', async () => {
    const full = await get('/websites');
    expect(full.body.data.total).toBe(2);
    expect(full.body.data.websites.map((w: { id: string }) => w.id).sort()).toEqual([site, other].sort());
    expect(Object.keys(full.body.data.websites[0]).sort()).toEqual([
      'created_at',
      'domain',
      'id',
      'is_active',
      'name',
      'team_id',
      'tracking_code',
    ]);
    const scoped = await get('/websites', siteKey);
    expect(scoped.body.data).toEqual({
      websites: [expect.objectContaining({ id: site, team_id: owner.teamId })],
      total: 1,
    });
  });

  it('gives the full website record', async () => {
    const res = await get(`/websites/${site}`);
    expect(res.body.data.website).toMatchObject({
      id: site,
      domain: 'shop.example.com',
      user_id: owner.id,
      team_id: owner.teamId,
      settings: { track_outbound_links: true, track_downloads: true, session_replay: false, heatmaps: false },
    });
  });

  it('reports error groups by last occurrence, with the status filter following PUT', async () => {
    const insert = (fingerprint: string, last: string) =>
      ctx.pool.query(
        `INSERT INTO error_groups (website_id, fingerprint, message, type, occurrence_count, affected_users_count, first_seen_at, last_seen_at)
         VALUES ($1, $2, 'x is undefined', 'TypeError', 3, 2, '2026-03-01T00:00:00Z', $3) RETURNING id`,
        [site, fingerprint, last],
      );
    const older = (await insert('fp-older', '2026-03-10T00:00:00Z')).rows[0].id as string;
    const newer = (await insert('fp-newer', '2026-03-20T00:00:00Z')).rows[0].id as string;
    const all = await get(`/errors/${site}/groups`);
    expect(all.body.data.total).toBe(2);
    expect(all.body.data.error_groups.map((g: { id: string }) => g.id)).toEqual([newer, older]);
    expect(all.body.data.error_groups[0]).toMatchObject({
      fingerprint: 'fp-newer',
      status: 'unresolved',
      occurrence_count: 3,
      affected_users_count: 2,
      type: 'TypeError',
    });

    const put = await call('PUT', `/api/websites/${site}/errors/${older}`, {
      token: owner.token,
      body: { status: 'resolved' },
    });
    expect(put.status).toBe(200);
    const resolved = await get(`/errors/${site}/groups?status=resolved`);
    expect(resolved.body.data).toMatchObject({ total: 1, error_groups: [{ id: older, status: 'resolved' }] });
    const unresolved = await get(`/errors/${site}/groups?status=unresolved&limit=1`);
    expect(unresolved.body.data).toMatchObject({ total: 1, error_groups: [{ id: newer }] });
    expect((await get(`/errors/${site}/groups?status=ignored`)).body.data).toEqual({ error_groups: [], total: 0 });
  });

  it('answers heatmap pages, replay sessions and realtime for a site without such data', async () => {
    expect((await get(`/heatmaps/${site}/pages`)).body.data).toEqual({ pages: [] });
    expect((await get(`/replays/${site}/sessions`)).body.data).toEqual({
      sessions: [],
      pagination: { limit: 50, offset: 0, has_more: false },
    });
    const live = await get(`/track/realtime/${other}`);
    expect(live.body.data).toMatchObject({
      website_id: other,
      live_visitors: 0,
      pageviews_last_30m: 0,
      top_pages: [],
      countries: [],
    });
  });

  it('realtime reflects accepted pageviews from presence data', async () => {
    const pv = (visitorId: string, url: string) => ({
      type: 'pageview',
      ts: Date.now(),
      sessionId: randomUUID(),
      visitorId,
      idempotencyKey: randomUUID(),
      props: { url, country_code: 'NL' },
    });
    const [v1, v2] = [randomUUID(), randomUUID()];
    const sent = await call('POST', '/api/v1/events', {
      token: fullKey,
      body: {
        trackingCode: otherCode,
        events: [
          pv(v1, 'https://other.example.com/docs'),
          pv(v2, 'https://other.example.com/docs'),
          pv(v2, 'https://other.example.com/pricing'),
        ],
      },
    });
    expect(sent.body.acceptedCount).toBe(3);
    let data: { live_visitors: number } & Record<string, unknown> = { live_visitors: 0 };
    for (let i = 0; i < 50 && data.live_visitors < 2; i++) {
      data = (await get(`/track/realtime/${other}`)).body.data;
      if (data.live_visitors < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(data).toMatchObject({
      live_visitors: 2,
      pageviews_last_30m: 3,
      top_pages: [
        { url: '/docs', visitors: 1 },
        { url: '/pricing', visitors: 1 },
      ],
      countries: [{ country_code: 'NL', visitors: 2 }],
    });
  });
});

describe('bad input', () => {
  const cases: [string, RegExp][] = [
    ['/analytics/SITE/visitors?limit=abc', /limit/],
    ['/analytics/SITE/visitors?limit=0', /limit/],
    ['/analytics/SITE/visitors?offset=-1', /offset/],
    ['/analytics/SITE/visitors?limit=1001', /limit/],
    ['/analytics/SITE?range=2w', /range/],
    ['/analytics/SITE/pages?limit=101', /limit/],
    ['/analytics/SITE/countries?limit=1.5', /limit/],
    ['/analytics/SITE/technology?timeRange=1y', /timeRange/],
    ['/heatmaps/SITE/pages?limit=101', /limit/],
    ['/replays/SITE/sessions?limit=201', /limit/],
    ['/replays/SITE/sessions?offset=x', /offset/],
    ['/errors/SITE/groups?status=bogus', /status/],
    ['/errors/SITE/groups?limit=201', /limit/],
    ['/analytics/SITE/visitors?limit=5&limit=6', /limit/],
  ];
  it.each(cases)('%s → 400 VALIDATION_ERROR naming the parameter', async (path, name) => {
    const res = await get(path.replace('SITE', site));
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(name);
  });

  it('ignores unknown query parameters', async () => {
    const res = await get(`/analytics/${site}/pages?range=7d&flavour=mint&limit=5`);
    expect(res.status).toBe(200);
  });

  it('a path id that is not a UUID, or no website at all, is 404', async () => {
    expect((await get('/analytics/not-a-uuid')).status).toBe(404);
    expect((await get(`/analytics/${randomUUID()}/visitors`)).body.error.code).toBe('NOT_FOUND');
  });
});

describe('authorization matrix', () => {
  const SITE_PATHS = [
    '/websites/ID',
    '/analytics/ID',
    '/analytics/ID/visitors',
    '/analytics/ID/pages',
    '/analytics/ID/countries',
    '/analytics/ID/technology',
    '/heatmaps/ID/pages',
    '/replays/ID/sessions',
    '/errors/ID/groups',
    '/track/realtime/ID',
  ];
  const TEAM_PATHS = ['/usage', '/websites'];

  it('gives exactly the expected status to every credential on every endpoint', async () => {
    type Who = {
      name: string;
      key: () => string | null;
      own: number;
      sibling: number;
      foreign: number;
      team: number;
      code?: string;
    };
    const who: Who[] = [
      { name: 'full key', key: () => fullKey, own: 200, sibling: 200, foreign: 404, team: 200 },
      { name: 'site key', key: () => siteKey, own: 200, sibling: 403, foreign: 404, team: 200 },
      { name: 'other team’s key', key: () => otherTeamKey, own: 404, sibling: 404, foreign: 404, team: 200 },
      {
        name: 'free team’s key',
        key: () => freeKey,
        own: 403,
        sibling: 403,
        foreign: 403,
        team: 403,
        code: 'API_PAID_PLAN_REQUIRED',
      },
      { name: 'no key', key: () => null, own: 401, sibling: 401, foreign: 401, team: 401, code: 'UNAUTHORIZED' },
      {
        name: 'revoked key',
        key: () => revokedKey,
        own: 401,
        sibling: 401,
        foreign: 401,
        team: 401,
        code: 'UNAUTHORIZED',
      },
    ];
    const wrong: string[] = [];
    for (const w of who) {
      const checks: [string, number][] = [
        ...TEAM_PATHS.map((p): [string, number] => [p, w.team]),
        ...SITE_PATHS.flatMap((p): [string, number][] => [
          [p.replace('ID', site), w.own],
          [p.replace('ID', other), w.sibling],
          [p.replace('ID', freeSite), w.foreign],
        ]),
      ];
      for (const [path, expected] of checks) {
        const res = await get(path, w.key());
        if (res.status !== expected) wrong.push(`${w.name} ${path}: ${res.status}, expected ${expected}`);
        if (w.code && res.body?.error?.code !== w.code)
          wrong.push(`${w.name} ${path}: code ${res.body?.error?.code}, expected ${w.code}`);
        if (expected === 403 && !w.code && res.body.error.code !== 'FORBIDDEN')
          wrong.push(`${w.name} ${path}: code ${res.body.error.code}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('accepts the key as a Bearer token too', async () => {
    const res = await call('GET', `${V1}/analytics/${site}`, { token: siteKey });
    expect(res.status).toBe(200);
    const bad = await call('GET', `${V1}/analytics/${site}`, { token: 'tmk_not_a_key' });
    expect(bad.status).toBe(401);
  });
});

describe('rate limits, quota and usage', () => {
  let user: TestUser;
  let key: string;
  let keyId: string;
  let website: string;

  beforeAll(async () => {
    user = await registerUser(ctx, 'pro', 'ext-limits');
    website = (await createWebsite(ctx, user, 'limits.example.com')).id;
    const created = await createApiKey(ctx, user);
    [key, keyId] = [created.key, created.id];
  });

  it('reports usage: the key, the month so far (this request included), the all-time total and the plan', async () => {
    await setTeamPlan(ctx.pool, user.teamId, 'pro', 'starter'); // a legacy name is reported as set
    await get('/websites', key);
    const res = await get('/usage', key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      api_key: { id: keyId, name: 'test key', permission: 'full_access', website_id: null },
      usage: {
        monthly_requests: 2,
        monthly_limit: 10_000,
        monthly_remaining: 9_998,
        monthly_reset_at: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/),
        total_requests: 2,
      },
      rate_limits: { requests_per_minute: 30 },
      subscription: { tier: 'starter' },
    });
    expect(Date.parse(res.body.data.usage.monthly_reset_at)).toBeGreaterThan(Date.now());
    // A failed request is refunded: it costs neither the month nor the key's total.
    await get(`/analytics/${website}?range=2w`, key);
    const after = await get('/usage', key);
    expect(after.body.data.usage).toMatchObject({ monthly_requests: 3, total_requests: 3 });
  });

  it('X-RateLimit-* on every response; the 31st request in a minute is 429 with Retry-After', async () => {
    const first = await get(`/analytics/${website}`, key);
    expect(first.headers.get('x-ratelimit-limit')).toBe('30');
    expect(Number(first.headers.get('x-ratelimit-remaining'))).toBeLessThan(30);
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    let res = first;
    for (let i = 0; i < 30 && res.status !== 429; i++) res = await get(`/heatmaps/${website}/pages`, key);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.body.success).toBe(false);
  });

  it('every endpoint answers 429 with Retry-After once the minute is spent', async () => {
    const busy = await registerUser(ctx, 'pro', 'ext-busy');
    await setTeamLimits(ctx.pool, busy.teamId, { rpm: 1 });
    const busyKey = (await createApiKey(ctx, busy)).key;
    const busySite = (await createWebsite(ctx, busy, 'busy.example.com')).id;
    expect((await get('/usage', busyKey)).status).toBe(200);
    const paths = [
      '/usage',
      '/websites',
      '/websites/ID',
      '/analytics/ID',
      '/analytics/ID/visitors',
      '/analytics/ID/pages',
      '/analytics/ID/countries',
      '/analytics/ID/technology',
      '/heatmaps/ID/pages',
      '/replays/ID/sessions',
      '/errors/ID/groups',
      '/track/realtime/ID',
      `/stats/aggregate?site_id=ID&period=7d&metrics=visitors`,
    ];
    for (const path of paths) {
      const res = await get(path.replace('ID', busySite), busyKey);
      expect([path, res.status, res.body.success]).toEqual([path, 429, false]);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1');
    }
  });

  it('the monthly quota answers 429 with Retry-After once spent', async () => {
    const lean = await registerUser(ctx, 'pro', 'ext-quota');
    await setTeamLimits(ctx.pool, lean.teamId, { monthly: 2 });
    const leanKey = (await createApiKey(ctx, lean)).key;
    expect((await get('/websites', leanKey)).status).toBe(200);
    expect((await get('/usage', leanKey)).body.data.usage).toMatchObject({
      monthly_requests: 2,
      monthly_limit: 2,
      monthly_remaining: 0,
    });
    const over = await get('/websites', leanKey);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('x-usage-remaining')).toBe('0');
  });
});

describe('server errors', () => {
  it('a store failure is a 500 in the envelope without internals, on every endpoint that reads it', async () => {
    const broken = await createTestContext();
    try {
      const u = await registerUser(broken, 'pro', 'ext-broken');
      await setTeamLimits(broken.pool, u.teamId, { rpm: null, monthly: null });
      const w = (await createWebsite(broken, u, 'broken.example.com')).id;
      const k = (await createApiKey(broken, u)).key;
      for (const table of ['sessions_mv', 'sessions', 'events', 'interactions', 'replay_chunks']) {
        await broken.clickhouse.command({ query: `DROP TABLE ${table}` });
      }
      await broken.pool.query('DROP TABLE error_groups');
      const paths = [
        '/analytics/ID',
        '/analytics/ID/visitors',
        '/analytics/ID/pages',
        '/analytics/ID/countries',
        '/analytics/ID/technology',
        '/heatmaps/ID/pages',
        '/replays/ID/sessions',
        '/errors/ID/groups',
      ];
      for (const path of paths) {
        const res = await client(broken.baseUrl)('GET', `${V1}${path.replace('ID', w)}`, { apiKey: k });
        expect([path, res.status]).toEqual([path, 500]);
        expect(res.body).toEqual({
          success: false,
          error: { code: 'INTERNAL_ERROR', message: 'Internal server error', timestamp: expect.any(String) },
        });
      }
    } finally {
      await broken.close();
    }
  });
});
