// Conversations (issue 23): the six endpoints of the spec's table, the caps, who may see what (every active
// member of the team; nobody else, and another team's conversation is 404), bad input never a 500, and
// concurrent appends none of which is lost.
import { randomUUID } from 'node:crypto';
import {
  MAX_CONTENT_LENGTH,
  MAX_CONVERSATIONS_PER_TEAM,
  MAX_MESSAGES,
  MAX_TITLE_LENGTH,
} from '../../../lib/accounts/conversationSchemas';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let admin: TestUser;
let editor: TestUser;
let viewer: TestUser;
let deactivated: TestUser;
let nonMember: TestUser;
let otherTeamUser: TestUser;
let otherConversation: string;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function create(user: TestUser, title = 'Traffic question', teamId?: string) {
  const res = await call('POST', '/api/conversations', {
    token: user.token,
    body: { title, ...(teamId ? { team_id: teamId } : {}) },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; team_id: string; title: string; messages: unknown[] };
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
  [admin, editor, viewer, deactivated, nonMember, otherTeamUser] = await Promise.all(
    ['admin', 'editor', 'viewer', 'gone', 'stranger', 'other'].map((l) => registerUser(ctx, 'free', l)),
  );
  const site = await createWebsite(ctx, owner, 'conversations.example.com');
  const add = async (u: TestUser, role: string) => {
    const res = await call('POST', `/api/websites/${site.id}/team-members`, {
      token: owner.token,
      body: { email: u.email, role },
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  await add(admin, 'admin');
  await add(editor, 'editor');
  await add(viewer, 'viewer');
  const goneId = await add(deactivated, 'editor');
  expect((await call('DELETE', `/api/websites/${site.id}/team-members/${goneId}`, { token: owner.token })).status).toBe(
    200,
  );
  otherConversation = (await create(otherTeamUser, 'Their own')).id;
});
afterAll(() => ctx.close());

describe('the six endpoints', () => {
  test('POST answers 201 with messages [] in the caller’s personal team by default, or the team named', async () => {
    const before = Date.now();
    const res = await call('POST', '/api/conversations', { token: owner.token, body: { title: '  Weekly numbers ' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: expect.any(Object), timestamp: expect.any(String) });
    const c = res.body.data;
    expect(c).toEqual({
      id: expect.any(String),
      team_id: owner.teamId,
      title: 'Weekly numbers',
      messages: [],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(c.created_at)).toBeGreaterThanOrEqual(before - 1000);

    // A member of the owner's team, whose own personal team is another one.
    expect((await create(viewer, 'In my team')).team_id).toBe(viewer.teamId);
    expect((await create(viewer, 'In the shared team', owner.teamId)).team_id).toBe(owner.teamId);
  });

  test('GET lists the team’s conversations without messages, most recently updated first', async () => {
    const team = await registerUser(ctx, 'free', 'lister');
    const first = await create(team, 'First');
    const second = await create(team, 'Second');
    await call('POST', `/api/conversations/${first.id}/messages`, {
      token: team.token,
      body: { role: 'user', content: 'Hello' },
    });
    const res = await call('GET', '/api/conversations', { token: team.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([first.id, second.id]);
    for (const c of res.body.data) {
      expect(Object.keys(c).sort()).toEqual(['created_at', 'id', 'team_id', 'title', 'updated_at']);
    }
    // Another team's list is its own: the shared team by team_id, the caller's personal team by default.
    const shared = await call('GET', `/api/conversations?team_id=${owner.teamId}`, { token: viewer.token });
    expect(shared.status).toBe(200);
    expect(shared.body.data.every((c: { team_id: string }) => c.team_id === owner.teamId)).toBe(true);
    expect(shared.body.data.some((c: { title: string }) => c.title === 'In the shared team')).toBe(true);
    const own = await call('GET', '/api/conversations', { token: viewer.token });
    expect(own.body.data.map((c: { title: string }) => c.title)).toEqual(['In my team']);
  });

  test('GET :id answers the conversation with its messages', async () => {
    const c = await create(owner, 'With messages');
    await call('POST', `/api/conversations/${c.id}/messages`, {
      token: owner.token,
      body: { role: 'user', content: 'How many visitors yesterday?' },
    });
    const res = await call('GET', `/api/conversations/${c.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: c.id, team_id: owner.teamId, title: 'With messages' });
    expect(res.body.data.messages).toEqual([
      { role: 'user', content: 'How many visitors yesterday?', timestamp: expect.stringMatching(ISO) },
    ]);
  });

  test('POST :id/messages answers 201 with the whole conversation and a server timestamp on the message', async () => {
    const c = await create(owner, 'Appends');
    const before = Date.now();
    const first = await call('POST', `/api/conversations/${c.id}/messages`, {
      token: owner.token,
      body: { role: 'user', content: 'Where do visitors come from?', timestamp: '2001-01-01T00:00:00Z' },
    });
    const second = await call('POST', `/api/conversations/${c.id}/messages`, {
      token: owner.token,
      body: { role: 'assistant', content: '  Mostly search.\n' },
    });
    const after = Date.now();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const messages = second.body.data.messages as { role: string; content: string; timestamp: string }[];
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Where do visitors come from?'],
      ['assistant', '  Mostly search.\n'],
    ]);
    for (const m of messages) {
      // The client's timestamp is not a field of a message to append: the server's time is.
      expect(Date.parse(m.timestamp)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(m.timestamp)).toBeLessThanOrEqual(after + 1000);
    }
    expect(Date.parse(second.body.data.updated_at)).toBeGreaterThan(Date.parse(second.body.data.created_at));
  });

  test('PUT renames and/or replaces the messages; a message without a timestamp gets the server’s', async () => {
    const c = await create(owner, 'Before');
    const renamed = await call('PUT', `/api/conversations/${c.id}`, { token: owner.token, body: { title: 'After' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: c.id, title: 'After', messages: [] });

    const replaced = await call('PUT', `/api/conversations/${c.id}`, {
      token: owner.token,
      body: {
        messages: [
          { role: 'user', content: 'Q', timestamp: '2026-03-29T03:30:00+02:00' },
          { role: 'assistant', content: 'A' },
        ],
      },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.title).toBe('After');
    expect(replaced.body.data.messages).toEqual([
      { role: 'user', content: 'Q', timestamp: '2026-03-29T01:30:00.000Z' },
      { role: 'assistant', content: 'A', timestamp: expect.stringMatching(ISO) },
    ]);

    const unchanged = await call('PUT', `/api/conversations/${c.id}`, { token: owner.token, body: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data.messages).toHaveLength(2);

    const emptied = await call('PUT', `/api/conversations/${c.id}`, { token: owner.token, body: { messages: [] } });
    expect(emptied.body.data.messages).toEqual([]);
    expect((await call('GET', `/api/conversations/${c.id}`, { token: owner.token })).body.data.messages).toEqual([]);
  });

  test('DELETE answers {deleted: true}; the conversation is gone', async () => {
    const c = await create(owner, 'Short-lived');
    const res = await call('DELETE', `/api/conversations/${c.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deleted: true });
    expect((await call('GET', `/api/conversations/${c.id}`, { token: owner.token })).status).toBe(404);
    expect((await call('DELETE', `/api/conversations/${c.id}`, { token: owner.token })).status).toBe(404);
  });

  test('every endpoint answers 401 without a valid Bearer token', async () => {
    const id = randomUUID();
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/conversations'],
      ['POST', '/api/conversations', { title: 'x' }],
      ['GET', `/api/conversations/${id}`],
      ['PUT', `/api/conversations/${id}`, { title: 'x' }],
      ['DELETE', `/api/conversations/${id}`],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user', content: 'x' }],
    ];
    for (const [method, path, body] of routes) {
      expect((await call(method, path, { body })).status).toBe(401);
      expect((await call(method, path, { body, token: 'not.a.jwt' })).status).toBe(401);
    }
  });
});

describe('who may see and change a conversation', () => {
  // Each check gets a conversation of its own, so a DELETE does not take one from the next.
  async function attempt(user: TestUser, route: string): Promise<number> {
    const c = await create(owner, 'Shared');
    const paths: Record<string, () => Promise<{ status: number }>> = {
      list: () => call('GET', `/api/conversations?team_id=${owner.teamId}`, { token: user.token }),
      create: () =>
        call('POST', '/api/conversations', { token: user.token, body: { title: 'Mine', team_id: owner.teamId } }),
      get: () => call('GET', `/api/conversations/${c.id}`, { token: user.token }),
      put: () => call('PUT', `/api/conversations/${c.id}`, { token: user.token, body: { title: 'Renamed' } }),
      delete: () => call('DELETE', `/api/conversations/${c.id}`, { token: user.token }),
      append: () =>
        call('POST', `/api/conversations/${c.id}/messages`, {
          token: user.token,
          body: { role: 'user', content: 'hi' },
        }),
    };
    const { status } = await paths[route]();
    if (status >= 300) {
      // A refused write changed nothing.
      const after = await call('GET', `/api/conversations/${c.id}`, { token: owner.token });
      expect(after.body.data).toMatchObject({ title: 'Shared', messages: [] });
    }
    return status;
  }
  const ROUTES = ['list', 'create', 'get', 'put', 'delete', 'append'];
  const OK: Record<string, number> = { list: 200, create: 201, get: 200, put: 200, delete: 200, append: 201 };

  test('every active member, viewer to owner, may use every route on the team’s conversations', async () => {
    for (const [name, user] of Object.entries({ viewer, editor, admin, owner })) {
      for (const route of ROUTES) expect([name, route, await attempt(user, route)]).toEqual([name, route, OK[route]]);
    }
  });

  test('a non-member, a deactivated member and another team’s user get 404 on every route', async () => {
    for (const [name, user] of Object.entries({ nonMember, deactivated, otherTeamUser })) {
      for (const route of ROUTES) expect([name, route, await attempt(user, route)]).toEqual([name, route, 404]);
    }
  });

  test('another team’s conversation is 404 to the team’s members, even its owner, on every route', async () => {
    const id = otherConversation;
    for (const user of [owner, viewer]) {
      expect((await call('GET', `/api/conversations/${id}`, { token: user.token })).status).toBe(404);
      expect((await call('PUT', `/api/conversations/${id}`, { token: user.token, body: { title: 'x' } })).status).toBe(
        404,
      );
      expect(
        (
          await call('POST', `/api/conversations/${id}/messages`, {
            token: user.token,
            body: { role: 'user', content: 'x' },
          })
        ).status,
      ).toBe(404);
      expect((await call('DELETE', `/api/conversations/${id}`, { token: user.token })).status).toBe(404);
    }
    const theirs = await call('GET', `/api/conversations/${id}`, { token: otherTeamUser.token });
    expect(theirs.body.data).toMatchObject({ title: 'Their own', messages: [] });
  });
});

describe('bad input is a 4xx, never a 500', () => {
  let id: string;
  beforeAll(async () => {
    id = (await create(owner, 'Target')).id;
  });

  test('a malformed or unknown conversation id is 404 on every route, like another team’s', async () => {
    for (const bad of ['nope', '123', `${randomUUID()}x`, "'; DROP TABLE conversations; --", randomUUID()]) {
      const p = `/api/conversations/${encodeURIComponent(bad)}`;
      expect((await call('GET', p, { token: owner.token })).status).toBe(404);
      expect((await call('PUT', p, { token: owner.token, body: { title: 'x' } })).status).toBe(404);
      expect((await call('DELETE', p, { token: owner.token })).status).toBe(404);
      expect(
        (await call('POST', `${p}/messages`, { token: owner.token, body: { role: 'user', content: 'x' } })).status,
      ).toBe(404);
    }
    expect((await call('GET', '/api/conversations/%00', { token: owner.token })).status).toBe(400);
  });

  test('a malformed or unknown team_id: 400 when it is not a UUID, 404 when it is not the caller’s team', async () => {
    const list = await call('GET', '/api/conversations?team_id=abc', { token: owner.token });
    expect([list.status, list.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const create400 = await call('POST', '/api/conversations', {
      token: owner.token,
      body: { title: 't', team_id: 7 },
    });
    expect([create400.status, create400.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    for (const teamId of [randomUUID(), otherTeamUser.teamId]) {
      expect((await call('GET', `/api/conversations?team_id=${teamId}`, { token: owner.token })).status).toBe(404);
      expect(
        (await call('POST', '/api/conversations', { token: owner.token, body: { title: 't', team_id: teamId } }))
          .status,
      ).toBe(404);
    }
  });

  test('titles, roles and contents out of their caps or of the wrong type are 400 VALIDATION_ERROR naming the field', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/conversations', {}, 'title'],
      ['POST', '/api/conversations', { title: '' }, 'title'],
      ['POST', '/api/conversations', { title: '   ' }, 'title'],
      ['POST', '/api/conversations', { title: 42 }, 'title'],
      ['POST', '/api/conversations', { title: 'x'.repeat(MAX_TITLE_LENGTH + 1) }, 'title'],
      ['POST', '/api/conversations', { title: 'nul\u0000' }, 'title'],
      ['PUT', `/api/conversations/${id}`, { title: null }, 'title'],
      ['PUT', `/api/conversations/${id}`, { messages: 'hello' }, 'messages'],
      ['PUT', `/api/conversations/${id}`, { messages: [{ role: 'user' }] }, 'messages.0.content'],
      [
        'PUT',
        `/api/conversations/${id}`,
        { messages: [{ role: 'user', content: 'x', timestamp: 'yesterday' }] },
        'messages.0.timestamp',
      ],
      [
        'PUT',
        `/api/conversations/${id}`,
        { messages: [{ role: 'user', content: 'x', timestamp: '9999-12-31T23:59:59-23:59' }] },
        'messages.0.timestamp',
      ],
      [
        'PUT',
        `/api/conversations/${id}`,
        { messages: Array.from({ length: MAX_MESSAGES + 1 }, () => ({ role: 'user', content: 'x' })) },
        'messages',
      ],
      ['POST', `/api/conversations/${id}/messages`, { content: 'x' }, 'role'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user' }, 'content'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user', content: '' }, 'content'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user', content: ['x'] }, 'content'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'User', content: 'x' }, 'role'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user agent', content: 'x' }, 'role'],
      ['POST', `/api/conversations/${id}/messages`, { role: `a${'b'.repeat(32)}`, content: 'x' }, 'role'],
      ['POST', `/api/conversations/${id}/messages`, { role: 7, content: 'x' }, 'role'],
      [
        'POST',
        `/api/conversations/${id}/messages`,
        { role: 'user', content: 'x'.repeat(MAX_CONTENT_LENGTH + 1) },
        'content',
      ],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user', content: 'a\u0000b' }, 'content'],
      ['POST', `/api/conversations/${id}/messages`, { role: 'user', content: 'lone \ud800 surrogate' }, 'content'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await call(method, path, { token: owner.token, body });
      expect([method, path, field, res.status, res.body.error?.code]).toEqual([
        method,
        path,
        field,
        400,
        'VALIDATION_ERROR',
      ]);
      expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
    }
    // A content of exactly the cap is kept whole.
    const max = await call('POST', `/api/conversations/${id}/messages`, {
      token: owner.token,
      body: { role: 'assistant', content: 'y'.repeat(MAX_CONTENT_LENGTH) },
    });
    expect(max.status).toBe(201);
    expect(max.body.data.messages.at(-1).content).toHaveLength(MAX_CONTENT_LENGTH);
  });

  test('a body that is not a JSON object, not JSON, or too large is a 4xx in the envelope', async () => {
    for (const rawBody of ['[]', '"title"', 'null', '{"title": ']) {
      const res = await call('POST', '/api/conversations', { token: owner.token, rawBody });
      expect([rawBody, res.status, res.body.error.code]).toEqual([rawBody, 400, 'VALIDATION_ERROR']);
    }
    const huge = JSON.stringify({ role: 'user', content: 'x'.repeat(1_100_000) });
    const res = await call('POST', `/api/conversations/${id}/messages`, { token: owner.token, rawBody: huge });
    expect([res.status, res.body.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });
});

describe('the message cap and concurrent appends', () => {
  const fill = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${i}` }));

  test(`20 appends in parallel are all kept, each once`, async () => {
    const c = await create(owner, 'Busy');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', `/api/conversations/${c.id}/messages`, {
          token: [owner, admin, editor, viewer][i % 4].token,
          body: { role: 'user', content: `parallel ${i}` },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    const messages = (await call('GET', `/api/conversations/${c.id}`, { token: owner.token })).body.data.messages as {
      content: string;
      timestamp: string;
    }[];
    expect(messages.map((m) => m.content).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `parallel ${i}`).sort());
    // Stored in the order they were written, so their server timestamps never go backwards.
    const times = messages.map((m) => Date.parse(m.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  test(`at ${MAX_MESSAGES} messages an append is 409 CONVERSATION_FULL, also when racing to the cap`, async () => {
    const c = await create(owner, 'Nearly full');
    const put = await call('PUT', `/api/conversations/${c.id}`, {
      token: owner.token,
      body: { messages: fill(MAX_MESSAGES - 5) },
    });
    expect(put.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', `/api/conversations/${c.id}/messages`, {
          token: owner.token,
          body: { role: 'assistant', content: `race ${i}` },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error.code).toBe('CONVERSATION_FULL');
    const after = await call('GET', `/api/conversations/${c.id}`, { token: owner.token });
    expect(after.body.data.messages).toHaveLength(MAX_MESSAGES);

    // A full conversation of another team is still 404, not 409: the cap says nothing about it.
    expect(
      (
        await call('POST', `/api/conversations/${c.id}/messages`, {
          token: nonMember.token,
          body: { role: 'user', content: 'x' },
        })
      ).status,
    ).toBe(404);
    // Exactly the cap by PUT is allowed.
    const exact = await call('PUT', `/api/conversations/${c.id}`, {
      token: owner.token,
      body: { messages: fill(MAX_MESSAGES) },
    });
    expect(exact.status).toBe(200);
  });

  test(`a team keeps at most ${MAX_CONVERSATIONS_PER_TEAM} conversations: 409 CONVERSATION_LIMIT_REACHED, also when racing`, async () => {
    const team = await registerUser(ctx, 'free', 'prolific');
    // All but five made directly, the last five raced for by 20 requests.
    await ctx.pool.query(
      "INSERT INTO conversations (team_id, title) SELECT $1, 'c' || i FROM generate_series(1, $2::int) AS i",
      [team.teamId, MAX_CONVERSATIONS_PER_TEAM - 5],
    );
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/api/conversations', { token: team.token, body: { title: `race ${i}` } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body.error.code).toBe('CONVERSATION_LIMIT_REACHED');
    const list = await call('GET', '/api/conversations', { token: team.token });
    expect(list.body.data).toHaveLength(MAX_CONVERSATIONS_PER_TEAM);
    // Deleting one makes room for one.
    await call('DELETE', `/api/conversations/${list.body.data[0].id}`, { token: team.token });
    expect((await call('POST', '/api/conversations', { token: team.token, body: { title: 'room' } })).status).toBe(201);
  });
});
