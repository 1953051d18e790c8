// Site settings in a real browser: the owner sets up goals (event and page), a funnel, an invite and an API key
// through the UI, and each lands on the server (checked through the API and the database); a viewer of the
// team sees the way to the dashboard but no settings they may not change, even at a tab's own address.
import type { Browser, Page } from 'playwright-core';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  signInThroughPage,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: { id: string; team_id: string };

jest.setTimeout(180_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  // pro: room for more than one member, and API keys (free has neither).
  owner = await registerUser(ctx, 'pro', 'owner');
  site = await createWebsite(ctx, owner, 'shop.example.com');
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

const signIn = (page: Page, user: TestUser, next: string) => signInThroughPage(page, ctx.baseUrl, user, next);

/** Removes the one expected failed request from a journey's problems (it is then shown in words). */
function expectProblem(problems: string[], line: string): void {
  const at = problems.indexOf(line);
  expect(at).toBeGreaterThanOrEqual(0);
  problems.splice(at, 1);
}

const settingsUrl = (tab: string) => `/sites/${site.id}/settings/${tab}`;

it('the owner manages goals and a funnel in the UI, and the server has them', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page, owner, settingsUrl('goals'));
  await page.getByText('No goals yet').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);

  // An event goal by its name, then a page goal by a path pattern.
  await page.getByLabel('Event name').fill('Signup');
  await page.getByRole('button', { name: 'Add goal' }).click();
  await page.getByRole('cell', { name: /^Signup/ }).waitFor();
  await page.getByLabel('Goal type').selectOption('page');
  await page.getByLabel('Page path').fill('/thank-you*');
  await page.getByRole('button', { name: 'Add goal' }).click();
  await page.getByRole('cell', { name: /^Visit \/thank-you\*/ }).waitFor();
  const goals = async () =>
    (
      await ctx.pool.query('SELECT name, kind, path, is_active FROM goals WHERE website_id = $1 ORDER BY created_at', [
        site.id,
      ])
    ).rows;
  expect(await goals()).toEqual([
    { name: 'Signup', kind: 'event', path: null, is_active: true },
    { name: 'Visit /thank-you*', kind: 'page', path: '/thank-you*', is_active: true },
  ]);

  // A second goal of the same name is refused (409) and said in words next to the form.
  await page.getByLabel('Goal type').selectOption('event');
  await page.getByLabel('Event name').fill('Signup');
  await page.getByRole('button', { name: 'Add goal' }).click();
  await page.getByRole('alert').filter({ hasText: 'already exists' }).waitFor();
  expectProblem(problems, `POST /api/websites/${site.id}/goals → 409`);

  // Edit: rename the event goal and pause it.
  await page.getByRole('button', { name: 'Edit goal Signup' }).click();
  const edit = page.getByRole('form', { name: 'Edit goal Signup' });
  await edit.getByLabel('Event name').fill('Signed up');
  await edit.getByLabel('Active (counted on the dashboard)').uncheck();
  await edit.getByRole('button', { name: 'Save goal' }).click();
  await page.getByRole('cell', { name: /^Signed up/ }).waitFor();
  await page.getByText('Paused').waitFor();
  expect((await goals())[0]).toEqual({ name: 'Signed up', kind: 'event', path: null, is_active: false });
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-goals');

  // A two-step funnel: a page path, then the event goal.
  await page.getByRole('link', { name: 'Funnels' }).click();
  await page.waitForURL(`${ctx.baseUrl}${settingsUrl('funnels')}`);
  await page.getByText('No funnels yet').waitFor();
  await page.getByRole('button', { name: 'New funnel' }).click();
  await page.getByLabel('Funnel name').fill('Checkout');
  await page.getByLabel('Step 1 page path').fill('/pricing');
  await page.getByLabel('Step 2 type').selectOption('goal');
  await page.getByLabel('Step 2 goal').selectOption({ label: 'Signed up' });
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-funnel-form');
  await page.getByRole('button', { name: 'Create funnel' }).click();
  await page.getByRole('cell', { name: /^Checkout/ }).waitFor();
  const api = client(ctx.baseUrl);
  const listed = await api('GET', `/api/websites/${site.id}/funnels`, { token: owner.token });
  expect(listed.status).toBe(200);
  const signedUp = (await goals())[0];
  expect(signedUp.name).toBe('Signed up');
  expect(listed.body.data.funnels).toHaveLength(1);
  expect(listed.body.data.funnels[0]).toMatchObject({
    name: 'Checkout',
    steps: [
      { kind: 'path', path: '/pricing', goal_id: null },
      { kind: 'event', name: 'Signed up', path: null },
    ],
  });
  // Results are on the dashboard: the funnel links there.
  expect(await page.getByRole('link', { name: 'See results on the dashboard' }).getAttribute('href')).toBe(
    `/sites/${site.id}`,
  );

  // Edit: a third step, then rename.
  await page.getByRole('button', { name: 'Edit funnel Checkout' }).click();
  await page.getByRole('button', { name: 'Add step' }).click();
  await page.getByLabel('Step 3 page path').fill('/welcome');
  await page.getByLabel('Funnel name').fill('Checkout v2');
  await page.getByRole('button', { name: 'Save funnel' }).click();
  await page.getByRole('cell', { name: /^Checkout v2/ }).waitFor();
  const edited = await api('GET', `/api/websites/${site.id}/funnels`, { token: owner.token });
  expect(edited.body.data.funnels[0].steps.map((s: { name: string }) => s.name)).toEqual([
    '/pricing',
    'Signed up',
    '/welcome',
  ]);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-funnels');

  // Delete the page goal, which no funnel uses, after the question.
  await page.getByRole('link', { name: 'Goals' }).click();
  await page.getByRole('button', { name: 'Delete goal Visit /thank-you*' }).click();
  await page.getByText('Its past conversions stop showing').waitFor();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByRole('cell', { name: /^Visit \/thank-you\*/ }).waitFor({ state: 'detached' });
  expect((await goals()).map((g) => g.name)).toEqual(['Signed up']);
  // Deleting the goal a funnel uses names that funnel in the question; cancelling keeps both.
  await page.getByRole('button', { name: 'Delete goal Signed up' }).click();
  await page.getByText('The funnel “Checkout v2” that use it go too.').waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  expect((await goals()).map((g) => g.name)).toEqual(['Signed up']);

  expect(problems).toEqual([]);
  await context.close();
});

