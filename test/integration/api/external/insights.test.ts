// GET /api/external/v1/insights/{websiteId}: range, type and severity filters, pagination with a total, the
// spec's validation codes, the paid-plan gate and key scope, 1 credit per successful call. Responses are also
// checked against the OpenAPI document by test/helpers/http.ts.
import { setTeamLimits, setTeamPlan } from '../../../../lib/accounts/teams';
import { type InsightDraft, upsertInsight } from '../../../../lib/insights/store';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let site: string;
let empty: string;
let fullKey: string;
let siteKey: string;
let freeKey: string;
let strangerKey: string;
const V1 = '/api/external/v1';
const HOUR = 3_600_000;
const ids: Record<string, string> = {};

const draft = (over: Partial<InsightDraft> & Pick<InsightDraft, 'type' | 'severity' | 'rule'>): InsightDraft => ({
  subject: '',
  period: 'p',
  title: `${over.rule} title`,
  description: `${over.rule} description`,
  metric_name: 'visitors',
  metric_value: 10,
  metric_change: 5,
  recommendation: `${over.rule} advice`,
  ...over,
});

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'insights-api');
  await setTeamLimits(ctx.pool, owner.teamId, { rpm: null, monthly: null });
  site = (await createWebsite(ctx, owner, 'insights-api.example.com')).id;
  empty = (await createWebsite(ctx, owner, 'empty.example.com')).id;
  fullKey = (await createApiKey(ctx, owner)).key;
  siteKey = (await createApiKey(ctx, owner, 'site_access', empty)).key;
  const stranger = await registerUser(ctx, 'pro', 'insights-stranger');
  strangerKey = (await createApiKey(ctx, stranger)).key;
  const lapsed = await registerUser(ctx, 'pro', 'insights-free');
  freeKey = (await createApiKey(ctx, lapsed)).key;
  await setTeamPlan(ctx.pool, lapsed.teamId, 'free', 'free');

  // A (1 h ago, critical trend), B (2 days, warning recommendation), C (3 days, info prediction, no change to
  // report), D (4 days, info trend), E (10 days, info anomaly: outside 7d, inside 30d).
  const now = Date.now();
  const seed: [string, InsightDraft, number][] = [
    ['A', draft({ type: 'trend', severity: 'critical', rule: 'a' }), 1 * HOUR],
    ['B', draft({ type: 'recommendation', severity: 'warning', rule: 'b' }), 48 * HOUR],
    ['C', draft({ type: 'prediction', severity: 'info', rule: 'c', metric_change: null }), 72 * HOUR],
    ['D', draft({ type: 'trend', severity: 'info', rule: 'd', metric_value: 12.5 }), 96 * HOUR],
    ['E', draft({ type: 'anomaly', severity: 'info', rule: 'e' }), 240 * HOUR],
  ];
  for (const [name, d, ago] of seed) {
    await upsertInsight(ctx.pool, site, d, '2026-01-01', new Date(now - ago));
    const r = await ctx.pool.query('SELECT id FROM insights WHERE website_id = $1 AND rule = $2', [site, d.rule]);
    ids[r.rows[0].id] = name;
  }
});

afterAll(() => ctx.close());

const get = (query = '', apiKey = fullKey, id = site) => call('GET', `${V1}/insights/${id}${query}`, { apiKey });
const names = (res: { body: { data: { insights: { id: string }[] } } }) => res.body.data.insights.map((i) => ids[i.id]);

describe('GET /insights/{websiteId}', () => {
  it('lists the last 7 days’ insights, newest first, with the spec’s fields', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['A', 'B', 'C', 'D']);
    expect(res.body.data.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
    const [a] = res.body.data.insights;
    expect(Object.keys(a).sort()).toEqual(
      [
        'id',
        'type',
        'severity',
        'title',
        'description',
        'metric_name',
        'metric_value',
        'metric_change',
        'recommendation',
        'created_at',
      ].sort(),
    );
    expect(a).toMatchObject({
      type: 'trend',
      severity: 'critical',
      title: 'a title',
      description: 'a description',
      metric_name: 'visitors',
      metric_value: 10,
      metric_change: 5,
      recommendation: 'a advice',
    });
    expect(res.body.data.insights[2].metric_change).toBeNull();
    expect(res.body.data.insights[3].metric_value).toBe(12.5);
  });

  it('range widens the window', async () => {
    expect(names(await get('?range=30d'))).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(names(await get('?range=24h'))).toEqual(['A']);
  });

  it('filters by type and severity, together too', async () => {
    expect(names(await get('?type=trend'))).toEqual(['A', 'D']);
    expect(names(await get('?severity=info'))).toEqual(['C', 'D']);
    const both = await get('?type=trend&severity=info&range=30d');
    expect(names(both)).toEqual(['D']);
    expect(both.body.data.pagination.total).toBe(1);
    expect(names(await get('?type=anomaly&range=30d'))).toEqual(['E']);
  });

  it('paginates with the total', async () => {
    const page = await get('?limit=2&offset=1');
    expect(names(page)).toEqual(['B', 'C']);
    expect(page.body.data.pagination).toEqual({ total: 4, limit: 2, offset: 1, has_more: true });
    const last = await get('?limit=2&offset=3');
    expect(names(last)).toEqual(['D']);
    expect(last.body.data.pagination).toEqual({ total: 4, limit: 2, offset: 3, has_more: false });
    const past = await get('?offset=10');
    expect(past.body.data).toEqual({ insights: [], pagination: { total: 4, limit: 50, offset: 10, has_more: false } });
    expect((await get('?limit=200')).status).toBe(200);
  });

  it.each([
    'limit=0',
    'limit=201',
    'limit=abc',
    'limit=1.5',
    'offset=-1',
    'type=bogus',
    'severity=high',
    'range=1y',
    'range=',
  ])('refuses %s with 400 VALIDATION_ERROR', async (query) => {
    const res = await get(`?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('a website without insights answers 200 with an empty list', async () => {
    const res = await get('?range=90d', fullKey, empty);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ insights: [], pagination: { total: 0, limit: 50, offset: 0, has_more: false } });
  });

  it('checks the key: paid plan, scope, team; signed-in readers too', async () => {
    expect((await call('GET', `${V1}/insights/${site}`)).status).toBe(401);
    const free = await get('', freeKey);
    expect(free.status).toBe(403);
    expect(free.body.error.code).toBe('API_PAID_PLAN_REQUIRED');
    const outside = await get('', siteKey);
    expect(outside.status).toBe(403);
    expect(outside.body.error.code).toBe('FORBIDDEN');
    expect((await get('', siteKey, empty)).status).toBe(200);
    expect((await get('', strangerKey)).status).toBe(404);
    expect((await get('', fullKey, 'not-a-uuid')).status).toBe(404);
    expect((await get('', fullKey, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const jwt = await call('GET', `${V1}/insights/${site}`, { token: owner.token });
    expect(jwt.status).toBe(200);
    expect(names(jwt)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('costs 1 credit per successful call, none for a refused one', async () => {
    const used = async () => (await call('GET', `${V1}/usage`, { apiKey: fullKey })).body.data.usage.monthly_requests;
    const before = await used(); // this read is charged too
    expect((await get()).status).toBe(200);
    expect((await get('?limit=0')).status).toBe(400);
    expect(await used()).toBe(before + 2); // the insights call and the first usage read
  });
});
