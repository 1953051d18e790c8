// Onboarding progress (issue 23): per user, defaults until the first save, an upsert that changes only the
// fields given, and bad input a 400 (or 413), never a 500.
import { MAX_ONBOARDING_DATA_BYTES, MAX_ONBOARDING_STEP } from '../../../lib/accounts/onboarding';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let alice: TestUser;
let bob: TestUser;
const P = '/api/onboarding/progress';

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  [alice, bob] = [await registerUser(ctx, 'free', 'alice'), await registerUser(ctx, 'free', 'bob')];
});
afterAll(() => ctx.close());

test('GET answers the defaults before anything is saved', async () => {
  const res = await call('GET', P, { token: alice.token });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    success: true,
    data: { user_id: alice.id, current_step: 0, completed: false, data: {}, created_at: null, updated_at: null },
    timestamp: expect.any(String),
  });
});

test('POST upserts: the first save fills the defaults, later saves change only the fields they give', async () => {
  const first = await call('POST', P, { token: alice.token, body: { step: 2, data: { site: 'example.com' } } });
  expect(first.status).toBe(200);
  expect(first.body.data).toEqual({
    user_id: alice.id,
    current_step: 2,
    completed: false,
    data: { site: 'example.com' },
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });

  const done = await call('POST', P, { token: alice.token, body: { completed: true } });
  expect(done.body.data).toMatchObject({ current_step: 2, completed: true, data: { site: 'example.com' } });
  expect(done.body.data.created_at).toBe(first.body.data.created_at);

  const moved = await call('POST', P, { token: alice.token, body: { step: 3, data: { goal: 'signup', n: [1, 2] } } });
  // `data` replaces the stored object; `completed` left out keeps its value.
  expect(moved.body.data).toMatchObject({ current_step: 3, completed: true, data: { goal: 'signup', n: [1, 2] } });

  const empty = await call('POST', P, { token: alice.token, body: {} });
  expect(empty.body.data).toMatchObject({ current_step: 3, completed: true, data: { goal: 'signup', n: [1, 2] } });

  const read = await call('GET', P, { token: alice.token });
  expect(read.body.data).toEqual(empty.body.data);
  expect(Date.parse(read.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(read.body.data.created_at));
});

test('progress is the user’s own: another user still sees the defaults', async () => {
  await call('POST', P, { token: alice.token, body: { step: 5 } });
  const res = await call('GET', P, { token: bob.token });
  expect(res.body.data).toMatchObject({ user_id: bob.id, current_step: 0, completed: false, data: {} });
});

test('team roles do not reach it: each member of a team, viewer to owner, reads and writes only their own', async () => {
  const owner = await registerUser(ctx, 'pro', 'owner');
  const site = await createWebsite(ctx, owner, 'onboarding.example.com');
  const members: TestUser[] = [owner];
  for (const role of ['viewer', 'editor', 'admin']) {
    const member = await registerUser(ctx, 'free', role);
    const added = await call('POST', `/api/websites/${site.id}/team-members`, {
      token: owner.token,
      body: { email: member.email, role },
    });
    expect(added.status).toBe(201);
    members.push(member);
  }
  for (const [i, m] of members.entries()) {
    expect((await call('POST', P, { token: m.token, body: { step: 10 + i, data: { who: m.id } } })).status).toBe(200);
  }
  for (const [i, m] of members.entries()) {
    const res = await call('GET', P, { token: m.token });
    expect(res.body.data).toMatchObject({ user_id: m.id, current_step: 10 + i, data: { who: m.id } });
  }
});

test('401 without a valid Bearer token', async () => {
  expect((await call('GET', P)).status).toBe(401);
  expect((await call('POST', P, { body: { step: 1 } })).status).toBe(401);
  expect((await call('POST', P, { body: { step: 1 }, token: `${alice.token}x` })).status).toBe(401);
});

test('bad input is 400 VALIDATION_ERROR naming the field, and nothing changes', async () => {
  const before = (await call('GET', P, { token: alice.token })).body.data;
  let deep: unknown = 'bottom';
  for (let i = 0; i < 20; i++) deep = { d: deep };
  const cases: [unknown, string][] = [
    [{ step: -1 }, 'step'],
    [{ step: 1.5 }, 'step'],
    [{ step: '2' }, 'step'],
    [{ step: MAX_ONBOARDING_STEP + 1 }, 'step'],
    [{ completed: 'yes' }, 'completed'],
    [{ completed: null }, 'completed'],
    [{ data: [1, 2] }, 'data'],
    [{ data: 'text' }, 'data'],
    [{ data: null }, 'data'],
    [{ data: { big: 'x'.repeat(MAX_ONBOARDING_DATA_BYTES) } }, 'data'],
    [{ data: deep }, 'data'],
    [{ data: { 'nul\u0000key': 1 } }, 'data'],
    [{ data: { text: 'nul \u0000 value' } }, 'data'],
    [{ data: { list: ['lone \udc00'] } }, 'data'],
  ];
  for (const [body, field] of cases) {
    const res = await call('POST', P, { token: alice.token, body });
    expect([JSON.stringify(body).slice(0, 60), res.status, res.body.error?.code]).toEqual([
      JSON.stringify(body).slice(0, 60),
      400,
      'VALIDATION_ERROR',
    ]);
    expect(res.body.error.message.startsWith(`${field}`)).toBe(true);
  }
  for (const rawBody of ['[]', '"x"', '{"step":']) {
    expect((await call('POST', P, { token: alice.token, rawBody })).status).toBe(400);
  }
  const huge = JSON.stringify({ data: { x: 'y'.repeat(1_100_000) } });
  const tooLarge = await call('POST', P, { token: alice.token, rawBody: huge });
  expect([tooLarge.status, tooLarge.body.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  expect((await call('GET', P, { token: alice.token })).body.data).toEqual(before);

  // Just within the caps is kept.
  const fits = await call('POST', P, {
    token: alice.token,
    body: { step: MAX_ONBOARDING_STEP, data: { big: 'x'.repeat(MAX_ONBOARDING_DATA_BYTES - 20) } },
  });
  expect(fits.status).toBe(200);
});
