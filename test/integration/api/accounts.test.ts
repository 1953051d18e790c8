import jwt from 'jsonwebtoken';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
});
afterAll(() => ctx.close());

function sessionCookie(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith('tidemark_session='));
  if (!set) throw new Error('no session cookie');
  return set.split(';')[0];
}

describe('register', () => {
  it('creates a user with a personal team (the first one owns the instance: plan unlimited), a JWT and an HttpOnly session cookie', async () => {
    const res = await call('POST', '/api/auth/register', {
      body: { email: 'Ada@Example.com', password: 'correct horse', full_name: 'Ada' },
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data.user).toMatchObject({ email: 'ada@example.com', full_name: 'Ada' });
    expect(res.body.data.team).toMatchObject({ plan: 'unlimited' });
    expect(typeof res.body.timestamp).toBe('string');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('tidemark_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const me = await call('GET', '/api/users/me', { token: res.body.data.token });
    expect(me.status).toBe(200);
    expect(me.body.data.email).toBe('ada@example.com');
    const role = await ctx.pool.query('SELECT role FROM team_members WHERE team_id = $1', [res.body.data.team.id]);
    expect(role.rows).toEqual([{ role: 'owner' }]);
  });

  it('refuses a duplicate email (any case) with 409 CONFLICT', async () => {
    await call('POST', '/api/auth/register', { body: { email: 'dup@example.com', password: 'password1' } });
    const res = await call('POST', '/api/auth/register', { body: { email: 'DUP@example.com', password: 'password2' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ success: false, error: { code: 'CONFLICT' } });
  });

  it('validates the body, strips unknown fields, and never stores the password in the clear', async () => {
    const short = await call('POST', '/api/auth/register', { body: { email: 'x@example.com', password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.error.code).toBe('VALIDATION_ERROR');
    expect(short.body.error.message).toMatch(/password/);
    const badEmail = await call('POST', '/api/auth/register', {
      body: { email: 'not-an-email', password: 'password1' },
    });
    expect(badEmail.status).toBe(400);
    const malformed = await call('POST', '/api/auth/register', { rawBody: '{"email": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('VALIDATION_ERROR');
    const ok = await call('POST', '/api/auth/register', {
      body: {
        email: 'strip@example.com',
        password: 'plain-text-secret',
        is_admin: true,
        id: '00000000-0000-0000-0000-000000000001',
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.user.id).not.toBe('00000000-0000-0000-0000-000000000001');
    const stored = await ctx.pool.query('SELECT password_hash FROM users WHERE email = $1', ['strip@example.com']);
    expect(stored.rows[0].password_hash).toMatch(/^\$argon2id\$/);
    expect(stored.rows[0].password_hash).not.toContain('plain-text-secret');
  });
});

describe('login, logout and token renewal', () => {
  beforeAll(async () => {
    await call('POST', '/api/auth/register', { body: { email: 'login@example.com', password: 'right-password' } });
  });

  it('gives the same 401 message for a wrong password and an unknown email', async () => {
    const wrong = await call('POST', '/api/auth/login', {
      body: { email: 'login@example.com', password: 'wrong-password' },
    });
    const unknown = await call('POST', '/api/auth/login', {
      body: { email: 'nobody@example.com', password: 'wrong-password' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(wrong.body.error.code).toBe('UNAUTHORIZED');
  });

  it('signs in, renews a JWT from the session cookie, and logout ends the session', async () => {
    const login = await call('POST', '/api/auth/login', {
      body: { email: 'LOGIN@example.com', password: 'right-password' },
    });
    expect(login.status).toBe(200);
    const cookie = sessionCookie(login.headers);
    const renewed = await call('POST', '/api/auth/token', { headers: { cookie } });
    expect(renewed.status).toBe(200);
    expect((await call('GET', '/api/users/me', { token: renewed.body.data.token })).status).toBe(200);
    expect((await call('POST', '/api/auth/logout', { headers: { cookie } })).status).toBe(200);
    expect((await call('POST', '/api/auth/token', { headers: { cookie } })).status).toBe(401);
    expect((await call('POST', '/api/auth/token')).status).toBe(401);
  });

  it('stores only a hash of the session cookie', async () => {
    const login = await call('POST', '/api/auth/login', {
      body: { email: 'login@example.com', password: 'right-password' },
    });
    const value = sessionCookie(login.headers).split('=')[1];
    const { rows } = await ctx.pool.query('SELECT token_hash FROM user_sessions');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.token_hash)).not.toContain(value);
  });

  it('throttles failed logins per email with 429', async () => {
    await call('POST', '/api/auth/register', { body: { email: 'victim@example.com', password: 'right-password' } });
    for (let i = 0; i < 10; i++) {
      const r = await call('POST', '/api/auth/login', {
        body: { email: 'victim@example.com', password: `guess-${i}` },
      });
      expect(r.status).toBe(401);
    }
    const blocked = await call('POST', '/api/auth/login', {
      body: { email: 'victim@example.com', password: 'right-password' },
    });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBeTruthy();
  });
});

describe('parallel guessing', () => {
  it('counts every attempt before the password check, so a burst cannot outrun the limit', async () => {
    await call('POST', '/api/auth/register', { body: { email: 'burst@example.com', password: 'right-password' } });
    const replies = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call('POST', '/api/auth/login', { body: { email: 'burst@example.com', password: `guess-${i}` } }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
  });
});

describe('JWT verification', () => {
  let userId: string;
  beforeAll(async () => {
    const r = await call('POST', '/api/auth/register', { body: { email: 'jwt@example.com', password: 'password1' } });
    userId = r.body.data.user.id;
  });

  const base = { sub: '', iss: 'tidemark', aud: 'tidemark-dashboard' };
  it.each([
    ['another secret', () => jwt.sign({ ...base, sub: userId }, 'x'.repeat(40), { algorithm: 'HS256', expiresIn: 60 })],
    [
      'another audience',
      () =>
        jwt.sign({ ...base, sub: userId, aud: 'other' }, ctx.config.JWT_SECRET, { algorithm: 'HS256', expiresIn: 60 }),
    ],
    [
      'another issuer',
      () =>
        jwt.sign({ ...base, sub: userId, iss: 'other' }, ctx.config.JWT_SECRET, { algorithm: 'HS256', expiresIn: 60 }),
    ],
    [
      'another algorithm (HS512)',
      () => jwt.sign({ ...base, sub: userId }, ctx.config.JWT_SECRET, { algorithm: 'HS512', expiresIn: 60 }),
    ],
    ['alg none', () => jwt.sign({ ...base, sub: userId }, '', { algorithm: 'none' })],
    [
      'an expired token',
      () =>
        jwt.sign({ ...base, sub: userId, exp: Math.floor(Date.now() / 1000) - 10 }, ctx.config.JWT_SECRET, {
          algorithm: 'HS256',
        }),
    ],
  ])('rejects %s with 401', async (_label, make) => {
    const res = await call('GET', '/api/users/me', { token: make() });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('accepts a correctly signed token that carries the current token version', async () => {
    const token = jwt.sign({ ...base, sub: userId, ver: 0 }, ctx.config.JWT_SECRET, {
      algorithm: 'HS256',
      expiresIn: 60,
    });
    expect((await call('GET', '/api/users/me', { token })).status).toBe(200);
  });

  it.each([
    ['no token version', { ver: undefined }],
    ['a token version that is not current', { ver: 1 }],
    ['a subject that is not a user id', { sub: 'not-a-uuid', ver: 0 }],
  ])('rejects a correctly signed token with %s with 401', async (_label, over) => {
    const token = jwt.sign({ ...base, sub: userId, ...over }, ctx.config.JWT_SECRET, {
      algorithm: 'HS256',
      expiresIn: 60,
    });
    const res = await call('GET', '/api/users/me', { token });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('profile and password', () => {
  it('updates the profile and changes the password, ending other sessions', async () => {
    const reg = await call('POST', '/api/auth/register', {
      body: { email: 'pw@example.com', password: 'first-password' },
    });
    const token = reg.body.data.token;
    const otherSession = sessionCookie(
      (await call('POST', '/api/auth/login', { body: { email: 'pw@example.com', password: 'first-password' } }))
        .headers,
    );
    const upd = await call('PUT', '/api/users/me', {
      token,
      body: { full_name: 'Grace', avatar_url: 'https://example.com/a.png', email: 'evil@example.com' },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({
      full_name: 'Grace',
      avatar_url: 'https://example.com/a.png',
      email: 'pw@example.com',
    });
    const wrong = await call('PUT', '/api/users/me/password', {
      token,
      body: { current_password: 'nope-nope', new_password: 'second-password' },
    });
    expect(wrong.status).toBe(401);
    const ok = await call('PUT', '/api/users/me/password', {
      token,
      body: { current_password: 'first-password', new_password: 'second-password' },
    });
    expect(ok.status).toBe(200);
    expect((await call('POST', '/api/auth/token', { headers: { cookie: otherSession } })).status).toBe(401);
    expect(
      (await call('POST', '/api/auth/login', { body: { email: 'pw@example.com', password: 'first-password' } })).status,
    ).toBe(401);
    expect(
      (await call('POST', '/api/auth/login', { body: { email: 'pw@example.com', password: 'second-password' } }))
        .status,
    ).toBe(200);
  });
});

describe('ALLOW_SIGNUP=false', () => {
  it('refuses registration with 403', async () => {
    const closed = await createTestContext({ ALLOW_SIGNUP: 'false' });
    try {
      const res = await client(closed.baseUrl)('POST', '/api/auth/register', {
        body: { email: 'a@example.com', password: 'password1' },
      });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    } finally {
      await closed.close();
    }
  });
});
