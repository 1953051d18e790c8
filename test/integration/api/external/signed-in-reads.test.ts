// A signed-in user reads their own analytics without an API key (issue 21, DESIGN §5): the External read
// endpoints and the Stats API (v1, v2) take the dashboard's Bearer JWT or session cookie for websites of the
// user's teams at role viewer or higher, give the same answer as the team's key, and charge no API quota.
// The role matrix: every member role reads, nobody else gets a 2xx.
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { pageview, startTestWorker, waitForEvents } from '../../../helpers/ingest';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let key: string;
let site: { id: string; tracking_code: string };
const members: Record<'viewer' | 'editor' | 'admin', TestUser> = {} as never;
let stranger: TestUser;
let former: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
  site = await createWebsite(ctx, owner, 'reads.example.com');
  key = (await createApiKey(ctx, owner)).key;
  for (const role of ['viewer', 'editor', 'admin'] as const) {
    members[role] = await registerUser(ctx, 'free', role);
    await ctx.pool.query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [
      owner.teamId,
      members[role].id,
      role,
    ]);
  }
  stranger = await registerUser(ctx, 'free', 'stranger');
  former = await registerUser(ctx, 'free', 'former');
  await ctx.pool.query(
    `INSERT INTO team_members (team_id, user_id, role, deactivated_at) VALUES ($1, $2, 'admin', now())`,
    [owner.teamId, former.id],
  );

  const worker = await startTestWorker(ctx);
  try {
    const events = Array.from({ length: 12 }, (_, i) =>
      pageview({ ts: Date.now() - i * 60_000 }, { url: `https://reads.example.com/${i % 3}` }),
    );
    const res = await call('POST', '/api/v1/events', {
      token: key,
      body: { trackingCode: site.tracking_code, events },
    });
    expect(res.body.acceptedCount).toBe(12);
    await waitForEvents(ctx, 12, `website_id = '${site.id}'`);
  } finally {
    await worker.stop();
  }
});
afterAll(() => ctx.close());

const endpoints = () => [
  `/api/external/v1/websites/${site.id}`,
  `/api/external/v1/analytics/${site.id}?range=7d`,
  `/api/external/v1/analytics/${site.id}/visitors?range=7d`,
  `/api/external/v1/analytics/${site.id}/pages?range=7d`,
  `/api/external/v1/analytics/${site.id}/countries?range=7d`,
  `/api/external/v1/analytics/${site.id}/technology?range=7d`,
  `/api/external/v1/heatmaps/${site.id}/pages`,
  `/api/external/v1/replays/${site.id}/sessions`,
  `/api/external/v1/errors/${site.id}/groups`,
  `/api/external/v1/stats/aggregate?site_id=${site.id}&period=7d&metrics=visitors,pageviews,bounce_rate,visit_duration`,
  `/api/external/v1/stats/timeseries?site_id=${site.id}&period=7d&metrics=visitors`,
  `/api/external/v1/stats/breakdown?site_id=${site.id}&period=7d&property=event:page&metrics=visitors,pageviews`,
  `/api/external/v2/stats/aggregate?site_id=${site.id}&period=7d&metrics=visitors,pageviews&filters=browser!=Safari`,
];

