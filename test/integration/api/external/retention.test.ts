// GET /api/external/v1/retention/{websiteId} (issue 25): validation, credits, gates and the empty answer, on a
// small UTC fixture placed on the two days before today and computed by the retention job as of yesterday.
// Visitors: a and b (server) first seen the day before yesterday, a back yesterday; c (browser, page-supplied
// UUID) first seen yesterday; a cookieless browser id seen on both days, which never counts.
import { validate } from '@readme/openapi-parser';
import type { JobContext } from '../../../../jobs/registry';
import { retention } from '../../../../jobs/retention';
import { setTeamPlan } from '../../../../lib/accounts/teams';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let key: string;
let siteId: string;
let otherSiteId: string;
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const before = dayOf(Date.now() - 2 * DAY);
const yesterday = dayOf(Date.now() - DAY);

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'retention-owner');
  siteId = (await createWebsite(ctx, owner, 'cohorts.example.com')).id;
  otherSiteId = (await createWebsite(ctx, owner, 'other.example.com')).id;
  key = (await createApiKey(ctx, owner)).key;
  const row = (visitor_id: string, day: string, source: 'server' | 'browser' = 'server') =>
    eventRow(siteId, { visitor_id, source, session_id: `${visitor_id}-${day}`, ts: `${day}T12:00:00Z` });
  const cookieless = 'ef'.repeat(16);
  await storeRows(ctx.clickhouse, [
    row('a', before),
    row('b', before),
    row('a', yesterday),
    row('4b0f3c1e-2d5a-4f6b-8c7d-9e0a1b2c3d4e', yesterday, 'browser'),
    row(cookieless, before, 'browser'),
    row(cookieless, yesterday, 'browser'),
  ]);
  const job: JobContext = {
    pool: ctx.pool,
    clickhouse: ctx.clickhouse,
    redis: ctx.redis,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
  };
  await retention(job, { websiteId: siteId });
});
afterAll(() => ctx.close());

const path = (query = '', id = siteId) => `/api/external/v1/retention/${id}${query}`;

describe('GET /api/external/v1/retention/{websiteId}', () => {
  it('answers daily cohorts of persistent visitors with the summary', async () => {
    const res = await call('GET', path('?granularity=daily'), { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      cohorts: [
        { cohort_date: before, period_number: 0, total_users: 2, retained_users: 2, retention_rate: 100 },
        { cohort_date: before, period_number: 1, total_users: 2, retained_users: 1, retention_rate: 50 },
        { cohort_date: yesterday, period_number: 0, total_users: 1, retained_users: 1, retention_rate: 100 },
      ],
      summary: { overall_retention: 50, total_cohorts: 2, best_cohort: { cohort_date: before, retention_rate: 50 } },
      as_of: yesterday,
    });
  });

  it('defaults to weekly cohorts over 30 days', async () => {
    const res = await call('GET', path(), { apiKey: key });
    expect(res.status).toBe(200);
    const firsts = res.body.data.cohorts.filter((c: { period_number: number }) => c.period_number === 0);
    // Both days fall in one week or in two; either way the three visitors are counted once each.
    expect(firsts.reduce((n: number, c: { total_users: number }) => n + c.total_users, 0)).toBe(3);
    for (const c of res.body.data.cohorts) expect(new Date(`${c.cohort_date}T00:00:00Z`).getUTCDay()).toBe(1);
  });

  it.each([
    ['periods=13', 'periods'],
    ['periods=0', 'periods'],
    ['periods=six', 'periods'],
    ['granularity=hourly', 'granularity'],
    ['range=1y', 'range'],
  ])('refuses %s with 400 VALIDATION_ERROR', async (query, name) => {
    const res = await call('GET', path(`?${query}`), { apiKey: key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain(name);
  });

  it('costs 1 credit per call', async () => {
    const user = await registerUser(ctx, 'pro', 'retention-credits');
    const site = await createWebsite(ctx, user, 'credits.example.com');
    const fresh = (await createApiKey(ctx, user)).key;
    expect((await call('GET', path('', site.id), { apiKey: fresh })).status).toBe(200);
    expect((await call('GET', path('?granularity=monthly', site.id), { apiKey: fresh })).status).toBe(200);
    const usage = await call('GET', '/api/external/v1/usage', { apiKey: fresh });
    // Two retention reads and this usage read.
    expect(usage.body.data.usage).toMatchObject({ monthly_requests: 3, total_requests: 3 });
  });

  it('gates: a free team’s key 403, a site key elsewhere 403, another team’s key 404', async () => {
    const lapsed = await registerUser(ctx, 'pro', 'retention-lapsed');
    const lapsedKey = (await createApiKey(ctx, lapsed)).key;
    await setTeamPlan(ctx.pool, lapsed.teamId, 'free', 'free');
    const free = await call('GET', path(), { apiKey: lapsedKey });
    expect(free.status).toBe(403);
    expect(free.body.error.code).toBe('API_PAID_PLAN_REQUIRED');

    const siteKey = (await createApiKey(ctx, owner, 'site_access', otherSiteId)).key;
    const elsewhere = await call('GET', path(), { apiKey: siteKey });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.code).toBe('FORBIDDEN');
    expect((await call('GET', path('', otherSiteId), { apiKey: siteKey })).status).toBe(200);

    const stranger = await registerUser(ctx, 'pro', 'retention-stranger');
    const strangerKey = (await createApiKey(ctx, stranger)).key;
    expect((await call('GET', path(), { apiKey: strangerKey })).status).toBe(404);
    expect((await call('GET', path(), {})).status).toBe(401);
  });

  it('signed-in readers of the website read it as other External reads, free plan included, without credits', async () => {
    const res = await call('GET', path('?granularity=daily'), { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.summary.total_cohorts).toBe(2);
    const payer = await registerUser(ctx, 'pro', 'retention-payer');
    const payerSite = await createWebsite(ctx, payer, 'payer.example.com');
    const payerKey = (await createApiKey(ctx, payer)).key;
    expect((await call('GET', path('', payerSite.id), { token: payer.token })).status).toBe(200);
    const usage = await call('GET', '/api/external/v1/usage', { apiKey: payerKey });
    expect(usage.body.data.usage.monthly_requests).toBe(1); // the usage read alone
    const freeUser = await registerUser(ctx, 'free', 'retention-free');
    const freeSite = await createWebsite(ctx, freeUser, 'free.example.com');
    expect((await call('GET', path('', freeSite.id), { token: freeUser.token })).status).toBe(200);
    expect((await call('GET', path(), { token: freeUser.token })).status).toBe(404);
  });

  it('answers a website with no data with empty cohorts and zeros', async () => {
    const res = await call('GET', path('?periods=12&range=90d', otherSiteId), { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      cohorts: [],
      summary: { overall_retention: 0, total_cohorts: 0, best_cohort: null },
      as_of: null,
    });
  });

  it('is in the OpenAPI document, which stays valid, with its parameters and which visitors count', async () => {
    const { body: doc } = await call('GET', '/api/external/v1/openapi.json');
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const op = doc.paths['/api/external/v1/retention/{websiteId}'].get;
    expect(op.summary).toMatch(/cookieless/);
    const params = Object.fromEntries(
      op.parameters.map((p: { name: string; schema: { default?: unknown } }) => [p.name, p.schema.default]),
    );
    expect(params).toEqual({ websiteId: undefined, range: '30d', granularity: 'weekly', periods: 6 });
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
  });
});
