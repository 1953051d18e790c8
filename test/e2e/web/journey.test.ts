// The whole first day in one browser journey (issue 24's test): the owner's first run, adding a site, the
// snippet installed on a page served locally and visited by a real browser with a real User-Agent, the visit
// live in realtime and then in the dashboard's numbers, a page goal and a funnel configured in the settings
// and shown on the dashboard, filtering by a row, another range and the comparison. The dashboard's own
// requests never fail along the way.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { CHROME, startTestWorker, waitForEvents } from '../../helpers/ingest';

let ctx: TestContext;
let browser: Browser;
let worker: { stop(): Promise<void> };
let shop: http.Server | undefined;

jest.setTimeout(300_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  worker = await startTestWorker(ctx);
});

afterAll(async () => {
  await new Promise((resolve) => (shop ? shop.close(resolve) : resolve(undefined)));
  await browser?.close();
  await worker?.stop();
  await ctx?.close();
});

/** Every path of the shop is a page with the snippet (another origin than the server). */
async function serveShop(snippet: string): Promise<string> {
  shop = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') return void res.writeHead(204).end();
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><html lang="en"><head><title>Shop</title>${snippet}</head><body>
<h1>Shop</h1><a id="next" href="/thanks">Buy</a></body></html>`);
  });
  await new Promise<void>((resolve) => shop!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
}

const kpi = (page: Page, metric: string) => page.locator(`.kpi[data-metric="${metric}"]`).getAttribute('data-value');

async function look(page: Page, name: string): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, name);
}

it('goes from an empty instance to a filtered, compared dashboard of a real visit', async () => {
  const { page, problems } = await watchedPage(browser, ctx.baseUrl);

  // First run: the owner account, then straight to adding a site.
  await page.goto(`${ctx.baseUrl}/`);
  await page.waitForURL(`${ctx.baseUrl}/setup`);
  await page.getByLabel('Email').fill('owner@shop.example');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Create owner account' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/new`);
  await page.getByLabel('Domain').fill('shop.example');
  await page.getByLabel('Name', { exact: true }).fill('The Shop');
  await page.getByRole('button', { name: 'Add site' }).click();
  await page.waitForURL(/\/sites\/new\?site=[0-9a-f-]{36}$/);
  const siteId = new URL(page.url()).searchParams.get('site')!;

  // The snippet goes on the shop's pages; a visitor opens two of them.
  await page.getByLabel('Also count visits on localhost').check();
  await page.getByLabel('Tracking snippet').waitFor();
  await page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { getElementById(id: string): { value: string } | null } }).document
        .getElementById('snippet')
        ?.value.includes('data-allow-localhost') ?? false,
  );
  const snippet = await page.getByLabel('Tracking snippet').inputValue();
  const shopUrl = await serveShop(snippet);
  const visitor = await browser.newContext({ userAgent: CHROME });
  const visit = await visitor.newPage();
  await visit.goto(`${shopUrl}/pricing`);
  await page.getByText('Received —').waitFor({ timeout: 30_000 });
  await visit.click('#next');
  await visit.waitForURL(`${shopUrl}/thanks`);

  // Live: the visitor is on the site now.
  await page.goto(`${ctx.baseUrl}/sites/${siteId}/realtime`);
  await page.getByTestId('live-visitors').waitFor();
  await page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document
        .querySelector('[data-testid="live-visitors"]')
        ?.textContent?.trim() === '1',
    undefined,
    { timeout: 20_000 },
  );
  await look(page, 'journey-realtime');
  await visitor.close();

  // Stored by the worker: the dashboard counts one visitor and two pageviews.
  expect(await waitForEvents(ctx, 2, `website_id = '${siteId}' AND type = 'pageview'`)).toBe(2);

  // A page goal and a funnel, configured in the settings.
  await page.goto(`${ctx.baseUrl}/sites/${siteId}/settings/goals`);
  await page.getByLabel('Goal type').selectOption('page');
  await page.getByLabel('Page path').fill('/thanks');
  await page.getByRole('button', { name: 'Add goal' }).click();
  await page.getByRole('cell', { name: /^Visit \/thanks/ }).waitFor();
  await page.getByRole('link', { name: 'Funnels' }).click();
  await page.getByRole('button', { name: 'New funnel' }).click();
  await page.getByLabel('Funnel name').fill('Purchase');
  await page.getByLabel('Step 1 page path').fill('/pricing');
  await page.getByLabel('Step 2 page path').fill('/thanks');
  await page.getByRole('button', { name: 'Create funnel' }).click();
  await page.getByRole('cell', { name: /^Purchase/ }).waitFor();

  await page.goto(`${ctx.baseUrl}/sites/${siteId}`);
  await page.locator('.kpi[data-metric="pageviews"][data-value]').waitFor();
  expect(await kpi(page, 'visitors')).toBe('1');
  expect(await kpi(page, 'pageviews')).toBe('2');
  const goals = page.getByRole('region', { name: 'Goals' });
  await goals.getByText('Visit /thanks').waitFor();
  const funnels = page.getByRole('region', { name: 'Funnel: Purchase' });
  await funnels.getByText('1 of 1 visitor completed the funnel').waitFor();
  await look(page, 'journey-dashboard');

  // A row filters the whole dashboard, in the URL.
  await page.getByRole('region', { name: 'Pages' }).getByRole('button', { name: '/pricing', exact: true }).click();
  await page.waitForURL((url) => url.searchParams.getAll('f').length === 1);
  expect(new URL(page.url()).searchParams.get('f')).toBe('event:page,is,/pricing');
  await page.getByRole('button', { name: /^Remove filter/ }).waitFor();
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string } | null } }
      ).document
        .querySelector('.kpi[data-metric="pageviews"]')
        ?.getAttribute('data-value') === '1',
  );

  // Another range, then the comparison with the period before.
  await page.getByLabel('Range').selectOption('7d');
  await page.waitForURL(/range=7d/);
  await page.getByRole('switch', { name: 'Compare with previous period' }).check();
  await page.waitForURL(/compare=1/);
  await page.locator('.kpi-change').first().waitFor();
  expect(await kpi(page, 'visitors')).toBe('1');
  await look(page, 'journey-filtered-compared');

  expect(problems).toEqual([]);
});