// Answers carry the time they were made; everything else must be the same.
const numbers = (body: { data?: unknown; results?: unknown }) =>
  JSON.parse(JSON.stringify(body.data ?? body).replace(/"timestamp":"[^"]+"/g, ''));

it('every member role reads every endpoint with a Bearer JWT, and gets the same answer as the key', async () => {
  for (const path of endpoints()) {
    const withKey = await call('GET', path, { apiKey: key });
    expect([path, withKey.status]).toEqual([path, 200]);
    for (const user of [owner, members.viewer, members.editor, members.admin]) {
      const res = await call('GET', path, { token: user.token });
      expect([path, res.status]).toEqual([path, 200]);
      expect(numbers(res.body)).toEqual(numbers(withKey.body));
    }
  }
  const aggregate = await call('GET', endpoints()[9], { token: members.viewer.token });
  expect(aggregate.body.data.results.pageviews.value ?? aggregate.body.data.results.pageviews).toBe(12);
});

it('nobody outside the team gets a 2xx: strangers, former members, no credential, a revoked token', async () => {
  const loggedOut = await registerUser(ctx, 'free', 'revoked');
  await ctx.pool.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'viewer')`, [
    owner.teamId,
    loggedOut.id,
  ]);
  expect((await call('POST', '/api/auth/logout', { token: loggedOut.token })).status).toBe(200);
  for (const path of endpoints()) {
    expect([path, (await call('GET', path, { token: stranger.token })).status]).toEqual([path, 404]);
    expect([path, (await call('GET', path, { token: former.token })).status]).toEqual([path, 404]);
    expect([path, (await call('GET', path)).status]).toEqual([path, 401]);
    expect([path, (await call('GET', path, { token: loggedOut.token })).status]).toEqual([path, 401]);
    expect([path, (await call('GET', path, { token: `${members.viewer.token}x` })).status]).toEqual([path, 401]);
  }
});

it('the session cookie reads too (the dashboard), and a free-plan user reads their own website', async () => {
  const login = await call('POST', '/api/auth/login', {
    body: { email: members.viewer.email, password: 'password-123' },
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('tidemark_session='))!
    .split(';')[0];
  const res = await call('GET', endpoints()[9], { headers: { cookie } });
  expect(res.status).toBe(200);
  const own = await createWebsite(ctx, stranger, 'own.example.com');
  const mine = await call('GET', `/api/external/v1/stats/aggregate?site_id=${own.id}&period=day&metrics=visitors`, {
    token: stranger.token,
  });
  expect(mine.status).toBe(200);
  // With a key, the same free team is refused: keys need a paid plan.
  const list = await call('GET', '/api/external/v1/websites', { token: stranger.token });
  expect(list.body.data.websites.map((w: { id: string }) => w.id)).toEqual([own.id]);
});

it('charges no API credits and skips the per-minute limit; key-only endpoints refuse a user', async () => {
  const before = await call('GET', '/api/external/v1/usage', { apiKey: key });
  // None of these reads is charged to the team's monthly quota.
  for (let i = 0; i < 15; i++) expect((await call('GET', endpoints()[9], { token: owner.token })).status).toBe(200);
  const after = await call('GET', '/api/external/v1/usage', { apiKey: key });
  // Only the second usage call itself was charged between the two reads.
  expect(Number(after.headers.get('x-usage-remaining'))).toBe(Number(before.headers.get('x-usage-remaining')) - 1);
  expect((await call('GET', '/api/external/v1/usage', { token: owner.token })).status).toBe(403);
  expect(
    (
      await call('POST', '/api/external/v1/websites', {
        token: owner.token,
        body: { domain: 'x.example.com', name: 'X' },
      })
    ).status,
  ).toBe(403);
});

it('the OpenAPI document says which reads take the JWT and cookie and which need a key', async () => {
  const { body: doc } = await call('GET', '/api/openapi.json');
  const schemes = (method: string, path: string) =>
    doc.paths[path][method].security.map((s: Record<string, unknown>) => Object.keys(s)[0]).sort();
  const reader = ['ApiKeyHeader', 'BearerApiKey', 'BearerJwt', 'SessionCookie'];
  expect(schemes('get', '/api/external/v1/analytics/{websiteId}')).toEqual(reader);
  expect(schemes('get', '/api/external/v2/stats/aggregate')).toEqual(reader);
  expect(schemes('get', '/api/external/v1/usage')).toEqual(['ApiKeyHeader', 'BearerApiKey']);
  expect(schemes('post', '/api/external/v1/websites')).toEqual(['ApiKeyHeader', 'BearerApiKey']);
});
