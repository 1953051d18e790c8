import { setTeamPlan } from '../../../lib/accounts/teams';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let siteId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
  siteId = (await createWebsite(ctx, owner, 'keys.example.com')).id;
});
afterAll(() => ctx.close());

describe('API keys', () => {
  it('shows the plaintext once, stores only its SHA-256 and a visible prefix', async () => {
    const created = await createApiKey(ctx, owner);
    expect(created.key).toMatch(/^tmk_[A-Za-z0-9_-]{40}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    const dump = await ctx.pool.query(`SELECT row_to_json(k)::text AS row FROM api_keys k`);
    for (const { row } of dump.rows) expect(row).not.toContain(created.key);
    const listed = await call('GET', `/api/teams/${owner.teamId}/api-keys`, { token: owner.token });
    expect(listed.status).toBe(200);
    const mine = listed.body.data.api_keys.find((k: { id: string }) => k.id === created.id);
    expect(mine).toMatchObject({
      name: 'test key',
      permission: 'full_access',
      website_id: null,
      prefix: created.prefix,
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.key);
  });

  it('works on the External API until revoked, then 401', async () => {
    const { id, key } = await createApiKey(ctx, owner);
    const ok = await call('POST', '/api/external/v1/websites', {
      apiKey: key,
      body: { domain: 'api.example.com', name: 'Via API' },
    });
    expect(ok.status).toBe(201);
    expect(Object.keys(ok.body.data.website).sort()).toEqual([
      'created_at',
      'domain',
      'id',
      'is_active',
      'name',
      'team_id',
      'tracking_code',
    ]);
    const viaBearer = await call('POST', '/api/external/v1/websites', {
      token: key,
      body: { domain: 'bearer.example.com', name: 'Bearer' },
    });
    expect(viaBearer.status).toBe(201);
    expect((await call('DELETE', `/api/teams/${owner.teamId}/api-keys/${id}`, { token: owner.token })).status).toBe(
      200,
    );
    const after = await call('POST', '/api/external/v1/websites', {
      apiKey: key,
      body: { domain: 'late.example.com', name: 'Late' },
    });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('UNAUTHORIZED');
    expect((await call('DELETE', `/api/teams/${owner.teamId}/api-keys/${id}`, { token: owner.token })).status).toBe(
      404,
    );
  });

  it('rejects a missing or made-up key with 401', async () => {
    expect(
      (await call('POST', '/api/external/v1/websites', { body: { domain: 'x.example.com', name: 'x' } })).status,
    ).toBe(401);
    expect(
      (
        await call('POST', '/api/external/v1/websites', {
          apiKey: `tmk_${'a'.repeat(40)}`,
          body: { domain: 'x.example.com', name: 'x' },
        })
      ).status,
    ).toBe(401);
  });

  it('site_access keys need a website of the team and cannot create websites', async () => {
    const missing = await call('POST', `/api/teams/${owner.teamId}/api-keys`, {
      token: owner.token,
      body: { name: 'k', permission: 'site_access' },
    });
    expect(missing.status).toBe(400);
    const other = await registerUser(ctx, 'pro', 'other');
    const otherSite = await createWebsite(ctx, other, 'other.example.com');
    const foreign = await call('POST', `/api/teams/${owner.teamId}/api-keys`, {
      token: owner.token,
      body: { name: 'k', permission: 'site_access', website_id: otherSite.id },
    });
    expect(foreign.status).toBe(404);
    const site = await createApiKey(ctx, owner, 'site_access', siteId);
    const res = await call('POST', '/api/external/v1/websites', {
      apiKey: site.key,
      body: { domain: 'x.example.com', name: 'x' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('free teams cannot create keys, and existing keys stop working when a team drops to free', async () => {
    const free = await registerUser(ctx, 'free', 'free');
    const refused = await call('POST', `/api/teams/${free.teamId}/api-keys`, {
      token: free.token,
      body: { name: 'k', permission: 'full_access' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('API_PAID_PLAN_REQUIRED');
    const downgraded = await registerUser(ctx, 'pro', 'downgraded');
    const { key } = await createApiKey(ctx, downgraded);
    await setTeamPlan(ctx.pool, downgraded.teamId, 'free', 'free');
    const res = await call('POST', '/api/external/v1/websites', {
      apiKey: key,
      body: { domain: 'x.example.com', name: 'x' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('API_PAID_PLAN_REQUIRED');
  });
});

describe('goals', () => {
  it('creates, lists, deactivates, renames and deletes goals; names are unique per website', async () => {
    const created = await call('POST', `/api/websites/${siteId}/goals`, {
      token: owner.token,
      body: { name: 'Signup' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.goal).toMatchObject({ name: 'Signup', is_active: true, website_id: siteId });
    const dup = await call('POST', `/api/websites/${siteId}/goals`, { token: owner.token, body: { name: 'Signup' } });
    expect(dup.status).toBe(409);
    const goalId = created.body.data.goal.id;
    const off = await call('PUT', `/api/websites/${siteId}/goals/${goalId}`, {
      token: owner.token,
      body: { is_active: false },
    });
    expect(off.body.data.goal.is_active).toBe(false);
    const renamed = await call('PUT', `/api/websites/${siteId}/goals/${goalId}`, {
      token: owner.token,
      body: { name: 'Sign-up' },
    });
    expect(renamed.body.data.goal).toMatchObject({ name: 'Sign-up', is_active: false });
    const list = await call('GET', `/api/websites/${siteId}/goals`, { token: owner.token });
    expect(list.body.data.goals.map((g: { name: string }) => g.name)).toEqual(['Sign-up']);
    expect((await call('DELETE', `/api/websites/${siteId}/goals/${goalId}`, { token: owner.token })).status).toBe(200);
    expect((await call('DELETE', `/api/websites/${siteId}/goals/${goalId}`, { token: owner.token })).status).toBe(404);
    expect(
      (await call('POST', `/api/websites/${siteId}/goals`, { token: owner.token, body: { name: '' } })).status,
    ).toBe(400);
  });
});

describe('team members', () => {
  let admin: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    admin = await registerUser(ctx, 'free', 'admin');
    member = await registerUser(ctx, 'free', 'member');
  });

  it('adds by email with a default viewer role; 404 unknown email; 409 already a member', async () => {
    const added = await call('POST', `/api/websites/${siteId}/team-members`, {
      token: owner.token,
      body: { email: member.email.toUpperCase() },
    });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({
      user_id: member.id,
      role: 'viewer',
      deactivated_at: null,
      user: { id: member.id, email: member.email },
    });
    expect(
      (
        await call('POST', `/api/websites/${siteId}/team-members`, {
          token: owner.token,
          body: { email: member.email },
        })
      ).status,
    ).toBe(409);
    const unknown = await call('POST', `/api/websites/${siteId}/team-members`, {
      token: owner.token,
      body: { email: 'ghost@example.com' },
    });
    expect(unknown.status).toBe(404);
    const list = await call('GET', `/api/websites/${siteId}/team-members`, { token: member.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([owner.id, member.id]);
  });

  it('only an owner grants owner; admins manage other roles; the last owner stays', async () => {
    const a = await call('POST', `/api/websites/${siteId}/team-members`, {
      token: owner.token,
      body: { email: admin.email, role: 'admin' },
    });
    expect(a.status).toBe(201);
    const memberRow = (
      await call('GET', `/api/websites/${siteId}/team-members`, { token: owner.token })
    ).body.data.find((m: { user_id: string }) => m.user_id === member.id);
    const ownerRow = (await call('GET', `/api/websites/${siteId}/team-members`, { token: owner.token })).body.data.find(
      (m: { user_id: string }) => m.user_id === owner.id,
    );
    const toEditor = await call('PUT', `/api/websites/${siteId}/team-members/${memberRow.id}`, {
      token: admin.token,
      body: { role: 'editor' },
    });
    expect(toEditor.status).toBe(200);
    expect(toEditor.body.data.role).toBe('editor');
    expect(
      (
        await call('PUT', `/api/websites/${siteId}/team-members/${memberRow.id}`, {
          token: admin.token,
          body: { role: 'owner' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call('DELETE', `/api/websites/${siteId}/team-members/${ownerRow.id}`, { token: admin.token })).status,
    ).toBe(403);
    const demoteLast = await call('PUT', `/api/websites/${siteId}/team-members/${ownerRow.id}`, {
      token: owner.token,
      body: { role: 'admin' },
    });
    expect(demoteLast.status).toBe(409);
    expect(
      (await call('DELETE', `/api/websites/${siteId}/team-members/${ownerRow.id}`, { token: owner.token })).status,
    ).toBe(409);
    expect(
      (
        await call('PUT', `/api/websites/${siteId}/team-members/${memberRow.id}`, {
          token: owner.token,
          body: { role: 'superuser' },
        })
      ).status,
    ).toBe(400);
  });

  it('soft-deletes a member (deactivated_at set, access gone) and re-adding reactivates', async () => {
    const rows = (await call('GET', `/api/websites/${siteId}/team-members`, { token: owner.token })).body.data;
    const memberRow = rows.find((m: { user_id: string }) => m.user_id === member.id);
    const del = await call('DELETE', `/api/websites/${siteId}/team-members/${memberRow.id}`, { token: admin.token });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ deleted: true });
    const after = (await call('GET', `/api/websites/${siteId}/team-members`, { token: owner.token })).body.data.find(
      (m: { id: string }) => m.id === memberRow.id,
    );
    expect(after.deactivated_at).not.toBeNull();
    expect((await call('GET', `/api/websites/${siteId}`, { token: member.token })).status).toBe(404);
    const again = await call('POST', `/api/websites/${siteId}/team-members`, {
      token: owner.token,
      body: { email: member.email, role: 'editor' },
    });
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ id: memberRow.id, role: 'editor', deactivated_at: null });
    expect((await call('GET', `/api/websites/${siteId}`, { token: member.token })).status).toBe(200);
  });

  it('enforces the plan member cap', async () => {
    const solo = await registerUser(ctx, 'free', 'solo');
    const soloSite = await createWebsite(ctx, solo, 'solo.example.com');
    const res = await call('POST', `/api/websites/${soloSite.id}/team-members`, {
      token: solo.token,
      body: { email: member.email },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('PLAN_LIMIT_REACHED');
  });
});
