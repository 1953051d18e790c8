// Sites in the dashboard, end to end in Chromium: an empty list that says to add a site, adding one, the
// snippet installed on a page served locally and visited with a real User-Agent (a running worker stores the
// event) turning the live check to "received", the list's 7-day figures (the real visit, then seeded events
// whose numbers are known), general settings with a refused field shown in words, tracking options,
// exclusions added and removed, and deleting the site. The dashboard's own requests never fail.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { registerUser, type TestUser } from '../../helpers/accounts';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  type Watched,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { CHROME, startTestWorker, waitForEvents } from '../../helpers/ingest';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let browser: Browser;
let worker: { stop(): Promise<void> };
let owner: TestUser;
let shop: http.Server | undefined;

jest.setTimeout(360_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  worker = await startTestWorker(ctx);
  owner = await registerUser(ctx, 'free', 'sites');
});

afterAll(async () => {
  await new Promise((resolve) => (shop ? shop.close(resolve) : resolve(undefined)));
  await browser?.close();
  await worker?.stop();
  await ctx?.close();
});

async function signIn(w: Watched): Promise<void> {
  await w.page.goto(`${ctx.baseUrl}/login`);
  await w.page.getByLabel('Email').fill(owner.email);
  await w.page.getByLabel('Password').fill('password-123');
  await w.page.getByRole('button', { name: 'Sign in' }).click();
  await w.page.waitForURL(`${ctx.baseUrl}/sites`);
}

/** The one expected failed request of a step that provokes it, taken off the problems. */
function expectProblem(problems: string[], line: string): void {
  const at = problems.indexOf(line);
  expect(at).toBeGreaterThanOrEqual(0);
  problems.splice(at, 1);
}

async function checked(page: Page, name: string): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, name);
}

/** Requests to a path made while `during` runs. */
async function requestsTo(page: Page, fragment: string, during: () => Promise<void>): Promise<number> {
  let n = 0;
  const count = (req: { url(): string }) => {
    if (req.url().includes(fragment)) n++;
  };
  page.on('request', count);
  await during();
  page.off('request', count);
  return n;
}

/** A shop's page with the snippet, on its own port (another origin than the server). */
async function serveShop(snippet: string): Promise<string> {
  shop = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') return void res.writeHead(204).end();
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(
      `<!doctype html><html lang="en"><head><title>Shop</title>${snippet}</head><body><h1>Shop</h1></body></html>`,
    );
  });
  await new Promise<void>((resolve) => shop!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
}

const DAY = 86_400_000;

/** Waits until the snippet box holds `text` (it is filled once the snippet has loaded). */
async function snippetShows(page: Page, text: string): Promise<void> {
  // A function, not a string (the page's CSP refuses eval); the root tsconfig has no DOM types.
  await page.waitForFunction(
    (t) =>
      (globalThis as unknown as { document: { getElementById(id: string): { value: string } | null } }).document
        .getElementById('snippet')
        ?.value.includes(t) === true,
    text,
  );
}

