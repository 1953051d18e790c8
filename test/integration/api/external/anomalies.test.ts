// GET /api/external/v1/anomalies/{websiteId} over HTTP: stored anomalies filtered by range (overlap), severity,
// metric and resolved, paged with a total, each with its goal and suspect annotations; the spec's validation
// codes, the paid-plan and scope checks, 1 credit per call, and an empty website. Every response is also
// checked against the OpenAPI document (test/helpers/http.ts).
import { setTeamLimits, setTeamPlan } from '../../../../lib/accounts/teams';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { withDateAt } from '../../../helpers/clock';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let site: string;
let empty: string;
let fullKey: string;
let siteKey: string; // site_access to `empty`
let freeKey: string;
let strangerKey: string;
let goal: string;
let deploy: string;
const ids: Record<string, string> = {};

const V1 = '/api/external/v1';
/** Friday 6 November 2026, noon UTC: 7d = 31 October – 6 November, 24h = from 5 November noon. */
const NOW = Date.parse('2026-11-06T12:00:00Z');
const atNow = <T>(fn: () => Promise<T>) => withDateAt(NOW, fn, true);
const get = (path: string, apiKey = fullKey) => atNow(() => call('GET', `${V1}${path}`, { apiKey }));

async function anomaly(
  name: string,
  over: {
    metric: string;
    severity: string;
    started: string;
    last: string;
    resolved?: string;
    goalId?: string;
    suspects?: string[];
    websiteId?: string;
  },
) {
  const r = await ctx.pool.query<{ id: string }>(
    `INSERT INTO anomalies (website_id, metric_name, goal_id, expected_value, actual_value, deviation_percentage,
       severity, started_at, last_seen_at, detected_at, is_resolved, resolved_at, suspect_annotation_ids)
     VALUES ($1, $2, $3, 90, 315, 250, $4, $5, $6, $5::timestamptz + interval '1 hour', $7, $8, $9) RETURNING id`,
    [
      over.websiteId ?? site,
      over.metric,
      over.goalId ?? null,
      over.severity,
      over.started,
      over.last,
      over.resolved !== undefined,
      over.resolved ?? null,
      over.suspects ?? [],
    ],
  );
  ids[name] = r.rows[0].id;
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'anomaly-owner');
  await setTeamLimits(ctx.pool, owner.teamId, { rpm: null, monthly: null });
  site = (await createWebsite(ctx, owner, 'shop.example.com')).id;
  empty = (await createWebsite(ctx, owner, 'empty.example.com')).id;
  fullKey = (await createApiKey(ctx, owner)).key;
  siteKey = (await createApiKey(ctx, owner, 'site_access', empty)).key;
  const stranger = await registerUser(ctx, 'pro', 'anomaly-stranger');
  strangerKey = (await createApiKey(ctx, stranger)).key;
  const lapsed = await registerUser(ctx, 'pro', 'anomaly-free');
  await createWebsite(ctx, lapsed, 'free.example.com');
  freeKey = (await createApiKey(ctx, lapsed)).key;
  await setTeamPlan(ctx.pool, lapsed.teamId, 'free', 'free');

  goal = (
    await ctx.pool.query<{ id: string }>(
      `INSERT INTO goals (website_id, name, kind) VALUES ($1, 'Signup', 'event') RETURNING id`,
      [site],
    )
  ).rows[0].id;
  deploy = (
    await ctx.pool.query<{ id: string }>(
      `INSERT INTO annotations (website_id, team_id, type, message, occurred_at, created_by)
       VALUES ($1, $2, 'deploy', 'v2.3 checkout', '2026-11-05T09:00:00Z', $3) RETURNING id`,
      [site, owner.teamId, owner.id],
    )
  ).rows[0].id;

  await anomaly('spike', {
    metric: 'visitors',
    severity: 'critical',
    started: '2026-11-05T10:00:00Z',
    last: '2026-11-05T11:00:00Z',
    resolved: '2026-11-05T13:00:00Z',
    suspects: [deploy],
  });
  await anomaly('open', {
    metric: 'pageviews',
    severity: 'info',
    started: '2026-11-06T09:00:00Z',
    last: '2026-11-06T10:00:00Z',
  });
  await anomaly('goal', {
    metric: 'goal_conversions',
    severity: 'critical',
    started: '2026-11-04T18:00:00Z',
    last: '2026-11-04T18:00:00Z',
    goalId: goal,
  });
  await anomaly('errors', {
    metric: 'error_rate',
    severity: 'warning',
    started: '2026-11-02T08:00:00Z',
    last: '2026-11-02T08:00:00Z',
    resolved: '2026-11-02T10:00:00Z',
  });
  await anomaly('old', {
    metric: 'visitors',
    severity: 'warning',
    started: '2026-10-20T08:00:00Z',
    last: '2026-10-20T08:00:00Z',
    resolved: '2026-10-20T10:00:00Z',
  });
  // Another website's anomaly never shows.
  await anomaly('elsewhere', {
    metric: 'visitors',
    severity: 'critical',
    started: '2026-11-05T10:00:00Z',
    last: '2026-11-05T10:00:00Z',
    websiteId: (await createWebsite(ctx, owner, 'third.example.com')).id,
    resolved: '2026-11-05T12:00:00Z',
  });
});
afterAll(() => ctx.close());

const listed = (body: { data: { anomalies: { id: string }[] } }) =>
  body.data.anomalies.map((a) => Object.keys(ids).find((k) => ids[k] === a.id));

