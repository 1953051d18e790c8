// The shared dashboard in a browser (issue 24 point 5): the owner turns sharing on with a password in the
// Sharing tab; a fresh browser with no credentials opens the link, is asked for the password, gets a wrong
// one refused and the right one let in, and sees the website's dashboard read-only (no settings or
// annotation links) with its live visitors; turning sharing off makes the link say "not shared".
import type { Browser, Page } from 'playwright-core';
import { recordPresence } from '../../../lib/realtime/presence';
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
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: { id: string };
const PASSWORD = 'lighthouse keeper 7';

jest.setTimeout(180_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'share-e2e');
  site = await createWebsite(ctx, owner, 'harbour.example.com');
  const now = Date.now();
  await recordPresence(ctx.redis, ctx.config.REDIS_PREFIX, [
    { websiteId: site.id, visitorId: 'a1', pathname: '/', countryCode: 'DE', ts: now - 1_000 },
    { websiteId: site.id, visitorId: 'b2', pathname: '/pricing', countryCode: 'FR', ts: now - 2_000 },
  ]);
  // Three visitors over the last days, one of them twice, for the overview's figures.
  await storeRows(
    ctx.clickhouse,
    [1, 2, 2, 3].map((v, i) =>
      eventRow(site.id, {
        ts: new Date(now - (i + 1) * 3_600_000 * 20).toISOString(),
        visitor_id: `00000000-0000-4000-8000-00000000000${v}`,
        session_id: `s${i}`,
      }),
    ),
  );
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

/** Drops one expected failed request from the problems (it must have happened). */
function expected(problems: string[], problem: string) {
  const i = problems.indexOf(problem);
  expect(i).toBeGreaterThanOrEqual(0);
  problems.splice(i, 1);
}

/** Every Stats v2 answer the shared page got. */
function v2Statuses(page: Page): number[] {
  const statuses: number[] = [];
  page.on('response', (res) => {
    if (res.url().endsWith('/api/v2/query')) statuses.push(res.status());
  });
  return statuses;
}

async function enterPassword(page: Page, password: string) {
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'View dashboard' }).click();
}

const signIn = (page: Page) => signInThroughPage(page, ctx.baseUrl, owner);

