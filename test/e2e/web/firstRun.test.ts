// The owner's first run: an empty instance's dashboard asks for the owner account, creates it, and from then
// on the same address asks returning people to sign in; a reload keeps the session (cookie → JWT).
import type { Browser } from 'playwright-core';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';

let ctx: TestContext;
let browser: Browser;

jest.setTimeout(90_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

it('creates the owner on first run, then signs in and stays signed in', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await page.goto(`${ctx.baseUrl}/`);
  await page.waitForURL(`${ctx.baseUrl}/setup`);
  await page.getByRole('heading', { name: 'Welcome to Tidemark' }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'first-run');

  await page.getByLabel('Your name').fill('Olivia Owner');
  await page.getByLabel('Email').fill('owner@example.com');
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create owner account' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/new`);
  const { rows } = await ctx.pool.query('SELECT u.email FROM instance i JOIN users u ON u.id = i.owner_user_id');
  expect(rows).toEqual([{ email: 'owner@example.com' }]);

  // A reload swaps the session cookie for a new JWT: still signed in.
  await page.reload();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${ctx.baseUrl}/login`);
  // Set-up is done: it now sends people to sign in.
  await page.goto(`${ctx.baseUrl}/setup`);
  await page.waitForURL(`${ctx.baseUrl}/login`);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'login');

  await page.getByLabel('Email').fill('owner@example.com');
  await page.getByLabel('Password').fill('wrong password!');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toMatch(/password/i);
  problems.splice(problems.indexOf('POST /api/auth/login → 401'), 1);

  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites`);
  expect(problems).toEqual([]);
  await context.close();
});

it('serves the app with a strict policy, hashed assets cached for a year and index.html never cached', async () => {
  const res = await fetch(`${ctx.baseUrl}/login`);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-cache');
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  const html = await res.text();
  const script = /src="(\/assets\/main\.[A-Z0-9]+\.js)"/.exec(html)?.[1];
  expect(script).toBeDefined();
  const asset = await fetch(`${ctx.baseUrl}${script}`, { headers: { 'accept-encoding': 'gzip' } });
  expect(asset.status).toBe(200);
  expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect(asset.headers.get('content-encoding')).toBe('gzip');
  // Paths outside the app stay the API's JSON 404.
  const other = await fetch(`${ctx.baseUrl}/nothing-here`);
  expect(other.status).toBe(404);
  expect(await other.json()).toMatchObject({ success: false });
});

it('names the chunks of the page a path opens, for the browser to fetch beside the entry', async () => {
  const preloads = async (p: string) => {
    const html = await (await fetch(`${ctx.baseUrl}${p}`)).text();
    return [...html.matchAll(/rel="modulepreload" href="\/assets\/([^"]+)"/g)].map((m) => m[1]);
  };
  const page = (name: string) => (files: string[]) => files.filter((f) => f.startsWith(`${name}.`));
  const site = '/sites/00000000-0000-4000-8000-000000000000';
  const entry = await preloads('/');
  expect(entry.length).toBeGreaterThan(0);
  // The dashboard's overview: the dashboard and overview chunks; a section: that section's instead.
  const overview = await preloads(site);
  expect([page('dashboard')(overview).length, page('overview')(overview).length]).toEqual([1, 1]);
  const realtime = await preloads(`${site}/realtime`);
  expect([page('overview')(realtime).length, page('realtime')(realtime).length]).toEqual([0, 1]);
  expect(page('login')(await preloads('/login'))).toHaveLength(1);
  expect(page('settings')(await preloads(`${site}/settings/goals`))).toHaveLength(1);
  // Every page keeps the entry's own chunks, and nothing is named twice.
  for (const files of [overview, realtime]) {
    expect(files).toEqual(expect.arrayContaining(entry));
    expect(new Set(files).size).toBe(files.length);
  }
  // An unknown section adds only the dashboard's chunks.
  expect(page('dashboard')(await preloads(`${site}/no-such-section`))).toHaveLength(1);
});