it('lists sites, adds one, sees its first visit arrive, edits its settings and deletes it', async () => {
  const w = await watchedPage(browser, ctx.baseUrl);
  const { page, context, problems } = w;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.baseUrl });
  await signIn(w);

  // Empty: the list says what to do.
  await page.getByText('No sites yet').waitFor();
  await checked(page, 'sites-empty');
  await page.getByRole('link', { name: 'Add a site' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/new`);

  // The form: the time zone defaults to the browser's; a pasted URL means its domain.
  const browserZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  expect(await page.getByLabel('Time zone').inputValue()).toBe(browserZone);
  await checked(page, 'site-new');
  await page.getByLabel('Domain').fill('not a domain');
  await page.getByRole('button', { name: 'Add site' }).click();
  await page.getByText('Domain must be a domain name such as example.com').waitFor();
  expectProblem(problems, 'POST /api/websites → 400');

  await page.getByLabel('Domain').fill('https://Shop.Tidemark-Test.example/pricing');
  await page.getByLabel('Name', { exact: true }).fill('Test Shop');
  await page.getByRole('button', { name: 'Add site' }).click();
  await page.waitForURL(/\/sites\/new\?site=[0-9a-f-]{36}$/);
  const siteId = new URL(page.url()).searchParams.get('site')!;
  const api = client(ctx.baseUrl);
  const stored = (await api('GET', `/api/websites/${siteId}`, { token: owner.token })).body.data.website;
  expect(stored).toMatchObject({ domain: 'shop.tidemark-test.example', name: 'Test Shop', timezone: browserZone });

  // The snippet, with the option a page on this machine (localhost) needs; Copy puts it on the clipboard.
  const snippetBox = page.getByLabel('Tracking snippet');
  await snippetShows(page, `data-site="${stored.tracking_code}"`);
  await page.getByLabel('Also count visits on localhost').check();
  await snippetShows(page, 'data-allow-localhost');
  const snippet = await snippetBox.inputValue();
  expect(snippet).toBe(
    `<script defer data-site="${stored.tracking_code}" data-allow-localhost src="${ctx.baseUrl}/tracker.js"></script>`,
  );
  await page.getByRole('button', { name: 'Copy snippet' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(snippet);
  await page.getByText('Waiting for the first event…').waitFor();
  await checked(page, 'site-install');

  // Leaving the page stops the check; coming back starts it again.
  const whileAway = await requestsTo(page, '/track/realtime/', async () => {
    await page.getByRole('link', { name: 'All sites' }).click();
    await page.waitForURL(`${ctx.baseUrl}/sites`);
    await page.waitForTimeout(4000);
  });
  expect(whileAway).toBe(0);
  await page.goBack();
  await page.getByText('Waiting for the first event…').waitFor();

  // A visitor opens the shop's page in a real browser.
  const shopUrl = await serveShop(snippet);
  const visitor = await browser.newContext({ userAgent: CHROME });
  const visit = await visitor.newPage();
  const visitErrors: string[] = [];
  visit.on('console', (m) => m.type() === 'error' && visitErrors.push(m.text()));
  visit.on('response', (r) => r.status() >= 400 && visitErrors.push(`${r.url()} → ${r.status()}`));
  await visit.goto(`${shopUrl}/pricing`);
  await page.getByText('Received —').waitFor({ timeout: 20_000 });
  await visitor.close();
  expect(visitErrors).toEqual([]);
  await checked(page, 'site-install-received');
  // Received: the check has stopped.
  expect(await requestsTo(page, '/track/realtime/', () => page.waitForTimeout(4000))).toBe(0);

  // The worker stores the visit; the list shows it in the site's 7 days.
  expect(await waitForEvents(ctx, 1, `website_id = '${siteId}' AND type = 'pageview'`)).toBe(1);
  expect(await page.getByRole('link', { name: 'open the dashboard' }).getAttribute('href')).toBe(`/sites/${siteId}`);
  await page.goto(`${ctx.baseUrl}/sites`);
  const card = page.getByRole('listitem').filter({ hasText: 'Test Shop' });
  await card.getByTestId('week-total').waitFor();
  expect(await card.getByTestId('week-total').textContent()).toBe('1');

  // Seeded visits with known numbers: V3 comes back on a second day, so the week's unique visitors (4, with
  // the real visit) are fewer than the days' sum (5).
  const now = Date.now();
  const row = (visitor: string, daysAgo: number) =>
    eventRow(siteId, {
      visitor_id: visitor,
      session_id: `${visitor}-${daysAgo}`,
      hostname: 'shop.tidemark-test.example',
      ts: new Date(now - daysAgo * DAY).toISOString(),
    });
  await storeRows(ctx.clickhouse, [row('V1', 2), row('V2', 2), row('V3', 4), row('V3', 1)]);
  await page.reload();
  await card.getByTestId('week-total').waitFor();
  expect(await card.getByTestId('week-total').textContent()).toBe('4');
  const spark = card.getByRole('img', { name: /^Visitors per day/ });
  const perDay = (await spark.getAttribute('aria-label'))!.replace(/^Visitors per day: /, '').split(', ');
  expect(perDay).toHaveLength(7);
  expect(perDay.map((d) => Number(d.split(': ')[1]))).toEqual([0, 0, 1, 0, 2, 1, 1]);
  await checked(page, 'sites-list');

  // General settings: a refused field is named in words; saved values are there after a reload.
  await card.getByRole('link', { name: 'Settings of Test Shop' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/${siteId}/settings`);
  await page.getByLabel('Name', { exact: true }).waitFor();
  await checked(page, 'settings-general');
  await page.getByLabel('Name', { exact: true }).fill('Test Shop (renamed)');
  await page.getByLabel('Primary colour', { exact: true }).fill('blue');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Primary colour must be a hex colour such as #1a2b3c').waitFor();
  expectProblem(problems, `PUT /api/websites/${siteId}/general → 400`);
  await page.getByLabel('Primary colour', { exact: true }).fill('#1a7f5a');
  await page.getByLabel('Allowed domains').fill('bad domain!');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Allowed domains: “bad” must be a domain name such as example.com').waitFor();
  expectProblem(problems, `PUT /api/websites/${siteId}/general → 400`);
  await page.getByLabel('Allowed domains').fill('shop.tidemark-test.example\nwww.tidemark-test.example');
  await page.getByLabel('Time zone').selectOption('Europe/Berlin');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved.', { exact: true }).waitFor();
  await page.reload();
  await page.getByLabel('Name', { exact: true }).waitFor();
  expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Test Shop (renamed)');
  expect(await page.getByLabel('Primary colour', { exact: true }).inputValue()).toBe('#1a7f5a');
  expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
  expect(await page.getByLabel('Allowed domains').inputValue()).toBe(
    'shop.tidemark-test.example\nwww.tidemark-test.example',
  );

  // Tracking options: two switched from what they were, the others kept.
  const website = async () => (await api('GET', `/api/websites/${siteId}`, { token: owner.token })).body.data.website;
  const before = (await website()).settings;
  await page.getByRole('link', { name: 'Tracking' }).click();
  await page.getByLabel('Heatmaps').setChecked(!before.heatmaps);
  await page.getByLabel('Outbound link clicks').setChecked(!before.track_outbound_links);
  await page.getByRole('button', { name: 'Save tracking options' }).click();
  await page.getByText(/^Saved\. Pages opened/).waitFor();
  await checked(page, 'settings-tracking');
  expect((await website()).settings).toEqual({
    ...before,
    heatmaps: !before.heatmaps,
    track_outbound_links: !before.track_outbound_links,
    debug: false,
  });
  await page.reload();
  expect(await page.getByLabel('Heatmaps').isChecked()).toBe(!before.heatmaps);

  // Exclusions: add an address range and a path, refuse a bad address in words, remove the range.
  await page.getByRole('link', { name: 'Exclusions' }).click();
  await page.getByText('No addresses excluded').waitFor();
  await page.getByLabel('IP address or CIDR range').fill('nope');
  await page.getByRole('button', { name: 'Add address' }).click();
  await page.getByText('This must be an IPv4 or IPv6 address or CIDR range.').waitFor();
  expectProblem(problems, `POST /api/websites/${siteId}/exclusions/ip → 400`);
  await page.getByLabel('IP address or CIDR range').fill('203.0.113.0/24');
  await page.getByLabel('Note (optional)').first().fill('Office');
  await page.getByRole('button', { name: 'Add address' }).click();
  await page.getByRole('cell', { name: '203.0.113.0/24', exact: true }).waitFor();
  await page.getByRole('cell', { name: 'Office', exact: true }).waitFor();
  await page.getByLabel('Path pattern').fill('/admin/*');
  await page.getByRole('button', { name: 'Add path' }).click();
  await page.getByRole('cell', { name: '/admin/*', exact: true }).waitFor();
  await checked(page, 'settings-exclusions');
  await page.getByRole('button', { name: 'Remove 203.0.113.0/24' }).click();
  await page.getByText('No addresses excluded').waitFor();
  const exclusions = (await api('GET', `/api/websites/${siteId}/exclusions`, { token: owner.token })).body.data;
  expect(exclusions.ip_exclusions).toEqual([]);
  expect(exclusions.path_exclusions.map((e: { path_pattern: string }) => e.path_pattern)).toEqual(['/admin/*']);

  // The same pages at a phone's width and in the dark theme.
  for (const [name, options] of [
    ['375', { width: 375, height: 800 }],
    ['dark', { colorScheme: 'dark' as const }],
  ] as const) {
    const other = await watchedPage(browser, ctx.baseUrl, options);
    await signIn(other);
    await other.page.getByTestId('week-total').waitFor();
    await checked(other.page, `sites-list-${name}`);
    await other.page.goto(`${ctx.baseUrl}/sites/new?site=${siteId}`);
    await other.page.getByText('Received —').waitFor();
    await checked(other.page, `site-install-${name}`);
    await other.page.goto(`${ctx.baseUrl}/sites/new`);
    await other.page.getByLabel('Domain').waitFor();
    await checked(other.page, `site-new-${name}`);
    for (const tab of ['general', 'tracking', 'exclusions', 'danger']) {
      await other.page.goto(`${ctx.baseUrl}/sites/${siteId}/settings/${tab}`);
      await other.page.locator('main form, main .settings-form').first().waitFor();
      await checked(other.page, `settings-${tab}-${name}`);
    }
    expect(other.problems).toEqual([]);
    await other.context.close();
  }

  // Delete: only once the domain is typed.
  await page.getByRole('link', { name: 'Delete' }).click();
  const remove = page.getByRole('button', { name: 'Delete site and its data' });
  expect(await remove.isDisabled()).toBe(true);
  await page.getByLabel('Type shop.tidemark-test.example to confirm').fill('shop.example');
  expect(await remove.isDisabled()).toBe(true);
  await checked(page, 'settings-danger');
  await page.getByLabel('Type shop.tidemark-test.example to confirm').fill('shop.tidemark-test.example');
  await remove.click();
  await page.waitForURL(`${ctx.baseUrl}/sites`);
  await page.getByText('No sites yet').waitFor();
  expect((await api('GET', `/api/websites/${siteId}`, { token: owner.token })).status).toBe(404);

  expect(problems).toEqual([]);
  await context.close();
});
