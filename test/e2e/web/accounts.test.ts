// Accounts in the dashboard, in Chromium against a running server: signing up on an instance that has an
// owner, joining a team from an invite link (as a new person creating the account there, and as an existing
// user signing in first), editing the profile, changing the password, and deleting the account — including
// the refusals (wrong password, the instance owner, the last owner of a shared team) shown in words.
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../../../lib/accounts/users';
import { registerUser, type TestUser } from '../../helpers/accounts';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let browser: Browser;
let api: ReturnType<typeof client>;
let owner: TestUser;
let admin: TestUser;
const TEAM = 'Acme Analytics';
const PASSWORD = 'password-123';

jest.setTimeout(120_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  api = client(ctx.baseUrl);
  // The first account owns the instance; the admin's team is the one people are invited to.
  owner = await registerUser(ctx, 'free', 'owner');
  admin = await registerUser(ctx, 'pro', 'admin');
  await ctx.pool.query('UPDATE teams SET name = $1 WHERE id = $2', [TEAM, admin.teamId]);
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

/** Removes one expected failure from the watched problems; fails if it did not happen. */
function expectProblem(problems: string[], problem: string): void {
  const at = problems.indexOf(problem);
  expect(problems).toContain(problem);
  problems.splice(at, 1);
}

async function invite(email: string, role: 'viewer' | 'editor' | 'admin'): Promise<{ token: string; url: string }> {
  const res = await api('POST', `/api/teams/${admin.teamId}/invites`, { token: admin.token, body: { email, role } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function membership(userEmail: string): Promise<string | undefined> {
  const res = await api('GET', `/api/teams/${admin.teamId}/members`, { token: admin.token });
  expect(res.status).toBe(200);
  const members = res.body.data as { role: string; user: { email: string } }[];
  return members.find((m) => m.user.email === userEmail)?.role;
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

it('creates an account from the sign-up page', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await page.goto(`${ctx.baseUrl}/login`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.waitForURL(`${ctx.baseUrl}/register`);
  await page.getByRole('heading', { name: 'Create your account' }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'register');

  const email = `reader-${Date.now()}@example.com`;
  await page.getByLabel('Your name').fill('Rita Reader');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/new`);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  const { rows } = await ctx.pool.query(
    `SELECT u.full_name, m.role, t.name FROM users u
     JOIN team_members m ON m.user_id = u.id JOIN teams t ON t.id = m.team_id WHERE u.email = $1`,
    [email],
  );
  expect(rows).toEqual([{ full_name: 'Rita Reader', role: 'owner', name: "Rita Reader's team" }]);
  const owners = await ctx.pool.query('SELECT u.email FROM instance i JOIN users u ON u.id = i.owner_user_id');
  expect(owners.rows).toEqual([{ email: owner.email }]);
  expect(problems).toEqual([]);
  await context.close();

  // At a phone's width, in the dark: the taken email is refused in words.
  const phone = await watchedPage(browser, ctx.baseUrl, { width: 375, height: 800, colorScheme: 'dark' });
  await phone.page.goto(`${ctx.baseUrl}/register`);
  await phone.page.getByLabel('Email').fill(email);
  await phone.page.getByLabel('Password').fill('another password');
  await phone.page.getByRole('button', { name: 'Create account' }).click();
  await phone.page.getByRole('alert').waitFor();
  expect(await phone.page.getByRole('alert').textContent()).toMatch(/already exists/);
  expectProblem(phone.problems, 'POST /api/auth/register → 409');
  expect(await accessibilityViolations(phone.page)).toEqual([]);
  await screenshot(phone.page, 'register-375-dark');
  expect(phone.problems).toEqual([]);
  await phone.context.close();
});

it('lets an invited person create their account from the link and lands them in the team', async () => {
  const email = `newbie-${Date.now()}@example.com`;
  const { url } = await invite(email, 'editor');
  expect(url).toMatch(new RegExp(`^${ctx.baseUrl}/invite/[A-Za-z0-9_-]{43}$`));

  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await page.goto(url);
  await page.getByRole('heading', { name: `Join ${TEAM}` }).waitFor();
  expect(await page.getByLabel('Email').inputValue()).toBe(email);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'invite-new-person');

  await page.getByLabel('Your name').fill('Nina Newbie');
  await page.getByLabel('Password').fill('nina’s password');
  await page.getByRole('button', { name: 'Create account and join' }).click();
  await page.getByRole('heading', { name: 'You have joined the team' }).waitFor();
  expect(await page.locator('main').textContent()).toContain(`You are now an editor of ${TEAM}`);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'invite-joined');
  expect(await membership(email)).toBe('editor');

  // Signed in, and still after a reload (the session cookie).
  await page.getByRole('link', { name: 'Go to your sites' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites`);
  await page.reload();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  // The link is spent: opening it again says so.
  await page.goto(url);
  await page.getByRole('heading', { name: 'This invite cannot be used' }).waitFor();
  expectProblem(problems, `GET /api/invites/${url.split('/').pop()} → 404`);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'invite-used');
  expect(problems).toEqual([]);
  await context.close();
});

it('lets an existing user sign in from the invite and accept it', async () => {
  const member = await registerUser(ctx, 'free', 'member');
  const { token, url } = await invite(member.email, 'viewer');

  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, { width: 375, height: 800 });
  await page.goto(url);
  await page.getByRole('heading', { name: `Join ${TEAM}` }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'invite-sign-in-375');
  await page.getByRole('link', { name: 'Sign in to accept' }).click();
  await page.waitForURL(`${ctx.baseUrl}/login?next=${encodeURIComponent(`/invite/${token}`)}`);
  await signIn(page, member.email, PASSWORD);
  await page.waitForURL(`${ctx.baseUrl}/invite/${token}`);
  expect(await membership(member.email)).toBeUndefined();
  await page.getByRole('button', { name: 'Join the team' }).click();
  await page.getByRole('heading', { name: 'You have joined the team' }).waitFor();
  expect(await page.locator('main').textContent()).toContain(`You are now a viewer of ${TEAM}`);
  expect(await membership(member.email)).toBe('viewer');

  // An invite to someone else: the signed-in person is told so and offered to switch accounts.
  const other = await invite(`someone-else-${Date.now()}@example.com`, 'viewer');
  await page.goto(other.url);
  await page.getByText(`You are signed in as ${member.email}`).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'invite-other-account-375');
  await page.getByRole('button', { name: 'Sign out and continue' }).click();
  await page.getByRole('button', { name: 'Create account and join' }).waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('changes the name and the password from the account page', async () => {
  const user = await registerUser(ctx, 'free', 'profile');
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await page.goto(`${ctx.baseUrl}/account`);
  await page.waitForURL(`${ctx.baseUrl}/login?next=%2Faccount`);
  await signIn(page, user.email, PASSWORD);
  await page.waitForURL(`${ctx.baseUrl}/account`);
  await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'account');

  await page.getByLabel('Your name').fill('Pat Profile');
  await page.getByRole('button', { name: 'Save profile' }).click();
  await page.getByText('Profile saved.').waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
  expect(await page.getByLabel('Your name').inputValue()).toBe('Pat Profile');
  expect(await page.locator('.lead').textContent()).toContain('Pat Profile');

  // A wrong current password changes nothing; one request, one wrong guess.
  await page.getByLabel('Current password').fill('not my password');
  await page.getByLabel('New password', { exact: true }).fill('brand new password');
  await page.getByLabel('Confirm new password').fill('brand new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toMatch(/password is incorrect/i);
  expectProblem(problems, 'PUT /api/users/me/password → 401');
  // A mistyped confirmation never reaches the server.
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('Confirm new password').fill('brand new passwrod');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('The new password and its confirmation differ').waitFor();

  await page.getByLabel('Confirm new password').fill('brand new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed.').waitFor();
  expect(await page.getByLabel('Current password').inputValue()).toBe('');
  // The page goes on with the fresh token: saving the profile again works.
  await page.getByLabel('Your name').fill('Pat P. Profile');
  await page.getByRole('button', { name: 'Save profile' }).click();
  await page.getByText('Profile saved.').waitFor();
  // The token from before the change is revoked.
  expect((await api('GET', '/api/users/me', { token: user.token })).status).toBe(401);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${ctx.baseUrl}/login`);
  await signIn(page, user.email, PASSWORD);
  await page.getByRole('alert').waitFor();
  expectProblem(problems, 'POST /api/auth/login → 401');
  await signIn(page, user.email, 'brand new password');
  await page.waitForURL(`${ctx.baseUrl}/sites`);
  expect(problems).toEqual([]);
  await context.close();
});

it('deletes an account after the password, and says why the owners cannot', async () => {
  // The instance owner, at a phone's width in the dark.
  const phone = await watchedPage(browser, ctx.baseUrl, { width: 375, height: 800, colorScheme: 'dark' });
  await phone.page.goto(`${ctx.baseUrl}/login?next=%2Faccount`);
  await signIn(phone.page, owner.email, PASSWORD);
  await phone.page.waitForURL(`${ctx.baseUrl}/account`);
  await phone.page.getByLabel('Password to confirm').fill(PASSWORD);
  await phone.page.getByRole('button', { name: 'Delete my account' }).click();
  await phone.page.getByRole('alert').waitFor();
  expect(await phone.page.getByRole('alert').textContent()).toContain(
    'You own this Tidemark server, so your account cannot be deleted',
  );
  expectProblem(phone.problems, 'DELETE /api/users/me → 409');
  expect(await accessibilityViolations(phone.page)).toEqual([]);
  await screenshot(phone.page, 'account-375-dark');
  expect(phone.problems).toEqual([]);
  await phone.context.close();

  // The admin's team has other members (the tests above joined it) and no other owner.
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await page.goto(`${ctx.baseUrl}/login?next=%2Faccount`);
  await signIn(page, admin.email, PASSWORD);
  await page.waitForURL(`${ctx.baseUrl}/account`);
  await page.getByLabel('Password to confirm').fill(PASSWORD);
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('alert').waitFor();
  const refusal = await page.getByRole('alert').textContent();
  expect(refusal).toContain(`Your account cannot be deleted yet: you are the last owner of "${TEAM}"`);
  expect(refusal).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
  expectProblem(problems, 'DELETE /api/users/me → 409');
  await screenshot(page, 'account-last-owner');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${ctx.baseUrl}/login`);

  // Someone who can go: a wrong password first, then the right one.
  const leaver = await registerUser(ctx, 'free', 'leaver');
  await page.goto(`${ctx.baseUrl}/login?next=%2Faccount`);
  await signIn(page, leaver.email, PASSWORD);
  await page.waitForURL(`${ctx.baseUrl}/account`);
  await page.getByLabel('Password to confirm').fill('wrong password');
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toBe('That password is not correct; nothing was deleted.');
  expectProblem(problems, 'DELETE /api/users/me → 401');
  expect((await ctx.pool.query('SELECT 1 FROM users WHERE id = $1', [leaver.id])).rowCount).toBe(1);

  await page.getByLabel('Password to confirm').fill(PASSWORD);
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('heading', { name: 'Your account was deleted' }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'account-deleted');
  expect((await ctx.pool.query('SELECT 1 FROM users WHERE id = $1', [leaver.id])).rowCount).toBe(0);
  expect((await ctx.pool.query('SELECT 1 FROM teams WHERE id = $1', [leaver.teamId])).rowCount).toBe(0);
  // Signed out: the way back is the sign-in page, where the account no longer opens.
  await page.getByRole('link', { name: 'Back to sign in' }).click();
  await page.waitForURL(`${ctx.baseUrl}/login`);
  await signIn(page, leaver.email, PASSWORD);
  await page.getByRole('alert').waitFor();
  expectProblem(problems, 'POST /api/auth/login → 401');
  expect(problems).toEqual([]);
  await context.close();
});

it('says so when the server does not allow sign-up', async () => {
  const closed = await createDashboardContext({ ALLOW_SIGNUP: 'false' });
  try {
    await registerOwnerDirectly(closed);
    const { page, context, problems } = await watchedPage(browser, closed.baseUrl);
    await page.goto(`${closed.baseUrl}/register`);
    await page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('open the invite link you were sent');
    expect(await page.locator('form').count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'register-closed');
    // Sign-in offers no way to an account that cannot be created.
    const setupRead = page.waitForResponse((r) => r.url().endsWith('/api/auth/setup'));
    await page.goto(`${closed.baseUrl}/login`);
    await setupRead;
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  } finally {
    await closed.close();
  }
});

/** With sign-up off the API cannot create the owner; the CLI's way does (the library, not HTTP). */
async function registerOwnerDirectly(target: TestContext): Promise<void> {
  await createUser(
    target.pool,
    { email: 'owner@closed.example', password: PASSWORD },
    { plan: 'free', owner: 'first' },
  );
}
