// Funnels (issue 22): saved funnels under a website, their results on the dashboard and in the External API,
// over a hand-made fixture ingested through POST /api/v1/events and the worker.
//
// Funnel "Blog to signup": 1. path /blog/*  2. page goal /pricing  3. event goal Signup.
// Visits, in time order (country from each visit's pageviews):
//   V1 (DE) s1: /blog/a, /pricing, Signup                          → 3
//   V2 (DE) s2: /blog/b, /about, /pricing                          → 2 (a page outside the funnel does not matter)
//   V3 (DE) s3: /blog/a, Signup                                    → 1 (skips /pricing)
//   V4 (US) s4: /blog/c, Signup, /pricing                          → 1 (steps 2 and 3 reversed)
//   V5 (DE) s5: /pricing, /blog/x, /pricing, Signup                → 3 (what comes before step 1 does not count)
//   V6 (US) s6a: /blog/a, /pricing; s6b: Signup                    → 2 (the next visit does not continue it)
//   V7 (US) s7a: /blog/a; s7b: /pricing, Signup                    → 1
//   V8 (US) s8a: /blog/a; s8b: /blog/b, /pricing, Signup           → 3 (the better visit, counted once)
//   V9 (US) s9: /pricing, Signup                                   → 0 (never entered)
// Visitors reaching each step: 8, 5 (V1 V2 V5 V6 V8), 3 (V1 V5 V8).
import { randomUUID } from 'node:crypto';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { startTestWorker, waitForEvents } from '../../helpers/ingest';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let key: string;
let strangerKey: string;
let site: { id: string; tracking_code: string };
let otherSite: { id: string };
let pricingGoal: string;
let signupGoal: string;
let otherSiteGoal: string;
let funnelId: string;

type Step = ['page', string] | ['Signup'];
const VISITS: { visitor: string; country: string; sessions: Step[][] }[] = [
  { visitor: 'V1', country: 'DE', sessions: [[['page', '/blog/a'], ['page', '/pricing'], ['Signup']]] },
  {
    visitor: 'V2',
    country: 'DE',
    sessions: [
      [
        ['page', '/blog/b'],
        ['page', '/about'],
        ['page', '/pricing'],
      ],
    ],
  },
  { visitor: 'V3', country: 'DE', sessions: [[['page', '/blog/a'], ['Signup']]] },
  { visitor: 'V4', country: 'US', sessions: [[['page', '/blog/c'], ['Signup'], ['page', '/pricing']]] },
  {
    visitor: 'V5',
    country: 'DE',
    sessions: [[['page', '/pricing'], ['page', '/blog/x'], ['page', '/pricing'], ['Signup']]],
  },
  {
    visitor: 'V6',
    country: 'US',
    sessions: [
      [
        ['page', '/blog/a'],
        ['page', '/pricing'],
      ],
      [['Signup']],
    ],
  },
  { visitor: 'V7', country: 'US', sessions: [[['page', '/blog/a']], [['page', '/pricing'], ['Signup']]] },
  {
    visitor: 'V8',
    country: 'US',
    sessions: [[['page', '/blog/a']], [['page', '/blog/b'], ['page', '/pricing'], ['Signup']]],
  },
  { visitor: 'V9', country: 'US', sessions: [[['page', '/pricing'], ['Signup']]] },
];

function fixtureEvents(): unknown[] {
  const events: unknown[] = [];
  const base = Date.now() - 3 * 3600_000;
  VISITS.forEach(({ visitor, country, sessions }, v) => {
    const visitorId = randomUUID();
    sessions.forEach((steps, s) => {
      const sessionId = randomUUID();
      // Visits a minute apart per step, the second visit of a visitor an hour after the first.
      steps.forEach((step, i) => {
        const ts = base + v * 600_000 + s * 3600_000 + i * 60_000;
        const common = { ts, sessionId, visitorId, idempotencyKey: `${visitor}-${s}-${i}-${randomUUID()}` };
        events.push(
          step[0] === 'page'
            ? {
                ...common,
                type: 'pageview',
                props: { url: `https://funnels.example.com${step[1]}`, country_code: country },
              }
            : { ...common, type: 'event', props: { name: 'Signup' } },
        );
      });
    });
  });
  return events;
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
  site = await createWebsite(ctx, owner, 'funnels.example.com');
  otherSite = await createWebsite(ctx, owner, 'other.example.com');
  key = (await createApiKey(ctx, owner)).key;
  viewer = await registerUser(ctx, 'free', 'viewer');
  await ctx.pool.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'viewer')", [
    owner.teamId,
    viewer.id,
  ]);
  stranger = await registerUser(ctx, 'pro', 'stranger');
  await createWebsite(ctx, stranger, 'stranger.example.com');
  strangerKey = (await createApiKey(ctx, stranger)).key;

  const goal = async (websiteId: string, body: object) => {
    const res = await call('POST', `/api/websites/${websiteId}/goals`, { token: owner.token, body });
    expect(res.status).toBe(201);
    return res.body.data.goal.id as string;
  };
  pricingGoal = await goal(site.id, { kind: 'page', path: '/pricing' });
  signupGoal = await goal(site.id, { kind: 'event', name: 'Signup' });
  otherSiteGoal = await goal(otherSite.id, { kind: 'event', name: 'Signup' });

  const worker = await startTestWorker(ctx);
  try {
    const events = fixtureEvents();
    const res = await call('POST', '/api/v1/events', {
      token: key,
      body: { trackingCode: site.tracking_code, events },
    });
    expect(res.body).toMatchObject({ acceptedCount: events.length, rejectedCount: 0 });
    expect(await waitForEvents(ctx, events.length, `website_id = '${site.id}'`)).toBe(events.length);
  } finally {
    await worker.stop();
  }
});
afterAll(() => ctx.close());

