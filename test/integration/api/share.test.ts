// Shared dashboards (issue 24 point 5): the sharing settings, the rules for a share token (not shared 404,
// password 401, throttle 429), and what the token reads — its website's Stats v2 aggregates and nothing
// else: no other website, no visitor-level data, annotations, exports or settings; it expires and is revoked
// by a password change and by turning sharing off. Every answer is checked against the OpenAPI document.
import { randomUUID } from 'node:crypto';
import { SHARE_ATTEMPTS_PER_CLIENT } from '../../../api/routes/share';
import { chTime } from '../../../lib/ingest/job/rows';
import { SHARE_TOKEN_TTL_SECONDS } from '../../../lib/public/share';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { withDateAt } from '../../helpers/clock';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let stranger: TestUser;
let site: { id: string; tracking_code: string };
let other: { id: string; tracking_code: string };
const PASSWORD = 'harbour lights 42';

// Each test speaks from its own address (TRUST_PROXY), so one test's throttle never touches another's.
let nextAddress = 1;
const address = () => ({ 'x-forwarded-for': `203.0.113.${nextAddress++}` });

const sharing = (websiteId: string, body: unknown, user = owner) =>
  call('PUT', `/api/websites/${websiteId}/sharing`, { token: user.token, body });
const tokenFor = async (websiteId: string, password?: string, headers = address()) =>
  call('POST', `/api/share/${websiteId}/token`, { body: password === undefined ? {} : { password }, headers });
const query = (token: string, siteId: string, headers = address()) =>
  call('POST', '/api/v2/query', {
    token,
    headers,
    body: { site_id: siteId, metrics: ['visitors', 'pageviews'], date_range: '7d' },
  });

beforeAll(async () => {
  ctx = await createTestContext({ TRUST_PROXY: 'loopback' });
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'share-owner');
  stranger = await registerUser(ctx, 'pro', 'share-stranger');
  site = await createWebsite(ctx, owner, 'harbour.example.com');
  other = await createWebsite(ctx, owner, 'other.example.com');
  // Three visitors, four pageviews on the shared site in the last day; one on the other site.
  const now = Date.now();
  const visitors = [randomUUID(), randomUUID(), randomUUID()];
  const rows = [
    { w: site.id, v: visitors[0], ago: 60 },
    { w: site.id, v: visitors[0], ago: 50 },
    { w: site.id, v: visitors[1], ago: 40 },
    { w: site.id, v: visitors[2], ago: 30 },
    { w: other.id, v: randomUUID(), ago: 20 },
  ].map((r) =>
    eventRow(r.w, {
      ts: new Date(now - r.ago * 60_000).toISOString(),
      visitor_id: r.v,
      session_id: r.v,
      received_at: chTime(now - r.ago * 60_000),
    }),
  );
  await storeRows(ctx.clickhouse, rows);
});
afterAll(async () => {
  await ctx.close();
});

describe('sharing settings', () => {
  it('reads off by default; members see it, only admins change it', async () => {
    const res = await call('GET', `/api/websites/${site.id}/sharing`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      website_id: site.id,
      public_dashboard: false,
      password_set: false,
      share_path: `/share/${site.id}`,
    });
    expect((await call('GET', `/api/websites/${site.id}/sharing`, { token: stranger.token })).status).toBe(404);
    expect((await sharing(site.id, { public_dashboard: true }, stranger)).status).toBe(404);
    expect((await call('GET', `/api/websites/${site.id}/sharing`)).status).toBe(401);
    // An editor of the team reads it; changing it is for admins.
    const editor = await registerUser(ctx, 'pro', 'share-editor');
    const added = await call('POST', `/api/websites/${site.id}/team-members`, {
      token: owner.token,
      body: { email: editor.email, role: 'editor' },
    });
    expect(added.status).toBe(201);
    expect((await call('GET', `/api/websites/${site.id}/sharing`, { token: editor.token })).status).toBe(200);
    expect((await sharing(site.id, { public_dashboard: true }, editor)).status).toBe(403);
  });

  it('refuses an empty change and a short password', async () => {
    expect((await sharing(site.id, {})).status).toBe(400);
    const short = await sharing(site.id, { password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toMatch(/password/);
  });
});

describe('share tokens', () => {
  it('a website that is not shared, or does not exist, answers 404 alike', async () => {
    for (const id of [site.id, randomUUID(), 'not-a-uuid']) {
      expect((await call('GET', `/api/share/${id}`, { headers: address() })).status).toBe(404);
      expect((await tokenFor(id)).status).toBe(404);
    }
  });

  it('without a password, anyone gets a token that reads the website’s aggregates', async () => {
    const on = await sharing(site.id, { public_dashboard: true });
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({ public_dashboard: true, password_set: false });
    const info = await call('GET', `/api/share/${site.id}`, { headers: address() });
    expect(info.status).toBe(200);
    expect(info.body.data).toEqual({
      website_id: site.id,
      name: 'Site harbour.example.com',
      domain: 'harbour.example.com',
      timezone: 'UTC',
      password_required: false,
    });
    const t = await tokenFor(site.id);
    expect(t.status).toBe(200);
    const bare = await call('POST', `/api/share/${site.id}/token`, { headers: address() });
    expect(bare.status).toBe(200);
    expect((await call('POST', `/api/share/${site.id}/token`, { headers: address(), body: [] })).status).toBe(400);
    expect(t.body.data.expires_in).toBe(SHARE_TOKEN_TTL_SECONDS);
    const res = await query(t.body.data.token, site.id);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([{ metrics: [3, 4], dimensions: [] }]);
    // By domain too, as Plausible names sites.
    expect((await query(t.body.data.token, 'harbour.example.com')).body.results[0].metrics).toEqual([3, 4]);
  });

  it('with a password: none or a wrong one is 401, the right one 200; the hash is never shown', async () => {
    const set = await sharing(site.id, { password: PASSWORD });
    expect(set.status).toBe(200);
    expect(set.body.data.password_set).toBe(true);
    expect(set.text).not.toContain('argon2');
    const read = await call('GET', `/api/websites/${site.id}/sharing`, { token: owner.token });
    expect(read.text).not.toContain('argon2');
    const { rows } = await ctx.pool.query('SELECT password_hash FROM website_shares WHERE website_id = $1', [site.id]);
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);

    expect((await call('GET', `/api/share/${site.id}`, { headers: address() })).body.data.password_required).toBe(true);
    const none = await tokenFor(site.id);
    expect(none.status).toBe(401);
    const wrong = await tokenFor(site.id, 'harbour lights 43');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toBe('Wrong password');
    const right = await tokenFor(site.id, PASSWORD);
    expect(right.status).toBe(200);
    expect((await query(right.body.data.token, site.id)).status).toBe(200);
  });

  it('limits password attempts per address and dashboard (429 with Retry-After); other addresses go on', async () => {
    const from = address();
    for (let i = 0; i < SHARE_ATTEMPTS_PER_CLIENT; i++) {
      expect((await tokenFor(site.id, `guess number ${i}`, from)).status).toBe(401);
    }
    const refused = await tokenFor(site.id, PASSWORD, from);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await tokenFor(site.id, PASSWORD)).status).toBe(200);
  });
});