it('shares a dashboard with a password, and stops sharing it', async () => {
  const admin = await watchedPage(browser, ctx.baseUrl);
  await signIn(admin.page);
  await admin.page.goto(`${ctx.baseUrl}/sites/${site.id}/settings/sharing`);
  const share = admin.page.getByRole('switch', { name: /Share this dashboard/ });
  await share.waitFor();
  expect(await share.isChecked()).toBe(false);
  // The switch follows the server's answer, not the click: wait for what the answer shows.
  await share.click();
  await admin.page.getByText('Shared. Turning it off').waitFor();
  expect(await share.isChecked()).toBe(true);
  await admin.page.getByLabel('Share password').fill(PASSWORD);
  await admin.page.getByRole('button', { name: 'Set password' }).click();
  await admin.page.getByText('The link asks for a password.').waitFor();
  const link = await admin.page.getByRole('textbox', { name: 'Public link' }).inputValue();
  expect(link).toBe(`${ctx.baseUrl}/share/${site.id}`);
  expect(await admin.page.getByRole('textbox', { name: 'Embed on your site' }).inputValue()).toContain(
    `<iframe src="${link}"`,
  );
  await admin.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.baseUrl });
  await admin.page.getByRole('button', { name: 'Copy public link' }).click();
  await admin.page.getByText('Copied.').waitFor();
  expect(await admin.page.evaluate('navigator.clipboard.readText()')).toBe(link);
  expect(await accessibilityViolations(admin.page)).toEqual([]);
  await screenshot(admin.page, 'settings-sharing');

  // A stranger: a fresh context, no cookies, no token.
  const visitor = await watchedPage(browser, ctx.baseUrl);
  const v2 = v2Statuses(visitor.page);
  await visitor.page.goto(link);
  await visitor.page.getByRole('heading', { name: 'Site harbour.example.com' }).waitFor();
  expect(await accessibilityViolations(visitor.page)).toEqual([]);
  await screenshot(visitor.page, 'share-password');
  await enterPassword(visitor.page, 'not the password');
  await visitor.page.getByRole('alert').waitFor();
  expect(await visitor.page.getByRole('alert').textContent()).toMatch(/not right/);
  expected(visitor.problems, `POST /api/share/${site.id}/token → 401`);
  await enterPassword(visitor.page, PASSWORD);
  await visitor.page.getByText('2 visitors online now').waitFor();
  await visitor.page.getByRole('heading', { level: 1, name: 'Site harbour.example.com' }).waitFor();
  await visitor.page.getByText('Powered by Tidemark').waitFor();
  // Read only: nothing leads to settings, annotations or the signed-in app.
  for (const href of ['/settings', '/annotations', '/sites', '/account']) {
    expect(await visitor.page.locator(`a[href*="${href}"]`).count()).toBe(0);
  }
  // The overview's reads all succeed with the share token, and show the site's figures.
  await visitor.page.locator('.kpi[data-metric="visitors"] .kpi-value').waitFor();
  expect(await visitor.page.locator('.kpi[data-metric="visitors"]').getAttribute('data-value')).toBe('3');
  await visitor.page.waitForLoadState('networkidle');
  expect(v2.length).toBeGreaterThan(0);
  expect(v2.filter((s) => s !== 200)).toEqual([]);
  expect(await accessibilityViolations(visitor.page)).toEqual([]);
  await screenshot(visitor.page, 'share-dashboard');
  expect(visitor.problems).toEqual([]);

  // The view state lives in the URL, as on the signed-in dashboard: a bookmarked view opens as it was.
  await visitor.page.goto(`${link}?range=7d`);
  await enterPassword(visitor.page, PASSWORD);
  await visitor.page.getByText('Powered by Tidemark').waitFor();
  expect(new URL(visitor.page.url()).searchParams.get('range')).toBe('7d');
  // Its panels have all answered before the owner stops sharing (later questions would get 401s).
  await visitor.page.locator('.kpi[data-metric="visitors"] .kpi-value').waitFor();
  await visitor.page.waitForLoadState('networkidle');

  // The owner stops sharing: the link now says so (the API's 404 is expected; nothing 5xx).
  await share.click();
  await admin.page.getByText('Turn sharing on to get a public link').waitFor();
  await visitor.page.reload();
  await visitor.page.getByRole('heading', { name: 'This dashboard is not shared' }).waitFor();
  expected(visitor.problems, `GET /api/share/${site.id} → 404`);
  expect(await accessibilityViolations(visitor.page)).toEqual([]);
  await screenshot(visitor.page, 'share-not-shared');
  expect(visitor.problems).toEqual([]);
  expect(admin.problems).toEqual([]);
  await visitor.context.close();
  await admin.context.close();
});

it('fits a phone and the dark theme', async () => {
  const on = await fetch(`${ctx.baseUrl}/api/websites/${site.id}/sharing`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ public_dashboard: true }),
  });
  expect(on.status).toBe(200);
  for (const [name, options] of [
    ['share-dashboard-375', { width: 375, height: 800 }],
    ['share-dashboard-dark', { colorScheme: 'dark' as const }],
  ] as const) {
    const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, options);
    await page.goto(`${ctx.baseUrl}/share/${site.id}`);
    await page.getByLabel('Password').waitFor();
    if (name === 'share-dashboard-375') await screenshot(page, 'share-password-375');
    await enterPassword(page, PASSWORD);
    await page.getByText('Powered by Tidemark').waitFor();
    await page.getByText('2 visitors online now').waitFor();
    await page.waitForLoadState('networkidle');
    // Nothing wider than the screen.
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, name);
    expect(problems).toEqual([]);
    await context.close();
  }
  // The Sharing tab on a phone in the dark.
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, {
    width: 375,
    height: 800,
    colorScheme: 'dark',
  });
  await signIn(page);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/settings/sharing`);
  await page.getByRole('textbox', { name: 'Public link' }).waitFor();
  expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'settings-sharing-375-dark');
  expect(problems).toEqual([]);
  await context.close();
});
