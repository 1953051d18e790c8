// PUT /api/users/me/password and DELETE /api/users/me ask for the current password: wrong guesses there are
// limited per user like sign-in failures (429 with Retry-After), so a stolen token cannot guess the password.
import { LOGIN_WINDOW_SECONDS, MAX_FAILURES_PER_PAIR } from '../../../lib/auth/throttle';
import { windowKeys } from '../../../lib/auth/windows';
import { registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client, type Reply } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
const PASSWORD = 'password-123'; // registerUser's

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  await registerUser(ctx, 'pro', 'instance'); // the instance owner, whose account cannot be deleted
});
afterAll(() => ctx.close());

interface Endpoint {
  name: string;
  send: (token: string, password: string) => Promise<Reply>;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'PUT /api/users/me/password',
    send: (token, password) =>
      call('PUT', '/api/users/me/password', {
        token,
        body: { current_password: password, new_password: PASSWORD }, // the same again: the account stays usable
      }),
  },
  {
    name: 'DELETE /api/users/me',
    send: (token, password) => call('DELETE', '/api/users/me', { token, body: { password } }),
  },
];

async function login(user: TestUser): Promise<string> {
  const res = await call('POST', '/api/auth/login', { body: { email: user.email, password: PASSWORD } });
  expect(res.status).toBe(200);
  return res.body.data.token;
}

/** Ends the user's window now, as if LOGIN_WINDOW_SECONDS had passed. */
async function endWindow(user: TestUser) {
  const key = windowKeys(ctx.config.REDIS_PREFIX, ctx.config.JWT_SECRET, 'login-fail')('user', user.id);
  expect(await ctx.redis.exists(key)).toBe(1);
  await ctx.redis.del(key);
}

describe.each(ENDPOINTS)('$name', (endpoint) => {
  it('counts wrong passwords per user: 429 with Retry-After past the limit, even for the right password, until the window passes', async () => {
    const user = await registerUser(ctx, 'free', 'guessed');
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      const wrong = await endpoint.send(user.token, `wrong-${i}`);
      expect([i, wrong.status]).toEqual([i, 401]);
    }
    const limited = await endpoint.send(user.token, 'wrong-again');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(LOGIN_WINDOW_SECONDS - 60);
    expect(retryAfter).toBeLessThanOrEqual(LOGIN_WINDOW_SECONDS);

    // The right password, and another token of the same user (a new sign-in), are refused as well.
    expect((await endpoint.send(user.token, PASSWORD)).status).toBe(429);
    const other = await login(user);
    expect((await endpoint.send(other, PASSWORD)).status).toBe(429);
    // Another user is not affected.
    const bystander = await registerUser(ctx, 'free', 'bystander');
    expect((await endpoint.send(bystander.token, PASSWORD)).status).toBe(200);

    await endWindow(user);
    expect((await endpoint.send(other, PASSWORD)).status).toBe(200);
  });

  it('forgets the user’s failures once the right password is given (on either endpoint)', async () => {
    const user = await registerUser(ctx, 'free', 'forgetful');
    for (let i = 0; i < MAX_FAILURES_PER_PAIR - 1; i++) {
      expect((await endpoint.send(user.token, `wrong-${i}`)).status).toBe(401);
    }
    // The right password through the password change (it hands out a new token; the old one is revoked).
    const right = await ENDPOINTS[0].send(user.token, PASSWORD);
    expect(right.status).toBe(200);
    const token = right.body.data.token as string;
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      expect((await endpoint.send(token, `wrong-${i}`)).status).toBe(401);
    }
    expect((await endpoint.send(token, 'wrong-again')).status).toBe(429);
  });
});
