// /api/annotations (issue 23): session cookie only, cross-site writes refused, the role matrix, the free plan's
// monthly cap and the 5-minute same-type rule on a controlled clock, and the overlay on v2 timeseries.

import { randomUUID } from 'node:crypto';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { withDateAt } from '../../helpers/clock';
import { createTestContext, type TestContext } from '../../helpers/context';
import { type CallOptions, client, type Reply } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let site: { id: string };
let otherSite: { id: string };
const cookies = new Map<string, string>();
const users: Record<'owner' | 'admin' | 'editor' | 'viewer' | 'nonMember' | 'otherTeam', TestUser> = {} as never;

async function login(user: TestUser): Promise<string> {
  const res = await call('POST', '/api/auth/login', { body: { email: user.email, password: 'password-123' } });
  const set = res.headers.getSetCookie().find((c) => c.startsWith('tidemark_session='));
  if (!set) throw new Error(`login failed: ${res.status} ${res.text}`);
  return set.split(';')[0];
}

/** A request as `user` with their session cookie. */
function as(user: TestUser, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  return call(method, path, { ...opts, headers: { cookie: cookies.get(user.id)!, ...opts.headers } });
}

const post = (user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  as(user, 'POST', '/api/annotations', { body, headers });

async function member(teamId: string, label: string, role: string | null): Promise<TestUser> {
  const user = await registerUser(ctx, 'free', label);
  if (role)
    await ctx.pool.query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [
      teamId,
      user.id,
      role,
    ]);
  cookies.set(user.id, await login(user));
  return user;
}

/** Runs `fn` with Date pinned to `now` (moved with jest.setSystemTime); network timers stay real. */
const at = <T>(now: string, fn: () => Promise<T>) => withDateAt(new Date(now), fn);

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'owner');
  cookies.set(owner.id, await login(owner));
  users.owner = owner;
  site = await createWebsite(ctx, owner, 'annotated.example');
  users.admin = await member(owner.teamId, 'admin', 'admin');
  users.editor = await member(owner.teamId, 'editor', 'editor');
  users.viewer = await member(owner.teamId, 'viewer', 'viewer');
  users.nonMember = await member(owner.teamId, 'outsider', null);
  users.otherTeam = await registerUser(ctx, 'pro', 'other');
  cookies.set(users.otherTeam.id, await login(users.otherTeam));
  otherSite = await createWebsite(ctx, users.otherTeam, 'other.example');
});
afterAll(() => ctx.close());

let minute = 0;
/** A distinct occurredAt per call (10 minutes apart), so tests do not meet each other's 5-minute windows. */
function nextTime(): string {
  minute += 10;
  return new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString();
}

