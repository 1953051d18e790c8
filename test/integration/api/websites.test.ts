import { setTeamPlan } from '../../../lib/accounts/teams';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
});
afterAll(() => ctx.close());

describe('websites', () => {
  it('creates websites with unique tracking codes and default settings, lists and reads them', async () => {
    const a = await call('POST', '/api/websites', {
      token: owner.token,
      body: { domain: 'Shop.Example.com', name: 'Shop', timezone: 'Europe/Berlin' },
    });
    expect(a.status).toBe(201);
    expect(a.body.data.website).toMatchObject({
      domain: 'shop.example.com',
      name: 'Shop',
      is_active: true,
      team_id: owner.teamId,
      user_id: owner.id,
      timezone: 'Europe/Berlin',
      settings: { track_outbound_links: true, track_downloads: true, session_replay: false, heatmaps: false },
    });
    const b = await createWebsite(ctx, owner, 'blog.example.com');
    expect(b.tracking_code).not.toBe(a.body.data.website.tracking_code);
    const list = await call('GET', '/api/websites', { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(list.body.data.websites.length);
    expect(list.body.data.websites.map((w: { id: string }) => w.id)).toEqual(
      expect.arrayContaining([a.body.data.website.id, b.id]),
    );
    const one = await call('GET', `/api/websites/${b.id}`, { token: owner.token });
    expect(one.body.data.website.id).toBe(b.id);
  });

  it('validates input: bad domain, bad timezone, no token', async () => {
    expect(
      (await call('POST', '/api/websites', { token: owner.token, body: { domain: 'not a domain', name: 'x' } })).status,
    ).toBe(400);
    const tz = await call('POST', '/api/websites', {
      token: owner.token,
      body: { domain: 'ok.example.com', name: 'x', timezone: 'Mars/Olympus' },
    });
    expect(tz.status).toBe(400);
    expect(tz.body.error.message).toMatch(/timezone/);
    expect((await call('POST', '/api/websites', { body: { domain: 'ok.example.com', name: 'x' } })).status).toBe(401);
    expect((await call('GET', '/api/websites/not-a-uuid', { token: owner.token })).status).toBe(404);
  });

  it('enforces the plan website cap with 403 PLAN_LIMIT_REACHED', async () => {
    const free = await registerUser(ctx, 'free', 'capped');
    await createWebsite(ctx, free, 'first.example.com');
    const second = await call('POST', '/api/websites', {
      token: free.token,
      body: { domain: 'second.example.com', name: 'Second' },
    });
    expect(second.status).toBe(403);
    expect(second.body.error.code).toBe('PLAN_LIMIT_REACHED');
  });

  it('updates general settings (editor) and returns the spec fields', async () => {
    const site = await createWebsite(ctx, owner, 'general.example.com');
    const res = await call('PUT', `/api/websites/${site.id}/general`, {
      token: owner.token,
      body: {
        name: 'Renamed',
        timezone: 'America/New_York',
        primary_color: '#112233',
        kpi_goal: 1000,
        public_dashboard: true,
        allowed_domains: ['general.example.com', 'www.general.example.com'],
        tracking_code: 'hijack',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: site.id,
      domain: 'general.example.com',
      name: 'Renamed',
      timezone: 'America/New_York',
      primary_color: '#112233',
      kpi_goal: 1000,
      public_dashboard: true,
      allowed_domains: ['general.example.com', 'www.general.example.com'],
    });
    expect(typeof res.body.data.updated_at).toBe('string');
    const stored = await ctx.pool.query('SELECT tracking_code FROM websites WHERE id = $1', [site.id]);
    expect(stored.rows[0].tracking_code).toBe(site.tracking_code);
    const bad = await call('PUT', `/api/websites/${site.id}/general`, {
      token: owner.token,
      body: { allowed_domains: 'x.com' },
    });
    expect(bad.status).toBe(400);
  });

  it('deletes a website (admin) with its analytics rows', async () => {
    const site = await createWebsite(ctx, owner, 'delete.example.com');
    const keep = await createWebsite(ctx, owner, 'keep.example.com');
    await ctx.clickhouse.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: [site.id, site.id, keep.id].map((website_id, i) => ({
        website_id,
        event_id: `00000000-0000-4000-8000-00000000000${i}`,
        type: 'pageview',
        ts: '2026-11-01 10:00:00.000',
        received_at: '2026-11-01 10:00:00.000',
        // Sessions too: their table keeps a projection that the purge's lightweight delete must rebuild.
        session_id: `s-${i}`,
        expire_at: '2030-01-01 00:00:00',
      })),
    });
    const res = await call('DELETE', `/api/websites/${site.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deleted: true });
    expect((await call('GET', `/api/websites/${site.id}`, { token: owner.token })).status).toBe(404);
    const rows = await (
      await ctx.clickhouse.query({
        query: 'SELECT toString(website_id) AS w, count() AS n FROM events GROUP BY w',
        format: 'JSONEachRow',
      })
    ).json<{ w: string; n: string }>();
    expect(rows).toEqual([{ w: keep.id, n: '1' }]);
    // Read through the start-ordered projection (a start_ts range) as well as the table's own order.
    for (const where of ['1', "start_ts >= '2026-11-01 00:00:00' AND start_ts < '2026-11-02 00:00:00'"]) {
      const sessions = await (
        await ctx.clickhouse.query({
          query: `SELECT toString(website_id) AS w, session_id AS s FROM sessions WHERE ${where}`,
          format: 'JSONEachRow',
        })
      ).json<{ w: string; s: string }>();
      expect(sessions).toEqual([{ w: keep.id, s: 's-2' }]);
    }
  });
});

describe('roles and isolation between teams', () => {
  let viewer: TestUser;
  let editor: TestUser;
  let outsider: TestUser;
  let siteId: string;

  beforeAll(async () => {
    viewer = await registerUser(ctx, 'free', 'viewer');
    editor = await registerUser(ctx, 'free', 'editor');
    outsider = await registerUser(ctx, 'pro', 'outsider');
    siteId = (await createWebsite(ctx, owner, 'roles.example.com')).id;
    await setTeamPlan(ctx.pool, owner.teamId, 'scale', 'scale');
    for (const [u, role] of [
      [viewer, 'viewer'],
      [editor, 'editor'],
    ] as const) {
      const r = await call('POST', `/api/websites/${siteId}/team-members`, {
        token: owner.token,
        body: { email: u.email, role },
      });
      expect(r.status).toBe(201);
    }
  });

  it('a viewer can read but not edit, manage members or create keys', async () => {
    expect((await call('GET', `/api/websites/${siteId}`, { token: viewer.token })).status).toBe(200);
    expect((await call('GET', `/api/websites/${siteId}/goals`, { token: viewer.token })).status).toBe(200);
    const edit = await call('PUT', `/api/websites/${siteId}/general`, { token: viewer.token, body: { name: 'x' } });
    expect(edit.status).toBe(403);
    expect(edit.body.error.code).toBe('FORBIDDEN');
    expect(
      (await call('POST', `/api/websites/${siteId}/goals`, { token: viewer.token, body: { name: 'Signup' } })).status,
    ).toBe(403);
    expect(
      (
        await call('POST', `/api/websites/${siteId}/team-members`, {
          token: viewer.token,
          body: { email: outsider.email },
        })
      ).status,
    ).toBe(403);
    const key = await call('POST', `/api/teams/${owner.teamId}/api-keys`, {
      token: viewer.token,
      body: { name: 'k', permission: 'full_access' },
    });
    expect(key.status).toBe(403);
    expect((await call('DELETE', `/api/websites/${siteId}`, { token: viewer.token })).status).toBe(403);
  });

  it('an editor can edit settings and goals but not members or deletion', async () => {
    expect(
      (await call('PUT', `/api/websites/${siteId}/general`, { token: editor.token, body: { name: 'Edited' } })).status,
    ).toBe(200);
    expect(
      (await call('POST', `/api/websites/${siteId}/goals`, { token: editor.token, body: { name: 'EditorGoal' } }))
        .status,
    ).toBe(201);
    expect(
      (
        await call('PUT', `/api/websites/${siteId}/team-members/${viewer.id}`, {
          token: editor.token,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(403);
    expect((await call('DELETE', `/api/websites/${siteId}`, { token: editor.token })).status).toBe(403);
  });

  it("a member of another team gets 404 on this team's websites, keys, goals and members", async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', `/api/websites/${siteId}`],
      ['PUT', `/api/websites/${siteId}/general`, { name: 'x' }],
      ['DELETE', `/api/websites/${siteId}`],
      ['GET', `/api/websites/${siteId}/goals`],
      ['POST', `/api/websites/${siteId}/goals`, { name: 'x' }],
      ['GET', `/api/websites/${siteId}/team-members`],
      ['POST', `/api/websites/${siteId}/team-members`, { email: outsider.email }],
      ['GET', `/api/teams/${owner.teamId}/api-keys`],
      ['POST', `/api/teams/${owner.teamId}/api-keys`, { name: 'k', permission: 'full_access' }],
      ['GET', `/api/teams/${owner.teamId}/permissions`],
      ['GET', `/api/teams/${owner.teamId}/members`],
    ];
    for (const [method, path, body] of paths) {
      const res = await call(method, path, { token: outsider.token, body });
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const list = await call('GET', '/api/websites', { token: outsider.token });
    expect(list.body.data.websites.map((w: { id: string }) => w.id)).not.toContain(siteId);
  });

  it('reports permissions per role', async () => {
    const v = await call('GET', `/api/teams/${owner.teamId}/permissions`, { token: viewer.token });
    expect(v.status).toBe(200);
    expect(v.body.data).toMatchObject({
      team_id: owner.teamId,
      role: 'viewer',
      plan: 'scale',
      plan_limits: { maxWebsites: 50, maxTeamMembers: 20, eventsPerMonth: 10_000_000, dataRetentionDays: 730 },
      permissions: { can_manage_billing: false, can_manage_team: false, can_edit_settings: false, can_view: true },
    });
    expect(v.body.data.current_usage.team_members).toBe(3);
    const o = await call('GET', `/api/teams/${owner.teamId}/permissions`, { token: owner.token });
    expect(o.body.data.permissions).toEqual({
      can_manage_billing: true,
      can_manage_team: true,
      can_edit_settings: true,
      can_view: true,
    });
  });
});
