// A self-hoster's day one (issue 21): the first account owns the instance (plan unlimited), later sign-ups get
// DEFAULT_PLAN, plan refusals say how the operator lifts them, invites let people into a team (also on a server
// without sign-up), the tracking snippet is handed out, and the CLI answers --version, --help at every level and
// lists what the instance holds.
import { main } from '../../../cli/main';
import { captureIo, cliEnv as env } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

describe('on a server with DEFAULT_PLAN=pro and sign-up closed', () => {
  let ctx: TestContext;
  let call: ReturnType<typeof client>;
  beforeAll(async () => {
    ctx = await createTestContext({ DEFAULT_PLAN: 'pro', PUBLIC_URL: 'https://stats.example.org' });
    call = client(ctx.baseUrl);
  });
  afterAll(() => ctx.close());

  let owner: { token: string; teamId: string; userId: string };

  it('the first of two racing sign-ups owns the instance (plan unlimited); the other gets DEFAULT_PLAN', async () => {
    const [a, b] = await Promise.all(
      ['first@example.com', 'second@example.com'].map((email) =>
        call('POST', '/api/auth/register', { body: { email, password: 'password-123' } }),
      ),
    );
    expect([a.status, b.status]).toEqual([201, 201]);
    const plans = [a.body.data.team.plan, b.body.data.team.plan].sort();
    expect(plans).toEqual(['pro', 'unlimited']);
    const winner = a.body.data.team.plan === 'unlimited' ? a : b;
    owner = { token: winner.body.data.token, teamId: winner.body.data.team.id, userId: winner.body.data.user.id };
    const { rows } = await ctx.pool.query('SELECT owner_user_id FROM instance');
    expect(rows).toEqual([{ owner_user_id: owner.userId }]);
    const third = await call('POST', '/api/auth/register', {
      body: { email: 'third@example.com', password: 'password-123' },
    });
    expect(third.body.data.team.plan).toBe('pro');
  });

  it("the owner's team has no website or member cap", async () => {
    for (let i = 0; i < 12; i++) {
      const res = await call('POST', '/api/websites', {
        token: owner.token,
        body: { domain: `site${i}.example.com`, name: `Site ${i}`, team_id: owner.teamId },
      });
      expect(res.status).toBe(201);
    }
  });

  it('a plan refusal names the limit and the command that lifts it', async () => {
    const free = await call('POST', '/api/auth/register', {
      body: { email: 'free@example.com', password: 'password-123' },
    });
    await ctx.pool.query(`UPDATE teams SET plan = 'free' WHERE id = $1`, [free.body.data.team.id]);
    const token = free.body.data.token;
    const teamId = free.body.data.team.id;
    expect(
      (
        await call('POST', '/api/websites', {
          token,
          body: { domain: 'one.example.com', name: 'One', team_id: teamId },
        })
      ).status,
    ).toBe(201);
    const refused = await call('POST', '/api/websites', {
      token,
      body: { domain: 'two.example.com', name: 'Two', team_id: teamId },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('PLAN_LIMIT_REACHED');
    expect(refused.body.error.message).toBe(
      `The free plan allows 1 websites; the server's operator lifts it with \`tidemark admin plan --team ${teamId} --plan unlimited\` (or pro, scale, enterprise)`,
    );
    expect(refused.body.error.message).not.toMatch(/upgrade/i);
    const key = await call('POST', `/api/teams/${teamId}/api-keys`, {
      token,
      body: { name: 'k', permission: 'full_access' },
    });
    expect(key.status).toBe(403);
    expect(key.body.error.message).toContain(`tidemark admin plan --team ${teamId}`);
  });

  describe('invites', () => {
    let teamId: string;
    let adminToken: string;
    beforeAll(async () => {
      const res = await call('POST', '/api/auth/register', {
        body: { email: 'lead@example.com', password: 'password-123' },
      });
      teamId = res.body.data.team.id;
      adminToken = res.body.data.token;
    });

    it('let a person without an account register (sign-up is open here) and join; the link works once', async () => {
      const made = await call('POST', `/api/teams/${teamId}/invites`, {
        token: adminToken,
        body: { email: 'New.Person@Example.com', role: 'editor' },
      });
      expect(made.status).toBe(201);
      expect(made.body.data).toMatchObject({
        email: 'new.person@example.com',
        role: 'editor',
        status: 'pending',
        team: { id: teamId },
      });
      expect(made.body.data.url).toBe(`https://stats.example.org/invite/${made.body.data.token}`);
      const stored = await ctx.pool.query('SELECT token_hash FROM team_invites WHERE id = $1', [made.body.data.id]);
      expect(stored.rows[0].token_hash).not.toContain(made.body.data.token);

      const preview = await call('GET', `/api/invites/${made.body.data.token}`);
      expect(preview.status).toBe(200);
      expect(preview.body.data).toMatchObject({
        email: 'new.person@example.com',
        registered: false,
        team: { id: teamId },
      });

      const accepted = await call('POST', `/api/invites/${made.body.data.token}/accept`, {
        body: { password: 'a-long-password', full_name: 'New Person' },
      });
      expect(accepted.status).toBe(201);
      expect(accepted.body.data).toMatchObject({
        team_id: teamId,
        member: { role: 'editor' },
        user: { email: 'new.person@example.com' },
      });
      const sites = await call('GET', `/api/teams/${teamId}/members`, { token: accepted.body.data.token });
      expect(sites.status).toBe(200);

      const again = await call('POST', `/api/invites/${made.body.data.token}/accept`, {
        body: { password: 'another-password' },
      });
      expect(again.status).toBe(404);
      const list = await call('GET', `/api/teams/${teamId}/invites`, { token: adminToken });
      expect(list.body.data.invites.find((i: { id: string }) => i.id === made.body.data.id).status).toBe('accepted');
    });

    it('accepted by a signed-in user only when the email is theirs; revoked and malformed links are refused', async () => {
      const other = await call('POST', '/api/auth/register', {
        body: { email: 'member@example.com', password: 'password-123' },
      });
      const wrong = await call('POST', '/api/auth/register', {
        body: { email: 'someone-else@example.com', password: 'password-123' },
      });
      const made = await call('POST', `/api/teams/${teamId}/invites`, {
        token: adminToken,
        body: { email: 'member@example.com' },
      });
      const byWrong = await call('POST', `/api/invites/${made.body.data.token}/accept`, {
        token: wrong.body.data.token,
      });
      expect(byWrong.status).toBe(403);
      const byRight = await call('POST', `/api/invites/${made.body.data.token}/accept`, {
        token: other.body.data.token,
      });
      expect(byRight.status).toBe(200);
      expect(byRight.body.data.member.role).toBe('viewer');

      const revoked = await call('POST', `/api/teams/${teamId}/invites`, {
        token: adminToken,
        body: { email: 'x@example.com' },
      });
      expect(
        (await call('DELETE', `/api/teams/${teamId}/invites/${revoked.body.data.id}`, { token: adminToken })).status,
      ).toBe(200);
      expect((await call('GET', `/api/invites/${revoked.body.data.token}`)).status).toBe(404);
      expect((await call('GET', '/api/invites/not-a-token')).status).toBe(400);
    });

    it('are made by admins only, and only an owner invites an owner', async () => {
      const viewer = await call('POST', '/api/auth/register', {
        body: { email: 'viewer@example.com', password: 'password-123' },
      });
      await ctx.pool.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'viewer')`, [
        teamId,
        viewer.body.data.user.id,
      ]);
      expect(
        (
          await call('POST', `/api/teams/${teamId}/invites`, {
            token: viewer.body.data.token,
            body: { email: 'y@example.com' },
          })
        ).status,
      ).toBe(403);
      expect((await call('GET', `/api/teams/${teamId}/invites`, { token: viewer.body.data.token })).status).toBe(403);
      const admin = await call('POST', '/api/auth/register', {
        body: { email: 'admin@example.com', password: 'password-123' },
      });
      await ctx.pool.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'admin')`, [
        teamId,
        admin.body.data.user.id,
      ]);
      expect(
        (
          await call('POST', `/api/teams/${teamId}/invites`, {
            token: admin.body.data.token,
            body: { email: 'z@example.com', role: 'owner' },
          })
        ).status,
      ).toBe(403);
      expect(
        (
          await call('POST', `/api/teams/${teamId}/invites`, {
            token: admin.body.data.token,
            body: { email: 'z@example.com', role: 'admin' },
          })
        ).status,
      ).toBe(201);
      // A stranger to the team cannot see or use its invite list.
      expect((await call('GET', `/api/teams/${teamId}/invites`, { token: owner.token })).status).toBe(404);
    });
  });

  it('hands out the tracking snippet to members of the website’s team only', async () => {
    const site = await call('POST', '/api/websites', {
      token: owner.token,
      body: { domain: 'snippet.example.com', name: 'Snippet', team_id: owner.teamId },
    });
    const id = site.body.data.website.id;
    const code = site.body.data.website.tracking_code;
    const res = await call('GET', `/api/websites/${id}/snippet?persist=true`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.script).toBe(
      `<script defer data-site="${code}" data-persist="true" src="https://stats.example.org/tracker.js"></script>`,
    );
    expect(res.body.data.events_endpoint).toBe(`https://stats.example.org/api/events/${code}`);
    const stranger = await call('POST', '/api/auth/register', {
      body: { email: 'stranger@example.com', password: 'password-123' },
    });
    expect((await call('GET', `/api/websites/${id}/snippet`, { token: stranger.body.data.token })).status).toBe(404);
    expect((await call('GET', `/api/websites/${id}/snippet`)).status).toBe(401);

    const io = captureIo();
    expect(await main(['snippet', '--website', id], io, env(ctx))).toBe(0);
    expect(io.stdout).toEqual([
      `<script defer data-site="${code}" src="https://stats.example.org/tracker.js"></script>`,
    ]);
  });
});