const W = () => `/api/websites/${site.id}/funnels`;
const STEPS = () => [{ path: '/blog/*' }, { goal_id: pricingGoal }, { goal_id: signupGoal }];

/** The step results expected for visitors per step `v`: conversion from the first and the previous, drop-off. */
function expected(v: [number, number, number]) {
  const pct = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 10_000) / 100 : 0);
  return [
    { step: 1, name: '/blog/*', kind: 'path', goal_id: null, path: '/blog/*' },
    { step: 2, name: 'Visit /pricing', kind: 'page', goal_id: pricingGoal, path: null },
    { step: 3, name: 'Signup', kind: 'event', goal_id: signupGoal, path: null },
  ].map((s, i) => ({
    ...s,
    visitors: v[i],
    conversion_rate: pct(v[i], v[0]),
    step_conversion_rate: pct(v[i], i === 0 ? v[0] : v[i - 1]),
    dropoff: i === 0 ? 0 : v[i - 1] - v[i],
  }));
}

describe('saving funnels', () => {
  it('creates, lists, reads, renames and replaces steps (editor); deletes', async () => {
    const created = await call('POST', W(), { token: owner.token, body: { name: 'Blog to signup', steps: STEPS() } });
    expect(created.status).toBe(201);
    funnelId = created.body.data.funnel.id;
    expect(created.body.data.funnel).toMatchObject({
      website_id: site.id,
      name: 'Blog to signup',
      steps: [
        { goal_id: null, path: '/blog/*', name: '/blog/*', kind: 'path' },
        { goal_id: pricingGoal, path: null, name: 'Visit /pricing', kind: 'page' },
        { goal_id: signupGoal, path: null, name: 'Signup', kind: 'event' },
      ],
    });
    const list = await call('GET', W(), { token: viewer.token });
    expect(list.status).toBe(200);
    expect(list.body.data.funnels.map((f: { id: string }) => f.id)).toEqual([funnelId]);
    expect((await call('GET', `${W()}/${funnelId}`, { token: viewer.token })).body.data.funnel.name).toBe(
      'Blog to signup',
    );

    const other = await call('POST', W(), {
      token: owner.token,
      body: { name: 'Two steps', steps: [{ path: '/blog/*' }, { path: '/pricing' }] },
    });
    expect(other.status).toBe(201);
    const id = other.body.data.funnel.id;
    const put = await call('PUT', `${W()}/${id}`, {
      token: owner.token,
      body: { name: 'Renamed', steps: [{ goal_id: pricingGoal }, { goal_id: signupGoal }] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.funnel.name).toBe('Renamed');
    expect(put.body.data.funnel.steps.map((s: { name: string }) => s.name)).toEqual(['Visit /pricing', 'Signup']);
    const dup = await call('PUT', `${W()}/${id}`, { token: owner.token, body: { name: 'Blog to signup' } });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await call('DELETE', `${W()}/${id}`, { token: owner.token })).body.data).toEqual({ deleted: true });
    expect((await call('GET', `${W()}/${id}`, { token: owner.token })).status).toBe(404);
  });

  it('refuses bad steps with INVALID_FUNNEL_STEPS naming the step', async () => {
    const bad: [unknown, RegExp][] = [
      [[{ path: '/blog/*' }], /2 to 8 steps/],
      [Array.from({ length: 9 }, (_, i) => ({ path: `/p/${i}` })), /2 to 8 steps/],
      [[{ path: '/blog/*' }, { goal_id: otherSiteGoal }], /^steps\.1\.goal_id: not a goal of this website/],
      [[{ path: '/blog/*' }, { goal_id: randomUUID() }], /^steps\.1\.goal_id/],
      [[{ path: 'pricing' }, { path: '/a' }], /^steps\.0\.path: must start with \/ or \*/],
      [[{ path: '/a' }, { path: '/a/*/*/*/*/*/*/*/*/*/*/*' }], /^steps\.1\.path: may hold at most/],
      [[{ path: '/a', goal_id: signupGoal }, { path: '/b' }], /either a goal_id or a path/],
      [[{}, { path: '/b' }], /either a goal_id or a path/],
      [[{ path: '/a' }, { path: '/a' }], /only once/],
      [[{ goal_id: 'not-a-uuid' }, { path: '/a' }], /^steps\.0\.goal_id: must be a UUID/],
      ['two steps', /steps/],
    ];
    for (const [steps, message] of bad) {
      const res = await call('POST', W(), { token: owner.token, body: { name: 'Bad', steps } });
      expect([res.status, res.body.error.code]).toEqual([400, 'INVALID_FUNNEL_STEPS']);
      expect(res.body.error.message).toMatch(message);
    }
    const noName = await call('POST', W(), { token: owner.token, body: { steps: STEPS() } });
    expect([noName.status, noName.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const put = await call('PUT', `${W()}/${funnelId}`, { token: owner.token, body: { steps: [{ path: '/a' }] } });
    expect([put.status, put.body.error.code]).toEqual([400, 'INVALID_FUNNEL_STEPS']);
    const names = await ctx.pool.query('SELECT name FROM funnels WHERE website_id = $1', [site.id]);
    expect(names.rows).toEqual([{ name: 'Blog to signup' }]);
  });

  it('lets viewers read but not change; another team sees nothing', async () => {
    for (const [method, path, body] of [
      ['POST', W(), { name: 'V', steps: STEPS() }],
      ['PUT', `${W()}/${funnelId}`, { name: 'V' }],
      ['DELETE', `${W()}/${funnelId}`, undefined],
    ] as const) {
      const res = await call(method, path, { token: viewer.token, body });
      expect([method, res.status, res.body.error.code]).toEqual([method, 403, 'FORBIDDEN']);
    }
    for (const [method, path] of [
      ['GET', W()],
      ['GET', `${W()}/${funnelId}`],
      ['GET', `${W()}/${funnelId}/results?period=7d`],
      ['POST', W()],
      ['DELETE', `${W()}/${funnelId}`],
    ] as const) {
      const body = method === 'POST' ? { name: 'S', steps: STEPS() } : undefined;
      const res = await call(method, path, { token: stranger.token, body });
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    // A funnel id under another website of the same team, an unknown id, and an id that is not a UUID.
    for (const path of [
      `/api/websites/${otherSite.id}/funnels/${funnelId}`,
      `${W()}/${randomUUID()}/results`,
      `${W()}/not-a-uuid`,
    ]) {
      expect((await call('GET', path, { token: owner.token })).status).toBe(404);
    }
  });

  it('deleting a goal deletes the funnels that use it', async () => {
    const goal = await call('POST', `/api/websites/${site.id}/goals`, {
      token: owner.token,
      body: { kind: 'purchase', name: 'Bought' },
    });
    const made = await call('POST', W(), {
      token: owner.token,
      body: { name: 'To purchase', steps: [{ path: '/pricing' }, { goal_id: goal.body.data.goal.id }] },
    });
    expect(made.status).toBe(201);
    await call('DELETE', `/api/websites/${site.id}/goals/${goal.body.data.goal.id}`, { token: owner.token });
    expect((await call('GET', `${W()}/${made.body.data.funnel.id}`, { token: owner.token })).status).toBe(404);
    expect((await call('GET', `${W()}/${funnelId}`, { token: owner.token })).status).toBe(200);
  });
});

describe('results', () => {
  const results = (query: string, token = viewer.token) =>
    call('GET', `${W()}/${funnelId}/results?${query}`, { token });
  const filters = (f: unknown) => `period=7d&filters=${encodeURIComponent(JSON.stringify(f))}`;

  it('counts visitors per step in order within one visit, with conversion and drop-off', async () => {
    const res = await results('period=7d');
    expect(res.status).toBe(200);
    expect(res.body.data.steps).toEqual(expected([8, 5, 3]));
    expect(res.body.data.totals).toEqual({ entered: 8, completed: 3, conversion_rate: 37.5, dropoff: 5 });
    expect(res.body.data.funnel).toEqual({ id: funnelId, name: 'Blog to signup' });
    expect(res.body.data.meta).toMatchObject({ period: '7d', filters_applied: [] });
    // Spelled out once: 5 of 8 is 62.5 %, 3 of 5 is 60 %.
    expect(res.body.data.steps.map((s: { step_conversion_rate: number }) => s.step_conversion_rate)).toEqual([
      100, 62.5, 60,
    ]);
  });

  it('a visit-key filter selects visits; a page filter narrows the pageview steps only', async () => {
    // Country DE: V1 3, V2 2, V3 1, V5 3.
    expect((await results(filters([['is', 'country', ['DE']]]))).body.data.steps).toEqual(expected([4, 3, 2]));
    // Without /blog/b pageviews: V2 never enters (0), V8's second visit has no step 1 (V8 → 1).
    const page = await results(filters([['is_not', 'page', ['/blog/b']]]));
    expect(page.body.data.steps).toEqual(expected([7, 3, 2]));
    expect(page.body.data.meta.filters_applied).toEqual([{ key: 'page', operator: 'is_not', values: ['/blog/b'] }]);
    const both = filters([
      ['is', 'country', ['DE']],
      ['is_not', 'page', ['/blog/b']],
    ]);
    expect((await results(both)).body.data.steps).toEqual(expected([3, 2, 2]));
    // v1 syntax too.
    expect((await results('period=7d&filters=country!=DE')).body.data.steps).toEqual(expected([4, 2, 1]));
  });

  it('binds patterns with quotes and regular-expression characters (no 500)', async () => {
    const made = await call('POST', W(), {
      token: owner.token,
      body: { name: 'Odd', steps: [{ path: "/it's (a) [b]+{c}\\*" }, { path: '/blog/*' }] },
    });
    expect(made.status).toBe(201);
    const res = await call('GET', `${W()}/${made.body.data.funnel.id}/results?period=7d`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.totals).toEqual({ entered: 0, completed: 0, conversion_rate: 0, dropoff: 0 });
    await call('DELETE', `${W()}/${made.body.data.funnel.id}`, { token: owner.token });
  });

  it('is empty outside the data and refuses bad periods and filters with their codes', async () => {
    const old = await results('period=day&date=2020-01-01');
    expect(old.body.data.steps).toEqual(expected([0, 0, 0]));
    expect(old.body.data.totals).toEqual({ entered: 0, completed: 0, conversion_rate: 0, dropoff: 0 });
    for (const [query, code] of [
      ['period=3d', 'INVALID_PERIOD'],
      ['period=custom:2026-02-01,2026-01-01', 'INVALID_CUSTOM_PERIOD'],
      ['period=7d&date=yesterday', 'VALIDATION_ERROR'],
      [filters([['is', 'planet', ['Mars']]]), 'UNKNOWN_FILTER_KEY'],
      [filters([['is', 'country', []]]), 'EMPTY_FILTER_VALUE'],
      [filters([['is', 'goal', ['Signup']]]), 'UNKNOWN_FILTER_KEY'],
      [
        filters([
          [
            'or',
            [
              ['is', 'country', ['DE']],
              ['is', 'page', ['/a']],
            ],
          ],
        ]),
        'VALIDATION_ERROR',
      ],
      ['period=7d&filters=%5Bnot%20json', 'VALIDATION_ERROR'],
    ]) {
      const res = await results(query);
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, code]);
    }
  });
});

describe('External API', () => {
  const path = (websiteId = site.id, id = funnelId) => `/api/external/v1/analytics/${websiteId}/funnels/${id}`;

  it('answers the same counts for a key and a signed-in reader, with the range and filters', async () => {
    const res = await call('GET', `${path()}?range=7d`, { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.body.data.steps).toEqual(expected([8, 5, 3]));
    expect(res.body.data).toMatchObject({ time_range: '7d', totals: { entered: 8, completed: 3 } });
    const signedIn = await call('GET', `${path()}?range=7d`, { token: viewer.token });
    expect(signedIn.body.data.steps).toEqual(res.body.data.steps);
    const de = await call('GET', `${path()}?range=7d&filters=${encodeURIComponent('[["is","country",["DE"]]]')}`, {
      apiKey: key,
    });
    expect(de.body.data.steps).toEqual(expected([4, 3, 2]));
  });

  it('404 for another team, an unknown funnel or one of another website; 400 for bad input', async () => {
    expect((await call('GET', path(), { apiKey: strangerKey })).status).toBe(404);
    expect((await call('GET', path(site.id, randomUUID()), { apiKey: key })).status).toBe(404);
    expect((await call('GET', path(otherSite.id), { apiKey: key })).status).toBe(404);
    const range = await call('GET', `${path()}?range=2w`, { apiKey: key });
    expect([range.status, range.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    for (const filters of ['planet==Mars', '[["is","goal",["Signup"]]]']) {
      const filter = await call('GET', `${path()}?filters=${encodeURIComponent(filters)}`, { apiKey: key });
      expect([filter.status, filter.body.error.code]).toEqual([400, 'UNKNOWN_FILTER_KEY']);
    }
  });
});