describe('what a share token reads', () => {
  let token: string;
  beforeAll(async () => {
    await sharing(other.id, { public_dashboard: true });
    token = (await tokenFor(site.id, PASSWORD)).body.data.token;
  });

  it('reads its own website only: another website, shared or not, is 404', async () => {
    expect((await query(token, other.id)).status).toBe(404);
    expect((await query(token, 'other.example.com')).status).toBe(404);
    const strangerSite = await createWebsite(ctx, stranger, 'stranger.example.com');
    expect((await query(token, strangerSite.id)).status).toBe(404);
  });

  it('is refused by everything else: settings, visit lists, replays, heatmaps, errors, annotations, exports', async () => {
    const refused = [
      ['GET', `/api/websites/${site.id}`],
      ['GET', `/api/websites/${site.id}/sharing`],
      ['PUT', `/api/websites/${site.id}/general`],
      ['GET', '/api/websites'],
      ['GET', `/api/websites/${site.id}/errors`],
      ['GET', `/api/external/v1/analytics/${site.id}`],
      ['GET', `/api/external/v1/analytics/${site.id}/visitors`],
      ['GET', `/api/external/v1/replays/${site.id}/sessions`],
      ['GET', `/api/external/v1/heatmaps/${site.id}/pages`],
      ['GET', `/api/external/v1/errors/${site.id}/groups`],
      ['GET', `/api/external/v2/export?website_id=${site.id}`],
      ['GET', `/api/external/v2/stats/aggregate?site_id=${site.id}&period=7d&metrics=visitors`],
      ['GET', `/api/annotations?website_id=${site.id}`],
      ['GET', '/api/users/me'],
      ['POST', '/api/auth/token'],
    ] as const;
    for (const [method, path] of refused) {
      const res = await call(method, path, { token, ...(method === 'PUT' ? { body: { name: 'x' } } : {}) });
      expect([method, path, res.status]).toEqual([method, path, 401]);
    }
  });

  it('ends when the password changes and when sharing is turned off, however it is turned off', async () => {
    const before = (await tokenFor(site.id, PASSWORD)).body.data.token;
    expect((await sharing(site.id, { password: 'a new harbour 99' })).status).toBe(200);
    expect((await query(before, site.id)).status).toBe(401);
    const fresh = (await tokenFor(site.id, 'a new harbour 99')).body.data.token;
    expect((await query(fresh, site.id)).status).toBe(200);
    // Off through the general settings (the websites trigger revokes), then on again: the old token stays dead.
    expect(
      (await call('PUT', `/api/websites/${site.id}/general`, { token: owner.token, body: { public_dashboard: false } }))
        .status,
    ).toBe(200);
    expect((await query(fresh, site.id)).status).toBe(401);
    expect((await call('GET', `/api/share/${site.id}`, { headers: address() })).status).toBe(404);
    expect((await sharing(site.id, { public_dashboard: true, password: null })).body.data).toMatchObject({
      public_dashboard: true,
      password_set: false,
    });
    expect((await query(fresh, site.id)).status).toBe(401);
    const open = (await tokenFor(site.id)).body.data.token;
    expect((await query(open, site.id)).status).toBe(200);
  });

  it('expires after its lifetime', async () => {
    const t = (await tokenFor(site.id)).body.data.token;
    expect((await query(t, site.id)).status).toBe(200);
    const later = Date.now() + (SHARE_TOKEN_TTL_SECONDS + 60) * 1000;
    const res = await withDateAt(later, () => query(t, site.id), true);
    expect(res.status).toBe(401);
  });
});