it('the owner invites a viewer and copies the one-time link; then creates an API key shown once', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.baseUrl });
  await signIn(page, owner, settingsUrl('members'));
  await page.getByRole('cell', { name: new RegExp(`^${owner.email}`) }).waitFor();
  await page.getByText('No pending invites').waitFor();

  await page.getByLabel('Email').fill('new.viewer@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Create invite link' }).click();
  const link = page.getByLabel('Invite link');
  await link.waitFor();
  const url = await link.inputValue();
  expect(url).toMatch(new RegExp(`^${ctx.baseUrl}/invite/[A-Za-z0-9_-]{43}$`));
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(url);
  await page.getByRole('cell', { name: 'new.viewer@example.com', exact: true }).waitFor();
  // The link is the server's: it previews as a viewer invite to the owner's team.
  const api = client(ctx.baseUrl);
  const token = url.split('/').pop()!;
  const preview = await api('GET', `/api/invites/${token}`);
  expect(preview.status).toBe(200);
  expect(preview.body.data).toMatchObject({ email: 'new.viewer@example.com', role: 'viewer', status: 'pending' });
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-members');

  // Revoking it asks first, then the link stops working.
  await page.getByRole('button', { name: 'Revoke the invite for new.viewer@example.com' }).click();
  await page.getByRole('button', { name: 'Yes, revoke' }).click();
  await page.getByText('No pending invites').waitFor();
  expect((await api('GET', `/api/invites/${token}`)).status).toBe(404);

  // API keys: the plaintext is shown once, works from a script, and is gone after a reload.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByText('No API keys yet').waitFor();
  await page.getByLabel('Key name').fill('Reporting');
  await page.getByRole('button', { name: 'Create API key' }).click();
  const keyField = page.getByLabel('API key', { exact: true });
  await keyField.waitFor();
  const key = await keyField.inputValue();
  expect(key).toMatch(/^tmk_/);
  await page.getByText('this is the only time it is shown').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-api-key-created');
  await page.getByRole('button', { name: 'Copy' }).click();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);

  const external = await api('GET', '/api/external/v1/websites', { apiKey: key });
  expect(external.status).toBe(200);
  expect(external.body.data.websites.map((w: { id: string }) => w.id)).toEqual([site.id]);
  const stored = await ctx.pool.query('SELECT permission, website_id FROM api_keys WHERE name = $1', ['Reporting']);
  expect(stored.rows).toEqual([{ permission: 'site_access', website_id: site.id }]);

  await page.reload();
  await page.getByRole('cell', { name: /^Reporting/ }).waitFor();
  expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
  expect(await page.content()).not.toContain(key);
  await page.getByRole('cell', { name: 'just now' }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-api-keys');

  await page.getByRole('button', { name: 'Revoke API key Reporting' }).click();
  await page.getByText('this cannot be undone').waitFor();
  await page.getByRole('button', { name: 'Yes, revoke' }).click();
  await page.getByText('No API keys yet').waitFor();
  expect((await api('GET', '/api/external/v1/websites', { apiKey: key })).status).toBe(401);

  expect(problems).toEqual([]);
  await context.close();
});