describe('POST /api/annotations', () => {
  it('201: creates the annotation with the spec’s fields; occurredAt defaults to now', async () => {
    const res = await at('2026-02-10T12:34:56.789Z', () =>
      post(users.editor, {
        websiteId: site.id,
        type: 'deploy',
        message: 'v1.2.3 to production',
        metadata: { commit: 'abc123', tags: ['api'] },
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data.annotation).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      website_id: site.id,
      team_id: owner.teamId,
      type: 'deploy',
      message: 'v1.2.3 to production',
      occurred_at: '2026-02-10T12:34:56.789Z',
      created_by: users.editor.id,
      metadata_json: { commit: 'abc123', tags: ['api'] },
      created_at: '2026-02-10T12:34:56.789Z',
    });
  });

  it('keeps a given occurredAt (with an offset) and an absent metadata as {}', async () => {
    const res = await post(users.owner, {
      websiteId: site.id,
      type: 'release',
      message: 'x',
      occurredAt: '2025-06-01T10:00:00+02:00',
    });
    expect(res.status).toBe(201);
    expect(res.body.data.annotation).toMatchObject({ occurred_at: '2025-06-01T08:00:00.000Z', metadata_json: {} });
  });

  it.each([
    ['no websiteId', { websiteId: undefined, type: 'deploy', message: 'm' }, /^websiteId/],
    ['a websiteId that is not a UUID', { websiteId: 'abc', type: 'deploy', message: 'm' }, /^websiteId/],
    ['an unknown type', { type: 'rollback', message: 'm' }, /^type/],
    ['no type', { message: 'm' }, /^type/],
    ['an empty message', { type: 'deploy', message: '' }, /^message/],
    ['a 501-character message', { type: 'deploy', message: 'x'.repeat(501) }, /^message/],
    ['a message that is not a string', { type: 'deploy', message: 5 }, /^message/],
    ['a NUL in the message', { type: 'deploy', message: 'a\u0000b' }, /^message/],
    ['a date without a time', { type: 'deploy', message: 'm', occurredAt: '2026-01-01' }, /^occurredAt/],
    ['a date-time before 1970', { type: 'deploy', message: 'm', occurredAt: '1969-12-31T23:59:59Z' }, /^occurredAt/],
    ['metadata that is an array', { type: 'deploy', message: 'm', metadata: [1] }, /^metadata/],
    ['metadata over 4096 characters', { type: 'deploy', message: 'm', metadata: { a: 'x'.repeat(4100) } }, /^metadata/],
    ['a NUL in metadata', { type: 'deploy', message: 'm', metadata: { a: '\u0000' } }, /^metadata/],
  ])('400 VALIDATION_ERROR for %s', async (_name, body, field) => {
    const res = await post(users.editor, { websiteId: site.id, occurredAt: nextTime(), ...body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(field);
  });

  it('accepts a 500-character message', async () => {
    const res = await post(users.editor, {
      websiteId: site.id,
      type: 'custom',
      message: 'é'.repeat(500),
      occurredAt: nextTime(),
    });
    expect(res.status).toBe(201);
  });

  it('400 for a body that is not a JSON object', async () => {
    const res = await as(users.editor, 'POST', '/api/annotations', { rawBody: '[1]' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('404 for an unknown website', async () => {
    const res = await post(users.editor, { websiteId: randomUUID(), type: 'deploy', message: 'm' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('credentials', () => {
  const body = () => ({ websiteId: site.id, type: 'deploy', message: 'm', occurredAt: nextTime() });

  it('401 without a session cookie, and with an unknown one', async () => {
    const none = await call('POST', '/api/annotations', { body: body() });
    expect(none.status).toBe(401);
    expect(none.body.error.message).toMatch(/session cookie is required/);
    const bad = await call('GET', `/api/annotations?websiteId=${site.id}`, {
      headers: { cookie: 'tidemark_session=nope' },
    });
    expect(bad.status).toBe(401);
  });

  it('401 for an API key and for a Bearer JWT, even alongside a valid cookie', async () => {
    const key = await createApiKey(ctx, owner);
    const withKey = await call('POST', '/api/annotations', { apiKey: key.key, body: body() });
    expect(withKey.status).toBe(401);
    expect(withKey.body.error.message).toMatch(/session cookie is required/);
    const bearerKey = await call('GET', `/api/annotations?websiteId=${site.id}`, { token: key.key });
    expect(bearerKey.status).toBe(401);
    const jwt = await call('POST', '/api/annotations', { token: owner.token, body: body() });
    expect(jwt.status).toBe(401);
    expect(jwt.body.error.message).toMatch(/session cookie is required/);
    const both = await as(owner, 'POST', '/api/annotations', { token: owner.token, body: body() });
    expect(both.status).toBe(401);
    const listed = await as(owner, 'GET', `/api/annotations?websiteId=${site.id}`);
    expect(listed.body.data.annotations.filter((a: { message: string }) => a.message === 'm')).toEqual([]);
  });

  it('403 for a cross-site create or delete (Origin of another site, Origin null, Sec-Fetch-Site cross-site)', async () => {
    const created = await post(owner, body());
    const id = created.body.data.annotation.id;
    for (const headers of <Record<string, string>[]>[
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost:3001' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const res = await post(owner, body(), headers);
      expect(res.status).toBe(403);
      expect(res.body.error.message).toMatch(/Cross-site request refused/);
      const del = await as(owner, 'DELETE', `/api/annotations/${id}`, { headers });
      expect(del.status).toBe(403);
    }
    // Nothing was created or deleted by those.
    const list = await as(owner, 'GET', `/api/annotations?websiteId=${site.id}`);
    expect(list.body.data.annotations.map((a: { id: string }) => a.id)).toContain(id);
  });

  it('lets PUBLIC_URL’s own origin and a same-origin fetch write, and a GET from anywhere read', async () => {
    const same = await post(owner, body(), { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin' });
    expect(same.status).toBe(201);
    const read = await as(owner, 'GET', `/api/annotations?websiteId=${site.id}`, {
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(read.status).toBe(200);
  });
});

describe('role matrix', () => {
  // Expected status per route: zero 2xx where the role must not act.
  const expected: Record<keyof typeof users, { create: number; list: number; del: number }> = {
    owner: { create: 201, list: 200, del: 200 },
    admin: { create: 201, list: 200, del: 200 },
    editor: { create: 201, list: 200, del: 200 },
    viewer: { create: 403, list: 200, del: 403 },
    nonMember: { create: 403, list: 403, del: 404 },
    otherTeam: { create: 403, list: 403, del: 404 },
  };

  it.each(Object.keys(expected) as (keyof typeof users)[])('%s', async (name) => {
    const user = users[name];
    const want = expected[name];
    const create = await post(user, { websiteId: site.id, type: 'campaign', message: name, occurredAt: nextTime() });
    expect(create.status).toBe(want.create);
    const list = await as(user, 'GET', `/api/annotations?websiteId=${site.id}`);
    expect(list.status).toBe(want.list);
    const target = await post(owner, {
      websiteId: site.id,
      type: 'incident',
      message: 'target',
      occurredAt: nextTime(),
    });
    const del = await as(user, 'DELETE', `/api/annotations/${target.body.data.annotation.id}`);
    expect(del.status).toBe(want.del);
    const still = await ctx.pool.query('SELECT 1 FROM annotations WHERE id = $1', [target.body.data.annotation.id]);
    expect(still.rowCount).toBe(want.del === 200 ? 0 : 1);
    if (want.del === 200) expect(del.body.data).toEqual({ deleted: true });
  });

  it('the other team’s owner acts on their own website, and nobody here reaches it', async () => {
    const other = users.otherTeam;
    const mine = await post(other, {
      websiteId: otherSite.id,
      type: 'deploy',
      message: 'theirs',
      occurredAt: nextTime(),
    });
    expect(mine.status).toBe(201);
    expect((await as(owner, 'GET', `/api/annotations?websiteId=${otherSite.id}`)).status).toBe(403);
    expect((await as(owner, 'DELETE', `/api/annotations/${mine.body.data.annotation.id}`)).status).toBe(404);
  });
});

describe('GET /api/annotations', () => {
  let listSite: { id: string };
  beforeAll(async () => {
    listSite = await createWebsite(ctx, owner, 'listed.example');
  });

  it('the window (inclusive ends), newest first', async () => {
    const times = ['2026-03-01T10:00:00.000Z', '2026-03-01T11:00:00.000Z', '2026-03-01T12:00:00.000Z'];
    for (const t of times)
      expect((await post(owner, { websiteId: listSite.id, type: 'deploy', message: t, occurredAt: t })).status).toBe(
        201,
      );
    const all = await as(owner, 'GET', `/api/annotations?websiteId=${listSite.id}`);
    expect(all.status).toBe(200);
    expect(all.body.data.annotations.map((a: { message: string }) => a.message)).toEqual([...times].reverse());
    const q = new URLSearchParams({ websiteId: listSite.id, from: times[1], to: times[2] });
    const window = await as(owner, 'GET', `/api/annotations?${q}`);
    expect(window.body.data.annotations.map((a: { message: string }) => a.message)).toEqual([times[2], times[1]]);
    const after = await as(owner, 'GET', `/api/annotations?websiteId=${listSite.id}&from=2026-03-01T11:00:00.001Z`);
    expect(after.body.data.annotations.map((a: { message: string }) => a.message)).toEqual([times[2]]);
  });

  it('at most 500', async () => {
    const capSite = await createWebsite(ctx, owner, 'many.example');
    await ctx.pool.query(
      `INSERT INTO annotations (website_id, team_id, type, message, occurred_at)
       SELECT $1, $2, 'custom', 'n' || g, timestamptz '2026-01-01' + g * interval '1 hour' FROM generate_series(1, 505) g`,
      [capSite.id, owner.teamId],
    );
    const res = await as(owner, 'GET', `/api/annotations?websiteId=${capSite.id}`);
    expect(res.body.data.annotations).toHaveLength(500);
    expect(res.body.data.annotations[0].message).toBe('n505');
    expect(res.body.data.annotations[499].message).toBe('n6');
  });

  it.each([
    ['no websiteId', ''],
    ['a websiteId that is not a UUID', 'websiteId=x'],
    ['a bad from', 'websiteId=SITE&from=yesterday'],
    ['from after to', 'websiteId=SITE&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z'],
  ])('400 for %s', async (_name, query) => {
    const res = await as(owner, 'GET', `/api/annotations?${query.replace('SITE', listSite.id)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('404 for an unknown website', async () => {
    expect((await as(owner, 'GET', `/api/annotations?websiteId=${randomUUID()}`)).status).toBe(404);
  });
});

describe('DELETE /api/annotations/:id', () => {
  it('200 {deleted: true}, permanently; then 404', async () => {
    const created = await post(users.editor, {
      websiteId: site.id,
      type: 'custom',
      message: 'gone',
      occurredAt: nextTime(),
    });
    const id = created.body.data.annotation.id;
    const del = await as(users.editor, 'DELETE', `/api/annotations/${id}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ deleted: true });
    expect((await ctx.pool.query('SELECT 1 FROM annotations WHERE id = $1', [id])).rowCount).toBe(0);
    expect((await as(users.editor, 'DELETE', `/api/annotations/${id}`)).status).toBe(404);
  });

  it('404 for an unknown id and for one that is not a UUID', async () => {
    expect((await as(owner, 'DELETE', `/api/annotations/${randomUUID()}`)).status).toBe(404);
    expect((await as(owner, 'DELETE', '/api/annotations/not-an-id')).status).toBe(404);
  });
});

describe('409: a same-type annotation within 5 minutes of occurredAt', () => {
  let s: { id: string };
  beforeAll(async () => {
    s = await createWebsite(ctx, owner, 'conflicts.example');
  });
  const create = (type: string, occurredAt: string, websiteId = s.id) =>
    post(owner, { websiteId, type, message: `${type} ${occurredAt}`, occurredAt });

  it('exactly 5 minutes either side conflicts; 5 minutes and 1 ms does not; another type or website does not', async () => {
    expect((await create('deploy', '2026-04-01T12:00:00.000Z')).status).toBe(201);
    const later = await create('deploy', '2026-04-01T12:05:00.000Z');
    expect(later.status).toBe(409);
    expect(later.body.error.code).toBe('CONFLICT');
    expect((await create('deploy', '2026-04-01T11:55:00.000Z')).status).toBe(409);
    expect((await create('deploy', '2026-04-01T12:00:00.000Z')).status).toBe(409);
    expect((await create('release', '2026-04-01T12:00:00.000Z')).status).toBe(201);
    expect((await create('deploy', '2026-04-01T12:00:00.000Z', site.id)).status).toBe(201);
    expect((await create('deploy', '2026-04-01T12:05:00.001Z')).status).toBe(201);
    expect((await create('deploy', '2026-04-01T11:54:59.999Z')).status).toBe(201);
  });

  it('against occurredAt defaulted from the controlled clock', async () => {
    expect(
      (await at('2026-04-02T08:00:00.000Z', () => post(owner, { websiteId: s.id, type: 'incident', message: 'a' })))
        .status,
    ).toBe(201);
    expect(
      (await at('2026-04-02T08:04:59.999Z', () => post(owner, { websiteId: s.id, type: 'incident', message: 'b' })))
        .status,
    ).toBe(409);
    expect(
      (await at('2026-04-02T08:05:00.001Z', () => post(owner, { websiteId: s.id, type: 'incident', message: 'c' })))
        .status,
    ).toBe(201);
  });

  it('is race-safe: of 6 concurrent same-type creations at one instant, one wins', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => create('campaign', '2026-04-03T00:00:00.000Z')));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe('402: the free plan’s 11th annotation of the calendar month', () => {
  let free: TestUser;
  let freeSite: { id: string };
  beforeAll(async () => {
    free = await registerUser(ctx, 'free', 'free');
    cookies.set(free.id, await login(free));
    freeSite = await createWebsite(ctx, free, 'free.example');
  });
  const create = (i: number) =>
    post(free, {
      websiteId: freeSite.id,
      type: 'custom',
      message: `n${i}`,
      occurredAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
    });

  it('10 in a month pass, the 11th is 402 until the next UTC month; deleting gives nothing back', async () => {
    await at('2026-05-31T23:59:59.000Z', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await create(i);
        expect(res.status).toBe(201);
        ids.push(res.body.data.annotation.id);
      }
      const eleventh = await create(10);
      expect(eleventh.status).toBe(402);
      expect(eleventh.body.error.code).toBe('PAYMENT_REQUIRED');
      expect(eleventh.body.error.message).toMatch(/10 annotations per calendar month/);
      expect((await as(free, 'DELETE', `/api/annotations/${ids[0]}`)).status).toBe(200);
      expect((await create(11)).status).toBe(402);
      jest.setSystemTime(new Date('2026-05-31T23:59:59.999Z'));
      expect((await create(12)).status).toBe(402);
      jest.setSystemTime(new Date('2026-06-01T00:00:00.000Z'));
      expect((await create(13)).status).toBe(201);
    });
  });

  it('is race-safe: with 8 used this month, 5 concurrent creations leave exactly 2 created', async () => {
    await at('2026-07-15T00:00:00.000Z', async () => {
      for (let i = 0; i < 8; i++) expect((await create(20 + i)).status).toBe(201);
      const results = await Promise.all([30, 31, 32, 33, 34].map((i) => create(i)));
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 402, 402, 402]);
    });
  });

  it('a paid plan has no cap', async () => {
    const s = await createWebsite(ctx, owner, 'paid.example');
    await at('2026-08-01T00:00:00.000Z', async () => {
      for (let i = 0; i < 12; i++) {
        const res = await post(owner, {
          websiteId: s.id,
          type: 'custom',
          message: 'p',
          occurredAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
        });
        expect(res.status).toBe(201);
      }
    });
  });
});

describe('the overlay on Stats API v2 timeseries', () => {
  let s: { id: string };
  beforeAll(async () => {
    s = await createWebsite(ctx, owner, 'overlay.example');
    // Each boundary pair is a millisecond apart, so the pairs' types differ (the 5-minute rule).
    for (const [t, type] of [
      ['2026-02-28T23:59:59.999Z', 'deploy'],
      ['2026-03-01T00:00:00.000Z', 'release'],
      ['2026-03-02T23:59:59.999Z', 'deploy'],
      ['2026-03-03T00:00:00.000Z', 'release'],
    ])
      expect((await post(owner, { websiteId: s.id, type, message: t, occurredAt: t })).status).toBe(201);
  });
  const path = () =>
    `/api/external/v2/stats/timeseries?site_id=${s.id}&period=custom:2026-03-01,2026-03-02&metrics=visitors`;

  it('a signed-in reader gets the annotations inside the period, newest first', async () => {
    for (const res of [await call('GET', path(), { token: owner.token }), await as(users.viewer, 'GET', path())]) {
      expect(res.status).toBe(200);
      expect(res.body.data.results).toHaveLength(2);
      expect(res.body.data.annotations.map((a: { message: string }) => a.message)).toEqual([
        '2026-03-02T23:59:59.999Z',
        '2026-03-01T00:00:00.000Z',
      ]);
    }
  });

  it('an API key’s answer has none, nor does v1 or a CSV', async () => {
    const key = await createApiKey(ctx, owner);
    const keyed = await call('GET', path(), { apiKey: key.key });
    expect(keyed.status).toBe(200);
    expect(keyed.body.data).not.toHaveProperty('annotations');
    const v1 = await call('GET', path().replace('/v2/', '/v1/'), { token: owner.token });
    expect(v1.status).toBe(200);
    expect(v1.body.data).not.toHaveProperty('annotations');
    const csv = await call('GET', `${path()}&format=csv`, { token: owner.token });
    expect(csv.status).toBe(200);
    expect(csv.text).not.toMatch(/deploy|2026-03-01T00/);
  });
});