describe('sign-up closed: an invite is the way in', () => {
  let ctx: TestContext;
  let call: ReturnType<typeof client>;
  beforeAll(async () => {
    ctx = await createTestContext({ ALLOW_SIGNUP: 'false' });
    call = client(ctx.baseUrl);
  });
  afterAll(() => ctx.close());

  it('the CLI makes the owner and an invite link; the invited person registers through it', async () => {
    const io = captureIo();
    expect(await main(['admin', 'create-user', '--email', 'root@example.com', '--owner'], io, env(ctx))).toBe(0);
    expect(io.stdout[0]).toMatch(/\(plan unlimited\); owner of this instance$/);
    expect(
      (await call('POST', '/api/auth/register', { body: { email: 'walk-in@example.com', password: 'password-123' } }))
        .status,
    ).toBe(403);
    const teamId = /with team ([0-9a-f-]{36})/.exec(io.stdout[0])![1];

    const invite = captureIo();
    expect(
      await main(
        ['admin', 'invite', '--team', teamId, '--email', 'guest@example.com', '--role', 'viewer'],
        invite,
        env(ctx),
      ),
    ).toBe(0);
    const url = invite.stdout[1];
    const token = url.slice(url.lastIndexOf('/') + 1);
    expect(url).toBe(`${ctx.config.PUBLIC_URL}/invite/${token}`);
    const accepted = await call('POST', `/api/invites/${token}/accept`, { body: { password: 'guest-password' } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.data.member.role).toBe('viewer');
    // The guest's own team is on DEFAULT_PLAN (free), not the owner's plan.
    expect(accepted.body.data.team.plan).toBe('free');

    const users = captureIo();
    expect(await main(['admin', 'users', 'list', '--json'], users, env(ctx))).toBe(0);
    const listed = JSON.parse(users.stdout[0]) as { email: string; instance_owner: boolean; teams: number }[];
    expect(listed.map((u) => [u.email, u.instance_owner, u.teams])).toEqual([
      ['root@example.com', true, 1],
      ['guest@example.com', false, 2],
    ]);
    const teams = captureIo();
    expect(await main(['admin', 'teams', 'list'], teams, env(ctx))).toBe(0);
    expect(teams.stdout[0].split('\n')[0]).toMatch(/^id\s+name\s+plan\s+members\s+websites\s+overrides\s+created_at$/);
    expect(teams.stdout[0]).toMatch(/root's team\s+unlimited\s+2\s+0/);
  });
});

describe('the CLI', () => {
  it('answers --version and --help at every level, and names an unknown command in one line', async () => {
    const version = captureIo();
    expect(await main(['--version'], version)).toBe(0);
    expect(version.stdout).toEqual([`tidemark ${require('../../../package.json').version}`]);
    for (const argv of [
      ['--help'],
      ['admin', '--help'],
      ['admin'],
      ['queue', '--help'],
      ['admin', 'users', '--help'],
    ]) {
      const io = captureIo();
      expect(await main(argv, io)).toBe(0);
      expect(io.stdout.join('\n')).toMatch(/^Usage: tidemark /);
      expect(io.stderr).toEqual([]);
    }
    const admin = captureIo();
    await main(['admin', '--help'], admin);
    expect(admin.stdout[0]).toContain('admin create-user');
    expect(admin.stdout[0]).not.toContain('queue failed');
    const unknown = captureIo();
    expect(await main(['admin', 'frobnicate'], unknown)).toBe(2);
    expect(unknown.stderr).toEqual(['tidemark: unknown command "admin frobnicate" (see tidemark --help)']);
    const badFlag = captureIo();
    expect(await main(['admin', 'plan', '--team', 'nope', '--plan', 'pro'], badFlag)).toBe(2);
    expect(badFlag.stderr).toEqual([
      'tidemark admin plan: --team must be a team id (UUID) (see tidemark admin plan --help)',
    ]);
  });

  it('names DATABASE_URL in one line when PostgreSQL is not there', async () => {
    const io = captureIo();
    const code = await main(['admin', 'users', 'list'], io, {
      DATABASE_URL: 'postgres://ops:s3cret@127.0.0.1:1/x',
      DATA_DIR: '/tmp/tidemark-cli-test',
    });
    expect(code).toBe(1);
    expect(io.stderr).toHaveLength(1);
    expect(io.stderr[0]).toMatch(
      /^tidemark admin users list: DATABASE_URL: PostgreSQL at postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/x not reachable/,
    );
  });
});