describe('GET /anomalies/{websiteId}', () => {
  it('lists the last 7 days’ anomalies newest first, with goal, direction and suspect annotations', async () => {
    const res = await get(`/anomalies/${site}`);
    expect(res.status).toBe(200);
    expect(listed(res.body)).toEqual(['open', 'spike', 'goal', 'errors']);
    expect(res.body.data.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
    expect(res.body.data.anomalies[1]).toEqual({
      id: ids.spike,
      metric_name: 'visitors',
      goal: null,
      expected_value: 90,
      actual_value: 315,
      deviation_percentage: 250,
      direction: 'spike',
      severity: 'critical',
      started_at: '2026-11-05T10:00:00.000Z',
      last_seen_at: '2026-11-05T11:00:00.000Z',
      detected_at: '2026-11-05T11:00:00.000Z',
      is_resolved: true,
      resolved_at: '2026-11-05T13:00:00.000Z',
      suspect_annotations: [
        { id: deploy, type: 'deploy', message: 'v2.3 checkout', occurred_at: '2026-11-05T09:00:00.000Z' },
      ],
    });
    expect(res.body.data.anomalies[0]).toMatchObject({
      is_resolved: false,
      resolved_at: null,
      suspect_annotations: [],
    });
    expect(res.body.data.anomalies[2].goal).toEqual({ id: goal, name: 'Signup' });
  });

  it('takes the range: an anomaly counts when its hours overlap it', async () => {
    expect(listed((await get(`/anomalies/${site}?range=30d`)).body)).toEqual([
      'open',
      'spike',
      'goal',
      'errors',
      'old',
    ]);
    // 24h starts at 5 November noon: the spike's hours (10:00–12:00) end there.
    expect(listed((await get(`/anomalies/${site}?range=24h`)).body)).toEqual(['open']);
  });

  it('filters by severity, metric and resolved', async () => {
    expect(listed((await get(`/anomalies/${site}?severity=critical`)).body)).toEqual(['spike', 'goal']);
    expect(listed((await get(`/anomalies/${site}?metric=visitors&range=90d`)).body)).toEqual(['spike', 'old']);
    expect(listed((await get(`/anomalies/${site}?metric=goal_conversions`)).body)).toEqual(['goal']);
    expect(listed((await get(`/anomalies/${site}?resolved=true`)).body)).toEqual(['spike', 'errors']);
    const open = await get(`/anomalies/${site}?resolved=false&severity=info`);
    expect(listed(open.body)).toEqual(['open']);
    expect(open.body.data.pagination.total).toBe(1);
  });

  it('pages with limit and offset, total counting every match', async () => {
    const first = await get(`/anomalies/${site}?limit=2&offset=1`);
    expect(listed(first.body)).toEqual(['spike', 'goal']);
    expect(first.body.data.pagination).toEqual({ total: 4, limit: 2, offset: 1, has_more: true });
    const last = await get(`/anomalies/${site}?limit=2&offset=3`);
    expect(listed(last.body)).toEqual(['errors']);
    expect(last.body.data.pagination).toEqual({ total: 4, limit: 2, offset: 3, has_more: false });
    const beyond = await get(`/anomalies/${site}?offset=10`);
    expect(beyond.body.data).toEqual({
      anomalies: [],
      pagination: { total: 4, limit: 50, offset: 10, has_more: false },
    });
    expect((await get(`/anomalies/${site}?limit=200`)).status).toBe(200);
  });

  it('refuses bad parameters with VALIDATION_ERROR', async () => {
    for (const q of [
      'limit=201',
      'limit=0',
      'limit=abc',
      'offset=-1',
      'severity=fatal',
      'metric=revenue',
      'resolved=yes',
      'range=1y',
      'range=12h',
    ]) {
      const res = await get(`/anomalies/${site}?${q}`);
      expect([q, res.status, res.body.error?.code]).toEqual([q, 400, 'VALIDATION_ERROR']);
    }
  });

  it('answers an empty website with 200 and an empty list', async () => {
    const res = await get(`/anomalies/${empty}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ anomalies: [], pagination: { total: 0, limit: 50, offset: 0, has_more: false } });
    expect((await get(`/anomalies/${empty}`, siteKey)).status).toBe(200);
  });

  it('checks the credential: 401 without, 403 for a free plan or outside a site key, 404 for another team', async () => {
    const none = await atNow(() => call('GET', `${V1}/anomalies/${site}`));
    expect(none.status).toBe(401);
    expect((await get(`/anomalies/${site}`, freeKey)).body.error.code).toBe('API_PAID_PLAN_REQUIRED');
    const outside = await get(`/anomalies/${site}`, siteKey);
    expect([outside.status, outside.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await get(`/anomalies/${site}`, strangerKey)).status).toBe(404);
    expect((await get('/anomalies/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('reads for a signed-in user too (the dashboard’s token)', async () => {
    const res = await atNow(() => call('GET', `${V1}/anomalies/${site}?severity=warning`, { token: owner.token }));
    expect(res.status).toBe(200);
    expect(listed(res.body)).toEqual(['errors']);
  });

  it('costs 1 credit; a refused request costs none', async () => {
    const user = await registerUser(ctx, 'pro', 'anomaly-credits');
    const w = await createWebsite(ctx, user, 'credits.example.com');
    const key = (await createApiKey(ctx, user)).key;
    expect((await get(`/anomalies/${w.id}`, key)).status).toBe(200);
    expect((await get(`/anomalies/${w.id}?limit=500`, key)).status).toBe(400);
    const usage = await get('/usage', key);
    // The anomalies call and this usage call; the 400 was refunded.
    expect(usage.body.data.usage.monthly_requests).toBe(2);
  });
});
