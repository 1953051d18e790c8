// DELETE /api/users/me (issue 23): the password again; refused while the user is the last owner of a team
// others use, and for the instance owner; otherwise the user, their sessions and memberships, and every team
// left without another active member go, with their websites' analytics in ClickHouse.
import { WEBSITE_TABLES } from '../../../lib/clickhouse/purge';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let instanceOwner: TestUser;
const PASSWORD = 'password-123'; // registerUser's

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  // The first account of an instance owns it.
  instanceOwner = await registerUser(ctx, 'pro', 'instance');
});
afterAll(() => ctx.close());

const del = (user: TestUser, body: unknown = { password: PASSWORD }) =>
  call('DELETE', '/api/users/me', { token: user.token, body });

async function rowCount(sql: string, params: unknown[]): Promise<number> {
  return Number((await ctx.pool.query<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) q`, params)).rows[0].n);
}

async function chRows(websiteId: string): Promise<number> {
  let total = 0;
  for (const table of WEBSITE_TABLES) {
    const rows = await (
      await ctx.clickhouse.query({
        query: `SELECT count() AS n FROM ${table} WHERE website_id = {id:UUID}`,
        query_params: { id: websiteId },
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    total += Number(rows[0].n);
  }
  return total;
}

async function addMember(owner: TestUser, siteId: string, member: TestUser, role: string): Promise<string> {
  const res = await call('POST', `/api/websites/${siteId}/team-members`, {
    token: owner.token,
    body: { email: member.email, role },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function login(user: TestUser) {
  return call('POST', '/api/auth/login', { body: { email: user.email, password: PASSWORD } });
}

test('the account goes with its personal team’s websites, analytics, keys, conversations and sessions', async () => {
  const user = await registerUser(ctx, 'pro', 'leaving');
  const site = await createWebsite(ctx, user, 'leaving.example.com');
  const key = await createApiKey(ctx, user);
  await storeRows(ctx.clickhouse, [
    eventRow(site.id, { ts: new Date(Date.now() - 60_000).toISOString() }),
    eventRow(site.id, { ts: new Date(Date.now() - 30_000).toISOString() }),
  ]);
  expect(await chRows(site.id)).toBeGreaterThan(0);
  const convo = await call('POST', '/api/conversations', { token: user.token, body: { title: 'Mine' } });
  expect(convo.status).toBe(201);
  await call('POST', '/api/onboarding/progress', { token: user.token, body: { step: 2 } });
  expect((await login(user)).status).toBe(200);
  expect(await rowCount('SELECT 1 FROM user_sessions WHERE user_id = $1', [user.id])).toBeGreaterThan(0);

  // A member of another team: that team stays, without them.
  const other = await registerUser(ctx, 'pro', 'other');
  const otherSite = await createWebsite(ctx, other, 'stays.example.com');
  await addMember(other, otherSite.id, user, 'viewer');
  const otherConvo = await call('POST', '/api/conversations', {
    token: user.token,
    body: { title: 'In their team', team_id: other.teamId },
  });
  await storeRows(ctx.clickhouse, [eventRow(otherSite.id, { ts: new Date(Date.now() - 60_000).toISOString() })]);

  const res = await del(user);
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ deleted: true });
  expect(res.headers.getSetCookie().some((c) => /^tidemark_session=;/.test(c))).toBe(true);

  expect(await rowCount('SELECT 1 FROM users WHERE id = $1', [user.id])).toBe(0);
  expect(await rowCount('SELECT 1 FROM teams WHERE id = $1', [user.teamId])).toBe(0);
  expect(await rowCount('SELECT 1 FROM websites WHERE id = $1', [site.id])).toBe(0);
  expect(await rowCount('SELECT 1 FROM api_keys WHERE id = $1', [key.id])).toBe(0);
  expect(await rowCount('SELECT 1 FROM conversations WHERE team_id = $1', [user.teamId])).toBe(0);
  expect(await rowCount('SELECT 1 FROM onboarding_progress WHERE user_id = $1', [user.id])).toBe(0);
  expect(await rowCount('SELECT 1 FROM user_sessions WHERE user_id = $1', [user.id])).toBe(0);
  expect(await rowCount('SELECT 1 FROM team_members WHERE user_id = $1', [user.id])).toBe(0);
  expect(await chRows(site.id)).toBe(0);

  // Its credentials no longer work.
  expect((await call('GET', '/api/users/me', { token: user.token })).status).toBe(401);
  expect((await login(user)).status).toBe(401);
  expect((await call('GET', '/api/external/v1/usage', { apiKey: key.key })).status).toBe(401);

  // The other team keeps its website, its analytics and the conversation the user started there.
  expect((await call('GET', `/api/websites/${otherSite.id}`, { token: other.token })).status).toBe(200);
  expect(await chRows(otherSite.id)).toBeGreaterThan(0);
  expect(
    (await call('GET', `/api/conversations/${otherConvo.body.data.id}`, { token: other.token })).body.data.title,
  ).toBe('In their team');
});

test('the last owner of a team others use is refused with 409 LAST_OWNER until another member is an owner', async () => {
  const owner = await registerUser(ctx, 'pro', 'owner');
  const member = await registerUser(ctx, 'free', 'member');
  const site = await createWebsite(ctx, owner, 'shared.example.com');
  const memberId = await addMember(owner, site.id, member, 'admin');
  await storeRows(ctx.clickhouse, [eventRow(site.id, { ts: new Date(Date.now() - 60_000).toISOString() })]);

  const refused = await del(owner);
  expect([refused.status, refused.body.error.code]).toEqual([409, 'LAST_OWNER']);
  expect(refused.body.error.message).toContain(owner.teamId);
  expect((await call('GET', '/api/users/me', { token: owner.token })).status).toBe(200);
  expect(await chRows(site.id)).toBeGreaterThan(0);

  const promoted = await call('PUT', `/api/websites/${site.id}/team-members/${memberId}`, {
    token: owner.token,
    body: { role: 'owner' },
  });
  expect(promoted.status).toBe(200);
  expect((await del(owner)).status).toBe(200);
  // The team stays with the member who is now its owner, and so does its data.
  expect((await call('GET', `/api/websites/${site.id}`, { token: member.token })).status).toBe(200);
  expect(await chRows(site.id)).toBeGreaterThan(0);
  const members = await call('GET', `/api/teams/${owner.teamId}/members`, { token: member.token });
  expect(members.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([member.id]);
});

test('a team whose other members are all deactivated goes with its last active member', async () => {
  const owner = await registerUser(ctx, 'pro', 'solo');
  const former = await registerUser(ctx, 'free', 'former');
  const site = await createWebsite(ctx, owner, 'solo.example.com');
  const formerId = await addMember(owner, site.id, former, 'editor');
  await call('DELETE', `/api/websites/${site.id}/team-members/${formerId}`, { token: owner.token });
  expect((await del(owner)).status).toBe(200);
  expect(await rowCount('SELECT 1 FROM teams WHERE id = $1', [owner.teamId])).toBe(0);
  expect((await call('GET', '/api/users/me', { token: former.token })).status).toBe(200);
});

test('the instance owner’s account is refused with 409 INSTANCE_OWNER', async () => {
  const res = await del(instanceOwner);
  expect([res.status, res.body.error.code]).toEqual([409, 'INSTANCE_OWNER']);
  expect(res.body.error.message).toContain('tidemark admin create-user --owner');
  expect((await call('GET', '/api/users/me', { token: instanceOwner.token })).status).toBe(200);
});

test('a wrong or missing password, or a malformed body, changes nothing', async () => {
  const user = await registerUser(ctx, 'free', 'careful');
  const wrong = await del(user, { password: 'not-the-password' });
  expect([wrong.status, wrong.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
  for (const body of [{}, { password: '' }, { password: 12345678 }, { password: 'x'.repeat(513) }]) {
    const res = await del(user, body);
    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  }
  for (const rawBody of ['[]', 'null', '{"password":']) {
    expect((await call('DELETE', '/api/users/me', { token: user.token, rawBody })).status).toBe(400);
  }
  expect((await call('DELETE', '/api/users/me', { token: user.token })).status).toBe(400);
  expect((await call('DELETE', '/api/users/me', { body: { password: PASSWORD } })).status).toBe(401);
  expect((await call('GET', '/api/users/me', { token: user.token })).status).toBe(200);
});

test('two deletions of one account at once: one succeeds, the other is a 4xx', async () => {
  const user = await registerUser(ctx, 'free', 'twice');
  await createWebsite(ctx, user, 'twice.example.com');
  const statuses = (await Promise.all([del(user), del(user)])).map((r) => r.status).sort();
  expect(statuses[0]).toBe(200);
  expect([401, 404]).toContain(statuses[1]);
});

test('by role in a shared team: a viewer, editor, admin or second owner leaves it; its sole owner is refused', async () => {
  const owner = await registerUser(ctx, 'pro', 'teamowner');
  const site = await createWebsite(ctx, owner, 'roles.example.com');
  const convo = await call('POST', '/api/conversations', { token: owner.token, body: { title: 'Team notes' } });
  await storeRows(ctx.clickhouse, [eventRow(site.id, { ts: new Date(Date.now() - 60_000).toISOString() })]);
  for (const role of ['viewer', 'editor', 'admin', 'owner']) {
    const member = await registerUser(ctx, 'free', role);
    await addMember(owner, site.id, member, role);
    expect([role, (await del(member)).status]).toEqual([role, 200]);
    // The team, its website, its analytics and its conversations are untouched.
    expect((await call('GET', `/api/websites/${site.id}`, { token: owner.token })).status).toBe(200);
    expect((await call('GET', `/api/conversations/${convo.body.data.id}`, { token: owner.token })).status).toBe(200);
    expect(await chRows(site.id)).toBeGreaterThan(0);
    // Its own personal team went with it.
    expect(await rowCount('SELECT 1 FROM teams WHERE id = $1', [member.teamId])).toBe(0);
  }
  // Everyone else has left: the owner is the team's only member and may go, with the team.
  expect((await del(owner)).status).toBe(200);
  expect(await rowCount('SELECT 1 FROM websites WHERE id = $1', [site.id])).toBe(0);
  expect(await chRows(site.id)).toBe(0);

  const soleOwner = await registerUser(ctx, 'pro', 'sole');
  const shared = await createWebsite(ctx, soleOwner, 'sole.example.com');
  await addMember(soleOwner, shared.id, await registerUser(ctx, 'free', 'stays'), 'viewer');
  const refused = await del(soleOwner);
  expect([refused.status, refused.body.error.code]).toEqual([409, 'LAST_OWNER']);
});