it('a viewer sees the dashboard link and a note, not the settings they may not change', async () => {
  const viewer = await registerUser(ctx, 'free', 'viewer');
  const added = await client(ctx.baseUrl)('POST', `/api/websites/${site.id}/team-members`, {
    token: owner.token,
    body: { email: viewer.email, role: 'viewer' },
  });
  expect(added.status).toBe(201);

  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, { width: 375, colorScheme: 'dark' });
  await signIn(page, viewer, `/sites/${site.id}/settings`);
  await page.getByText('You can view this site, not change its settings').waitFor();
  expect(await page.getByRole('link', { name: 'View dashboard' }).getAttribute('href')).toBe(`/sites/${site.id}`);
  expect(await page.getByRole('navigation', { name: 'Settings' }).count()).toBe(0);
  for (const name of ['Goals', 'Funnels', 'Team', 'API keys', 'General', 'Delete'])
    expect(await page.getByRole('link', { name, exact: true }).count()).toBe(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-viewer-375-dark');

  // A tab's own address shows the same note and asks the server for nothing the viewer may not read.
  for (const tab of ['api-keys', 'members', 'goals']) {
    await page.goto(`${ctx.baseUrl}${settingsUrl(tab)}`);
    await page.getByText('You can view this site, not change its settings').waitFor();
    expect(await page.getByRole('textbox').count()).toBe(0);
  }
  await page.getByRole('link', { name: 'View dashboard' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/${site.id}`);
  expect(problems).toEqual([]);
  await context.close();
});

it('an editor gets the site tabs but not the team or API keys, with a note at their addresses', async () => {
  const editor = await registerUser(ctx, 'free', 'editor');
  const added = await client(ctx.baseUrl)('POST', `/api/websites/${site.id}/team-members`, {
    token: owner.token,
    body: { email: editor.email, role: 'editor' },
  });
  expect(added.status).toBe(201);
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page, editor, settingsUrl('goals'));
  const nav = page.getByRole('navigation', { name: 'Settings' });
  await nav.getByRole('link', { name: 'Goals' }).waitFor();
  expect(await nav.getByRole('link').allTextContents()).toEqual([
    'General',
    'Tracking',
    'Exclusions',
    'Goals',
    'Funnels',
    'Sharing',
  ]);
  await page.getByRole('cell', { name: /^Signed up/ }).waitFor();
  await page.goto(`${ctx.baseUrl}${settingsUrl('api-keys')}`);
  await page.getByText('API keys is for team admins').waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('a free team is told API keys need another plan, with no form that could only fail', async () => {
  const solo = await registerUser(ctx, 'free', 'solo');
  const own = await createWebsite(ctx, solo, 'solo.example.com');
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page, solo, `/sites/${own.id}/settings/api-keys`);
  await page.getByText('API keys need a plan other than free').waitFor();
  expect(await page.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
  await page.getByText('No API keys yet').waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('looks right at 375 px and in the dark theme', async () => {
  for (const [width, colorScheme] of [
    [375, 'light'],
    [375, 'dark'],
    [1280, 'dark'],
  ] as const) {
    const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, { width, colorScheme });
    await signIn(page, owner, settingsUrl('goals'));
    for (const tab of ['goals', 'funnels', 'members', 'api-keys']) {
      if (tab !== 'goals') await page.goto(`${ctx.baseUrl}${settingsUrl(tab)}`);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      await page.waitForFunction(
        () =>
          !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(
            '.state-loading',
          ),
      );
      if (tab === 'funnels') await page.getByRole('button', { name: 'Edit funnel Checkout v2' }).click();
      expect(await accessibilityViolations(page)).toEqual([]);
      // No sideways scrolling on a phone.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await screenshot(page, `settings-${tab}-${width}-${colorScheme}`);
    }
    expect(problems).toEqual([]);
    await context.close();
  }
});
