// GET /api/external/v1/revenue/:websiteId/ltv: parameters, plan gate, credits, a website without purchases.
// The figures themselves are checked in test/integration/jobs/ltv.test.ts.
import { ltvJob } from '../../../../jobs/ltv';
import { setTeamPlan } from '../../../../lib/accounts/teams';
import { createApiKey, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let key: string;
let siteId: string;
let otherSite: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'ltv-api');
  const site = await call('POST', '/api/websites', {
    token: owner.token,
    body: { domain: 'empty.example.com', name: 'Empty', timezone: 'Europe/Paris' },
  });
  siteId = site.body.data.website.id;
  key = (await createApiKey(ctx, owner)).key;
  const stranger = await registerUser(ctx, 'pro', 'ltv-stranger');
  otherSite = (
    await call('POST', '/api/websites', { token: stranger.token, body: { domain: 'other.example.com', name: 'O' } })
  ).body.data.website.id;
  // Pageviews but no purchase: no revenue data.
  await storeRows(ctx.clickhouse, [
    eventRow(siteId, { ts: new Date(Date.now() - 86_400_000).toISOString(), visitor_id: 'v', session_id: 's' }),
  ]);
});
afterAll(() => ctx.close());

const ltv = (query = '', opts: { apiKey?: string; token?: string; site?: string } = { apiKey: key }) =>
  call('GET', `/api/external/v1/revenue/${opts.site ?? siteId}/ltv${query}`, opts);
const EMPTY_SUMMARY = { average_ltv_30d: 0, average_ltv_90d: 0, customers_30d: 0, customers_90d: 0 };

describe('GET /revenue/:websiteId/ltv', () => {
  it('a website without purchases: 200, empty cohorts, zeros, before and after the job', async () => {
    const before = await ltv();
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({ currency: 'USD', granularity: 'monthly', as_of: null, cohorts: [] });
    expect(before.body.data.summary).toEqual(EMPTY_SUMMARY);
    await ltvJob(
      {
        pool: ctx.pool,
        clickhouse: ctx.clickhouse,
        logger: ctx.logger,
      },
      { websiteId: siteId },
    );
    const after = await ltv('?granularity=weekly&range=1y');
    expect(after.status).toBe(200);
    expect(after.body.data.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(after.body.data).toMatchObject({ granularity: 'weekly', cohorts: [] });
    expect(after.body.data.summary).toEqual(EMPTY_SUMMARY);
    expect(after.body.data.excluded).toEqual({
      unconverted_purchases: 0,
      unconverted_currencies: [],
      unattributed_purchases: 0,
    });
    expect(after.text).not.toMatch(/NaN|Infinity|null,"cohorts"/);
  });

  it('refuses a bad granularity or range with 400 naming the parameter', async () => {
    for (const query of ['?granularity=daily', '?granularity=', '?range=12d', '?range=all']) {
      const res = await ltv(query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toMatch(/granularity|range/);
    }
    expect((await ltv('?range=7d&unknown=1')).status).toBe(200);
  });

  it('404 for an unknown website, another team’s, or a malformed id', async () => {
    expect((await ltv('', { apiKey: key, site: otherSite })).status).toBe(404);
    expect((await ltv('', { apiKey: key, site: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    // As everywhere in the External API, an id that is not a UUID names no website.
    expect((await ltv('', { apiKey: key, site: 'nope' })).status).toBe(404);
  });

  it('costs one credit; a refused request costs none', async () => {
    const remaining = async () =>
      Number((await call('GET', '/api/external/v1/usage', { apiKey: key })).headers.get('x-usage-remaining'));
    const start = await remaining();
    expect((await ltv()).status).toBe(200);
    // The LTV call and the second usage call.
    expect(await remaining()).toBe(start - 2);
    expect((await ltv('?granularity=daily')).status).toBe(400);
    expect(await remaining()).toBe(start - 3);
  });

  it('needs a paid plan (Pro or higher) for a key; signed-in readers need no key', async () => {
    const poor = await registerUser(ctx, 'pro', 'ltv-free');
    const poorSite = (
      await call('POST', '/api/websites', { token: poor.token, body: { domain: 'free.example.com', name: 'F' } })
    ).body.data.website.id;
    const poorKey = (await createApiKey(ctx, poor)).key;
    await setTeamPlan(ctx.pool, poor.teamId, 'free', 'free');
    const refused = await ltv('', { apiKey: poorKey, site: poorSite });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('API_PAID_PLAN_REQUIRED');
    for (const plan of ['scale', 'enterprise'] as const) {
      await setTeamPlan(ctx.pool, poor.teamId, plan, plan);
      expect((await ltv('', { apiKey: poorKey, site: poorSite })).status).toBe(200);
    }
    expect((await ltv('', { token: owner.token })).status).toBe(200);
    expect((await ltv('', {})).status).toBe(401);
  });

  it('is in the OpenAPI document with its parameters and defaults', async () => {
    const { body: doc } = await call('GET', '/api/openapi.json');
    const op = doc.paths['/api/external/v1/revenue/{websiteId}/ltv'].get;
    const param = (name: string) => op.parameters.find((p: { name: string }) => p.name === name).schema;
    expect(param('granularity')).toMatchObject({ enum: ['weekly', 'monthly'], default: 'monthly' });
    expect(param('range')).toMatchObject({ default: '90d' });
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
  });
});
