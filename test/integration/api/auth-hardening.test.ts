// Issue 19 items 10–12 and 13b: bounded metric labels, the sign-up limit, TRUST_PROXY as a hop count or
// CIDR list (client = right-most untrusted hop), clients counted by IPv4 address or IPv6 /64, sign-in
// throttling without a hard lock (a sprayed email slows every client but the owner's known devices),
// team-member add that tells a free user nothing about an email, and JWT revocation at logout and password
// change (a revoked token revokes nothing more).
import { randomUUID } from 'node:crypto';
import { MEMBER_ADDS_PER_WINDOW } from '../../../api/routes/teamMembers';
import { DEVICE_COOKIE, DEVICE_TTL_MS } from '../../../lib/auth/devices';
import {
  EMAIL_SLOWDOWN_AFTER,
  MAX_FAILURES_PER_CLIENT,
  MAX_FAILURES_PER_PAIR,
  SLOW_ATTEMPTS,
  SLOW_WINDOW_SECONDS,
} from '../../../lib/auth/throttle';
import { clientBucket } from '../../../lib/auth/windows';
import { ABUSE_LIMIT_PER_MINUTE } from '../../../lib/ingest/accept/browser';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

const PASSWORD = 'password-123';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** Headers of a request that reached us through one proxy, for the client at `ip`; `spoof` is what the client itself sent. */
const via = (ip: string, spoof?: string) => ({ 'x-forwarded-for': spoof ? `${spoof}, ${ip}` : ip });

function login(ctx: TestContext, email: string, password: string, headers: Record<string, string> = {}) {
  return client(ctx.baseUrl)('POST', '/api/auth/login', { body: { email, password }, headers });
}

function setCookie(headers: Headers, name: string): string {
  const set = headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!set) throw new Error(`no ${name} cookie`);
  return set;
}

function sessionCookie(headers: Headers): string {
  return setCookie(headers, 'tidemark_session').split(';')[0];
}

/** The `name=value` of the known-device cookie a sign-in set. */
function deviceCookie(headers: Headers): string {
  return setCookie(headers, DEVICE_COOKIE).split(';')[0];
}

// One proxy hop in front (the test client on 127.0.0.1 plays the proxy): the client is the last XFF entry.
let ctx: TestContext;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  ctx = await createTestContext({ TRUST_PROXY: '1' });
  call = client(ctx.baseUrl);
});
afterAll(() => ctx.close());

describe('/metrics labels', () => {
  it('label requests to different websites with one route pattern, never an id', async () => {
    const owner = await registerUser(ctx, 'pro', 'metrics');
    const a = await createWebsite(ctx, owner, 'a.metrics.example.com');
    const b = await createWebsite(ctx, owner, 'b.metrics.example.com');
    for (const site of [a, b]) {
      expect((await call('GET', `/api/websites/${site.id}`, { token: owner.token })).status).toBe(200);
      expect((await call('GET', `/api/websites/${site.id}/goals`, { token: owner.token })).status).toBe(200);
      expect((await call('GET', `/api/websites/${site.id}/team-members`, { token: owner.token })).status).toBe(200);
      // An error answered from inside a nested router keeps its pattern too.
      expect(
        (
          await call('PUT', `/api/websites/${site.id}/goals/${randomUUID()}`, {
            token: owner.token,
            body: { name: 'x' },
          })
        ).status,
      ).toBe(404);
    }
    expect((await call('GET', `/no/such/${a.id}`)).status).toBe(404);

    const { values } = await ctx.metrics.httpRequests.get();
    const routes = values.map((v) => String(v.labels.route));
    for (const route of routes) {
      expect(route).not.toContain(a.id);
      expect(route).not.toContain(b.id);
    }
    const count = (route: string, method: string, status: string) =>
      values
        .filter((v) => v.labels.route === route && v.labels.method === method && v.labels.status === status)
        .map((v) => v.value);
    expect(count('/api/websites/:websiteId', 'GET', '200')).toEqual([2]);
    expect(count('/api/websites/:websiteId/goals', 'GET', '200')).toEqual([2]);
    expect(count('/api/websites/:websiteId/team-members', 'GET', '200')).toEqual([2]);
    expect(count('/api/websites/:websiteId/goals/:goalId', 'PUT', '404')).toEqual([2]);
    expect(count('unmatched', 'GET', '404')).toEqual([1]);
    const text = await ctx.metrics.registry.metrics();
    expect(text).not.toContain(a.id);
    expect(text).not.toContain(b.id);
  });
});

