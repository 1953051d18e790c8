// GET/PUT /api/users/me and PUT /api/users/me/password (issue 23): each status the endpoints answer, and bad
// input (wrong types, over the caps, text PostgreSQL cannot store) a 400, never a 500. DELETE has its own file.
import { registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let user: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'free', 'profile');
});
afterAll(() => ctx.close());

test('GET /me answers the profile; 401 without a valid token', async () => {
  const res = await call('GET', '/api/users/me', { token: user.token });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({
    id: user.id,
    email: user.email,
    full_name: null,
    avatar_url: null,
    default_team_id: user.teamId,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect((await call('GET', '/api/users/me')).status).toBe(401);
  expect((await call('GET', '/api/users/me', { token: 'a.b.c' })).status).toBe(401);
});

test('PUT /me changes the fields given, null clears them; bad input is 400 naming the field', async () => {
  const set = await call('PUT', '/api/users/me', {
    token: user.token,
    body: { full_name: ' Ada ', avatar_url: 'https://example.com/a.png' },
  });
  expect(set.status).toBe(200);
  expect(set.body.data).toMatchObject({ full_name: 'Ada', avatar_url: 'https://example.com/a.png' });
  const kept = await call('PUT', '/api/users/me', { token: user.token, body: { avatar_url: null } });
  expect(kept.body.data).toMatchObject({ full_name: 'Ada', avatar_url: null });

  const cases: [unknown, string][] = [
    [{ full_name: '' }, 'full_name'],
    [{ full_name: 'x'.repeat(201) }, 'full_name'],
    [{ full_name: 7 }, 'full_name'],
    [{ full_name: 'nul\u0000' }, 'full_name'],
    [{ full_name: 'lone \ud800' }, 'full_name'],
    [{ avatar_url: 'javascript:alert(1)' }, 'avatar_url'],
    [{ avatar_url: `https://example.com/${'a'.repeat(2048)}` }, 'avatar_url'],
    [{ avatar_url: 'https://example.com/\u0000' }, 'avatar_url'],
  ];
  for (const [body, field] of cases) {
    const res = await call('PUT', '/api/users/me', { token: user.token, body });
    expect([field, res.status, res.body.error?.code]).toEqual([field, 400, 'VALIDATION_ERROR']);
    expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
  }
  expect((await call('PUT', '/api/users/me', { token: user.token, rawBody: '[]' })).status).toBe(400);
  expect((await call('PUT', '/api/users/me', { body: { full_name: 'x' } })).status).toBe(401);
  expect((await call('GET', '/api/users/me', { token: user.token })).body.data.full_name).toBe('Ada');
});

test('PUT /me/password: 200 with a fresh token, 401 for a wrong current password, 400 for a short new one', async () => {
  const other = await registerUser(ctx, 'free', 'password');
  const short = await call('PUT', '/api/users/me/password', {
    token: other.token,
    body: { current_password: 'password-123', new_password: 'short' },
  });
  expect([short.status, short.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  const wrong = await call('PUT', '/api/users/me/password', {
    token: other.token,
    body: { current_password: 'wrong-password', new_password: 'new-password-456' },
  });
  expect([wrong.status, wrong.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
  const ok = await call('PUT', '/api/users/me/password', {
    token: other.token,
    body: { current_password: 'password-123', new_password: 'new-password-456' },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.data).toEqual({ updated: true, token: expect.any(String), expires_in: expect.any(Number) });
  expect((await call('GET', '/api/users/me', { token: other.token })).status).toBe(401);
  expect((await call('GET', '/api/users/me', { token: ok.body.data.token })).status).toBe(200);
});