describe('sign-up limit', () => {
  it('limits sign-ups per client and in total, answering 429 in the envelope with Retry-After', async () => {
    const limited = await createTestContext({
      TRUST_PROXY: '1',
      SIGNUP_LIMIT_PER_CLIENT: '3',
      SIGNUP_LIMIT_TOTAL: '5',
    });
    try {
      const register = (ip: string, spoof?: string) =>
        client(limited.baseUrl)('POST', '/api/auth/register', {
          body: { email: `signup-${randomUUID()}@example.com`, password: PASSWORD },
          headers: via(ip, spoof),
        });
      // A client's own X-Forwarded-For entries do not make it a new client.
      for (let i = 0; i < 3; i++) expect((await register('198.51.100.1', `10.0.0.${i}`)).status).toBe(201);
      const refused = await register('198.51.100.1', '10.0.0.99');
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
      expect(typeof refused.body.error.timestamp).toBe('string');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
      // Another client still may, until the global ceiling.
      expect((await register('198.51.100.2')).status).toBe(201);
      expect((await register('198.51.100.2')).status).toBe(201);
      const ceiling = await register('198.51.100.3');
      expect(ceiling.status).toBe(429);
      expect(ceiling.headers.get('retry-after')).toBeTruthy();
      const { rows } = await limited.pool.query<{ n: string }>('SELECT count(*) AS n FROM users');
      expect(Number(rows[0].n)).toBe(5);
    } finally {
      await limited.close();
    }
  });
});

describe('TRUST_PROXY=1: a spoofed left-most X-Forwarded-For does not change the client', () => {
  it('keeps one identity for the per-client sign-in limit across emails', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < MAX_FAILURES_PER_CLIENT; i++) {
      const r = await login(ctx, `stuffing-${i}@example.com`, 'wrong-password', via(ip, `192.0.2.${i}`));
      expect(r.status).toBe(401);
    }
    const over = await login(ctx, 'stuffing-last@example.com', 'wrong-password', via(ip, '192.0.2.250'));
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('RATE_LIMITED');
    // A different client is not affected.
    expect((await login(ctx, 'stuffing-last@example.com', 'wrong-password', via('203.0.113.11'))).status).toBe(401);
  });

  it('keeps one identity for the browser abuse limit', async () => {
    const owner = await registerUser(ctx, 'pro', 'abuse');
    const site = await createWebsite(ctx, owner, 'abuse.example.com');
    const send = (spoof: string) =>
      call('POST', `/e/${site.tracking_code}`, {
        headers: { 'user-agent': CHROME, ...via('203.0.113.20', spoof) },
        body: {
          event_type: 'pageview',
          session_id: `sess-${randomUUID()}`,
          url: 'https://abuse.example.com/',
          device_type: 'desktop',
          browser: 'Chrome',
          os: 'Linux',
          user_agent: CHROME,
          screen_width: 1440,
          screen_height: 900,
          language: 'en-US',
        },
      });
    const abuseKeys = () => ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:abuse:${site.id}:*`);
    // Stay clear of a minute boundary: the abuse window is the calendar minute.
    const toNextMinute = 60_000 - (Date.now() % 60_000);
    if (toNextMinute < 5_000) await new Promise((r) => setTimeout(r, toNextMinute + 100));
    expect((await send('192.0.2.1')).status).toBe(200);
    expect((await send('192.0.2.2')).status).toBe(200);
    const keys = await abuseKeys();
    expect(keys).toHaveLength(1);
    expect(Number(await ctx.redis.get(keys[0]))).toBe(2);
    await ctx.redis.set(keys[0], String(ABUSE_LIMIT_PER_MINUTE), 'KEEPTTL');
    const over = await send('192.0.2.3');
    expect(over.status).toBe(429);
  });
});

describe('TRUST_PROXY as a CIDR list', () => {
  it('skips hops inside the list and takes the right-most address outside it', async () => {
    const cidr = await createTestContext({ TRUST_PROXY: '127.0.0.0/8, 10.0.0.0/8' });
    try {
      const user = await registerUser(cidr, 'free', 'cidr');
      const hops = (spoof: string, proxy: string) => ({ 'x-forwarded-for': `${spoof}, 203.0.113.30, ${proxy}` });
      for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
        expect((await login(cidr, user.email, 'wrong-password', hops(`192.0.2.${i}`, `10.1.0.${i}`))).status).toBe(401);
      }
      // Same client behind another internal proxy: still the same client, now throttled.
      expect((await login(cidr, user.email, PASSWORD, { 'x-forwarded-for': '203.0.113.30, 10.9.9.9' })).status).toBe(
        429,
      );
      // The next address out is another client.
      expect((await login(cidr, user.email, PASSWORD, { 'x-forwarded-for': '203.0.113.31, 10.1.0.1' })).status).toBe(
        200,
      );
    } finally {
      await cidr.close();
    }
  });
});

describe('clients are counted by IPv4 address or IPv6 /64', () => {
  it.each([
    ['198.51.100.7', '198.51.100.7'],
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::FFFF:c633:6407', '198.51.100.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::198.51.100.7', '64:ff9b:0:0::/64'],
    ['not an address', 'unknown'],
    [undefined, 'unknown'],
  ])('%s → %s', (ip, bucket) => {
    expect(clientBucket(ip)).toBe(bucket);
  });

  it('one IPv6 /64 is one client for the sign-in limits; an IPv4-mapped address is its IPv4 address', async () => {
    const victim = await registerUser(ctx, 'free', 'v6');
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      expect((await login(ctx, victim.email, `guess-${i}`, via(`2001:db8:77:1::${(i + 1).toString(16)}`))).status).toBe(
        401,
      );
    }
    expect((await login(ctx, victim.email, PASSWORD, via('2001:db8:77:1:ffff:ffff:ffff:fffe'))).status).toBe(429);
    expect((await login(ctx, victim.email, PASSWORD, via('2001:db8:77:2::1'))).status).toBe(200);

    const mapped = await registerUser(ctx, 'free', 'mapped');
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      expect((await login(ctx, mapped.email, `guess-${i}`, via('::ffff:198.51.100.77'))).status).toBe(401);
    }
    expect((await login(ctx, mapped.email, PASSWORD, via('198.51.100.77'))).status).toBe(429);
  });

  it('one IPv6 /64 is one client for the sign-up limit', async () => {
    const limited = await createTestContext({ TRUST_PROXY: '1', SIGNUP_LIMIT_PER_CLIENT: '2' });
    try {
      const register = (ip: string) =>
        client(limited.baseUrl)('POST', '/api/auth/register', {
          body: { email: `signup6-${randomUUID()}@example.com`, password: PASSWORD },
          headers: via(ip),
        });
      expect((await register('2001:db8:5:5::1')).status).toBe(201);
      expect((await register('2001:db8:5:5::2')).status).toBe(201);
      expect((await register('2001:db8:5:5:abcd:ef01:2345:6789')).status).toBe(429);
      expect((await register('2001:db8:5:6::1')).status).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('sign-in throttling without a lockout', () => {
  let victim: TestUser;
  beforeEach(async () => {
    victim = await registerUser(ctx, 'free', 'victim');
  });

  it('throttles one (email, client) pair; the right password from another client still signs in', async () => {
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      expect((await login(ctx, victim.email, `guess-${i}`, via('198.51.100.40'))).status).toBe(401);
    }
    const blocked = await login(ctx, victim.email, PASSWORD, via('198.51.100.40'));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await login(ctx, victim.email, PASSWORD, via('198.51.100.41'))).status).toBe(200);
  });

  it('slows every new client once the email is sprayed, however many addresses it uses; a known device gets in', async () => {
    // The owner signed in on this browser before the spray: it holds a known-device cookie.
    const before = await login(ctx, victim.email, PASSWORD, via('198.18.2.1'));
    expect(before.status).toBe(200);
    // One guess per address, each from a different IPv6 /64: every one a new client.
    const fresh = (i: number) => via(`2001:db8:${(0x100 + i).toString(16)}:1::1`);
    for (let i = 0; i < EMAIL_SLOWDOWN_AFTER; i++) {
      expect((await login(ctx, victim.email, `spray-${i}`, fresh(i))).status).toBe(401);
    }
    // The email is now slowed: all clients, new ones too, share a few attempts per window.
    for (let i = 0; i < SLOW_ATTEMPTS; i++)
      expect((await login(ctx, victim.email, `again-${i}`, fresh(100 + i))).status).toBe(401);
    const slowed = await login(ctx, victim.email, 'again-x', fresh(200));
    expect(slowed.status).toBe(429);
    expect(slowed.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(slowed.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(SLOW_WINDOW_SECONDS);
    // The right password from a new device waits too (it cannot be told apart from a guess).
    expect((await login(ctx, victim.email, PASSWORD, fresh(201))).status).toBe(429);
    // A forged device cookie, or one another account's sign-in set, proves nothing.
    const device = deviceCookie(before.headers);
    const [name, value] = device.split('=');
    const forged = `${name}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await login(ctx, victim.email, PASSWORD, { ...fresh(202), cookie: forged })).status).toBe(429);
    const someoneElse = await registerUser(ctx, 'free', 'neighbour');
    const theirs = deviceCookie((await login(ctx, someoneElse.email, PASSWORD, fresh(203))).headers);
    expect((await login(ctx, victim.email, PASSWORD, { ...fresh(204), cookie: theirs })).status).toBe(429);
    // The owner's known device is never slowed, even from an address the spray used: a wrong password is
    // judged, the right one signs in and keeps the device's id.
    expect((await login(ctx, victim.email, 'owner-typo', { ...fresh(0), cookie: device })).status).toBe(401);
    const owner = await login(ctx, victim.email, PASSWORD, { ...fresh(0), cookie: device });
    expect(owner.status).toBe(200);
    expect(deviceCookie(owner.headers).split('.').slice(0, 2)).toEqual(device.split('.').slice(0, 2));
    // A new device gets its attempt when the shared window resets (at most SLOW_WINDOW_SECONDS): here the
    // window is made to end now instead of waiting for it.
    const slowKeys = await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:login-fail:slow:*`);
    expect(slowKeys.length).toBeGreaterThan(0);
    for (const key of slowKeys) expect(await ctx.redis.ttl(key)).toBeLessThanOrEqual(SLOW_WINDOW_SECONDS);
    await ctx.redis.del(...slowKeys);
    expect((await login(ctx, victim.email, PASSWORD, fresh(205))).status).toBe(200);
  });

  it('limits a known device by its own failures on the email', async () => {
    const first = await login(ctx, victim.email, PASSWORD, via('198.51.100.60'));
    const device = deviceCookie(first.headers);
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      expect(
        (await login(ctx, victim.email, `typo-${i}`, { ...via(`198.51.100.${61 + i}`), cookie: device })).status,
      ).toBe(401);
    }
    expect((await login(ctx, victim.email, PASSWORD, { ...via('198.51.100.99'), cookie: device })).status).toBe(429);
    // Without the cookie it is just another client, and that client has no failures.
    expect((await login(ctx, victim.email, PASSWORD, via('198.51.100.99'))).status).toBe(200);
  });

  it('sets the known-device cookie HttpOnly, SameSite=Lax, for a year, on /api/auth; Secure with an https PUBLIC_URL', async () => {
    const plain = setCookie((await login(ctx, victim.email, PASSWORD, via('198.51.100.110'))).headers, DEVICE_COOKIE);
    expect(plain).toMatch(/; HttpOnly/i);
    expect(plain).toMatch(/; SameSite=Lax/i);
    expect(plain).toMatch(/; Path=\/api\/auth(;|$)/);
    expect(plain).toContain(`; Max-Age=${DEVICE_TTL_MS / 1000}`);
    expect(plain).not.toMatch(/; Secure/i);
    const https = await createTestContext({ TRUST_PROXY: '1', PUBLIC_URL: 'https://stats.example.com' });
    try {
      const user = await registerUser(https, 'free', 'https');
      expect(setCookie((await login(https, user.email, PASSWORD)).headers, DEVICE_COOKIE)).toMatch(/; Secure/i);
    } finally {
      await https.close();
    }
  });

  it("a successful sign-in forgets the pair's failures", async () => {
    const ip = via('198.51.100.50');
    for (let i = 0; i < MAX_FAILURES_PER_PAIR - 1; i++)
      expect((await login(ctx, victim.email, `typo-${i}`, ip)).status).toBe(401);
    expect((await login(ctx, victim.email, PASSWORD, ip)).status).toBe(200);
    for (let i = 0; i < MAX_FAILURES_PER_PAIR - 1; i++)
      expect((await login(ctx, victim.email, `typo2-${i}`, ip)).status).toBe(401);
    expect((await login(ctx, victim.email, PASSWORD, ip)).status).toBe(200);
  });
});

const CROSS_SITE: Record<string, string>[] = [
  { origin: 'https://evil.example' },
  { origin: 'null' },
  { 'sec-fetch-site': 'cross-site' },
];

describe('cross-site requests to /api/auth', () => {
  it('refuses a sign-up, sign-in, logout or token renewal whose Origin is another site; same-origin and Origin-less pass', async () => {
    const body = { email: `csrf-${Date.now()}@example.com`, password: 'correct horse battery' };
    for (const path of ['/api/auth/register', '/api/auth/login', '/api/auth/logout', '/api/auth/token']) {
      for (const headers of CROSS_SITE) {
        const res = await call('POST', path, { body, headers });
        expect({ path, headers, status: res.status, code: res.body.error?.code }).toEqual({
          path,
          headers,
          status: 403,
          code: 'FORBIDDEN',
        });
      }
    }
    const same = await call('POST', '/api/auth/register', {
      body,
      headers: { origin: new URL(ctx.config.PUBLIC_URL).origin },
    });
    expect(same.status).toBe(201);
    const bare = await call('POST', '/api/auth/login', { body });
    expect(bare.status).toBe(200);
  });
});

describe('team-member add', () => {
  it('tells a free user nothing about whether an email is registered', async () => {
    const free = await registerUser(ctx, 'free', 'free-admin');
    const site = await createWebsite(ctx, free, 'free-members.example.com');
    const registered = await registerUser(ctx, 'free', 'someone');
    const add = (email: string) =>
      call('POST', `/api/websites/${site.id}/team-members`, { token: free.token, body: { email } });
    const known = await add(registered.email);
    const unknown = await add(`ghost-${randomUUID()}@example.com`);
    expect(known.status).toBe(403);
    expect(unknown.status).toBe(403);
    expect(known.body.error.code).toBe('PLAN_LIMIT_REACHED');
    expect({ ...unknown.body.error, timestamp: 0 }).toEqual({ ...known.body.error, timestamp: 0 });
  });

  it('still answers an admin of a team with room 404 for an unknown email (the spec) and 201 for a user', async () => {
    const pro = await registerUser(ctx, 'pro', 'pro-admin');
    const site = await createWebsite(ctx, pro, 'pro-members.example.com');
    const other = await registerUser(ctx, 'free', 'invitee');
    const add = (email: string) =>
      call('POST', `/api/websites/${site.id}/team-members`, { token: pro.token, body: { email } });
    expect((await add(`ghost-${randomUUID()}@example.com`)).status).toBe(404);
    expect((await add(other.email)).status).toBe(201);
    expect((await add(other.email)).status).toBe(409);
  });

  it('is limited per user', async () => {
    const admin = await registerUser(ctx, 'pro', 'prober');
    const site = await createWebsite(ctx, admin, 'probe.example.com');
    const add = () =>
      call('POST', `/api/websites/${site.id}/team-members`, {
        token: admin.token,
        body: { email: `probe-${randomUUID()}@example.com` },
      });
    for (let i = 0; i < MEMBER_ADDS_PER_WINDOW; i++) expect((await add()).status).toBe(404);
    const limited = await add();
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBeTruthy();
    // Another user is not affected.
    const second = await registerUser(ctx, 'pro', 'prober2');
    const site2 = await createWebsite(ctx, second, 'probe2.example.com');
    expect(
      (
        await call('POST', `/api/websites/${site2.id}/team-members`, {
          token: second.token,
          body: { email: 'nobody@example.com' },
        })
      ).status,
    ).toBe(404);
  });
});

describe('JWT revocation', () => {
  it('logout (session cookie) revokes the JWTs issued so far, even one from the same second; a new login works', async () => {
    const user = await registerUser(ctx, 'free', 'logout');
    const signedIn = await login(ctx, user.email, PASSWORD);
    const token = signedIn.body.data.token;
    const cookie = sessionCookie(signedIn.headers);
    expect((await call('GET', '/api/users/me', { token })).status).toBe(200);
    expect((await call('POST', '/api/auth/logout', { headers: { cookie } })).status).toBe(200);
    expect((await call('GET', '/api/users/me', { token })).status).toBe(401);
    expect((await call('GET', '/api/users/me', { token: user.token })).status).toBe(401);
    expect((await call('GET', '/api/websites', { token })).status).toBe(401);
    expect((await call('POST', '/api/auth/token', { headers: { cookie } })).status).toBe(401);
    const again = await login(ctx, user.email, PASSWORD);
    expect(again.status).toBe(200);
    expect((await call('GET', '/api/users/me', { token: again.body.data.token })).status).toBe(200);
  });

  it('an already revoked token revokes nothing: it cannot keep signing its user out', async () => {
    const user = await registerUser(ctx, 'free', 'stale-logout');
    expect((await call('POST', '/api/auth/logout', { token: user.token })).status).toBe(200);
    const fresh = await login(ctx, user.email, PASSWORD);
    expect(fresh.status).toBe(200);
    const freshToken = fresh.body.data.token;
    const { rows } = await ctx.pool.query<{ token_version: number }>('SELECT token_version FROM users WHERE id = $1', [
      user.id,
    ]);
    for (let i = 0; i < 3; i++) {
      const replay = await call('POST', '/api/auth/logout', { token: user.token });
      expect(replay.status).toBe(200);
      expect(replay.body.data).toEqual({ logged_out: true });
    }
    const after = await ctx.pool.query<{ token_version: number }>('SELECT token_version FROM users WHERE id = $1', [
      user.id,
    ]);
    expect(after.rows[0].token_version).toBe(rows[0].token_version);
    expect((await call('GET', '/api/users/me', { token: freshToken })).status).toBe(200);
    // The current token still signs its user out.
    expect((await call('POST', '/api/auth/logout', { token: freshToken })).status).toBe(200);
    expect((await call('GET', '/api/users/me', { token: freshToken })).status).toBe(401);
  });

  it('logout with only the Bearer token revokes it too', async () => {
    const user = await registerUser(ctx, 'free', 'logout-bearer');
    expect((await call('POST', '/api/auth/logout', { token: user.token })).status).toBe(200);
    expect((await call('GET', `/api/teams/${user.teamId}/permissions`, { token: user.token })).status).toBe(401);
  });

  it('a password change revokes every earlier JWT and ends other sessions; the caller gets a fresh token', async () => {
    const user = await registerUser(ctx, 'free', 'pwchange');
    const other = await login(ctx, user.email, PASSWORD);
    const otherCookie = sessionCookie(other.headers);
    const changed = await call('PUT', '/api/users/me/password', {
      token: user.token,
      body: { current_password: PASSWORD, new_password: 'another-password-456' },
    });
    expect(changed.status).toBe(200);
    expect((await call('GET', '/api/users/me', { token: user.token })).status).toBe(401);
    expect((await call('GET', '/api/users/me', { token: other.body.data.token })).status).toBe(401);
    expect((await call('POST', '/api/auth/token', { headers: { cookie: otherCookie } })).status).toBe(401);
    expect((await call('GET', '/api/users/me', { token: changed.body.data.token })).status).toBe(200);
    const fresh = await login(ctx, user.email, 'another-password-456');
    expect(fresh.status).toBe(200);
    expect((await call('GET', '/api/users/me', { token: fresh.body.data.token })).status).toBe(200);
  });
});
