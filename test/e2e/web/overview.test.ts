// The site dashboard's overview in Chromium: a site with stored events over several weeks (countries, pages,
// sources, devices); the KPI cards show what Stats v2 answers for the same question (asked here from Node);
// the chart draws its series; a country row filters everything through a chip in the URL and removing the
// chip restores the numbers; the range and the comparison change the numbers and survive a reload; an
// annotation made through the API shows as a marker. No failed request, no console error, no serious axe
// violation; screenshots at desktop width, at 375 px and in the dark theme.
import type { Browser, Page } from 'playwright-core';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
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
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: { id: string };

jest.setTimeout(180_000);

const DAY = 86_400_000;
const KPIS = ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration'] as const;
type Kpis = Record<(typeof KPIS)[number], number>;

/** Noon UTC `days` ago (the site's zone is UTC), plus some minutes. */
const at = (days: number, minutes = 0) =>
  new Date(Math.floor(Date.now() / DAY) * DAY - days * DAY + 12 * 3_600_000 + minutes * 60_000).toISOString();

/** 30 visitors over the last 25 days: three countries, three pages, three sources, two devices. */
async function seed(websiteId: string) {
  const days = [1, 2, 3, 4, 5, 6, 10, 12, 20, 25];
  const countries = ['DE', 'US', 'FR'];
  const sources = [
    { source_name: 'Google', referrer_domain: 'google.com' },
    { source_name: 'Direct / None', referrer_domain: '' },
    { source_name: 'Twitter', referrer_domain: 't.co' },
  ];
  const devices = [
    { device_type: 'desktop', browser: 'Chrome', os: 'Linux' },
    { device_type: 'mobile', browser: 'Safari', os: 'iOS' },
  ];
  const pages = ['/', '/pricing', '/blog'];
  const rows = [];
  for (let i = 0; i < 30; i++) {
    const visit = {
      visitor_id: `v${i}`,
      session_id: `s${i}`,
      country_code: countries[i % 3],
      ...sources[Math.floor(i / 3) % 3],
      ...devices[i % 2],
    };
    // 1 to 3 pageviews a visit, 2 minutes apart: some bounce, some stay.
    const views = (i % 3) + 1;
    for (let v = 0; v < views; v++)
      rows.push(eventRow(websiteId, { ...visit, pathname: pages[(i + v) % 3], ts: at(days[i % 10], i + v * 2) }));
  }
  await storeRows(ctx.clickhouse, rows);
}

async function v2(body: Record<string, unknown>) {
  const res = await client(ctx.baseUrl)('POST', '/api/v2/query', {
    token: owner.token,
    body: { site_id: site.id, ...body },
  });
  if (res.status !== 200) throw new Error(`v2 ${res.status} ${res.text}`);
  return res.body as { results: { metrics: number[] }[]; query: { date_range: [string, string] } };
}

async function expectedKpis(dateRange: unknown, filters: unknown[] = []): Promise<Kpis> {
  const res = await v2({ metrics: [...KPIS], date_range: dateRange, filters });
  return Object.fromEntries(KPIS.map((m, i) => [m, res.results[0].metrics[i]])) as Kpis;
}

/** The KPI cards' numbers as the page holds them, once the figures have loaded. */
async function shownKpis(page: Page): Promise<Kpis> {
  await page.locator('.kpi[data-value] .kpi-value').first().waitFor();
  const out: Record<string, number> = {};
  for (const m of KPIS) out[m] = Number(await page.locator(`.kpi[data-metric="${m}"]`).getAttribute('data-value'));
  return out as Kpis;
}

/**
 * The page's document inside functions run in the page (the Node project has no DOM types; a string would be
 * eval'd, which the page's CSP refuses); cast inline in each, as those functions are sent as their source.
 */
interface PageDocument {
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
}
type InPage = { document: PageDocument };

/** Waits until the cards show `expected` (a new query replaces the old figures when it answers). */
async function waitForKpis(page: Page, expected: Kpis) {
  await page.waitForFunction(
    (want) =>
      Object.entries(want).every(
        ([m, v]) =>
          Number(
            (globalThis as unknown as InPage).document
              .querySelector(`.kpi[data-metric="${m}"]`)
              ?.getAttribute('data-value'),
          ) === v,
      ) && !(globalThis as unknown as InPage).document.querySelector('.overview [aria-busy="true"]'),
    expected,
  );
  expect(await shownKpis(page)).toEqual(expected);
}

async function signIn(w: Watched) {
  await w.page.goto(`${ctx.baseUrl}/login`);
  await w.page.getByLabel('Email').fill(owner.email);
  await w.page.getByLabel('Password').fill('password-123');
  await w.page.getByRole('button', { name: 'Sign in' }).click();
  await w.page.waitForURL(/\/sites/);
}

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'owner');
  site = await createWebsite(ctx, owner, 'overview.example');
  await seed(site.id);
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

it('shows the API’s numbers, filters by a row, changes range, compares and keeps it all in the URL', async () => {
  const w = await watchedPage(browser, ctx.baseUrl);
  const { page } = w;
  await signIn(w);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}`);

  // The default range is the last 30 days.
  const thirty = await expectedKpis('30d');
  expect(thirty.visitors).toBe(30);
  await waitForKpis(page, thirty);
  expect(await page.locator('.kpi[data-metric="visitors"] .kpi-value').textContent()).toBe('30');

  // The chart: a uPlot canvas with the time and visitors series.
  await page.locator('.chart canvas').first().waitFor();
  expect(await page.locator('.chart .u-legend .u-series').count()).toBe(2);
  expect(await page.locator('.chart').getAttribute('data-series')).toBe('1');

  // A country row filters the whole dashboard: a chip, the URL, the numbers.
  const locations = page.getByRole('region', { name: 'Locations' });
  await locations.getByRole('button', { name: 'Germany' }).click();
  await page.getByRole('list', { name: 'Filters' }).getByText('Country is Germany').waitFor();
  expect(new URL(page.url()).searchParams.getAll('f')).toEqual(['visit:country,is,DE']);
  const germany = await expectedKpis('30d', [['is', 'visit:country', ['DE']]]);
  expect(germany.visitors).toBeLessThan(thirty.visitors);
  await waitForKpis(page, germany);
  // Every panel answers for the filtered visits: only Germany is left among the countries.
  await locations.locator('tbody tr').first().waitFor();
  expect(await locations.locator('tbody tr').count()).toBe(1);

  await page.getByRole('button', { name: 'Remove filter Country is Germany' }).click();
  await waitForKpis(page, thirty);
  expect(new URL(page.url()).searchParams.getAll('f')).toEqual([]);

  // Another range: the URL and the numbers follow.
  await page.getByLabel('Range').selectOption('7d');
  await page.waitForURL(/range=7d/);
  const week = await v2({ metrics: [...KPIS], date_range: '7d' });
  const weekKpis = Object.fromEntries(KPIS.map((m, i) => [m, week.results[0].metrics[i]])) as Kpis;
  expect(weekKpis.visitors).toBeLessThan(thirty.visitors);
  await waitForKpis(page, weekKpis);

  // Compare: the 7 days before, asked here as dates worked out from the range v2 resolved.
  await page.getByRole('switch', { name: 'Compare with previous period' }).check();
  await page.waitForURL(/compare=1/);
  const first = Date.parse(`${week.query.date_range[0].slice(0, 10)}T00:00:00Z`);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const before = await expectedKpis([day(first - 7 * DAY), day(first - DAY)]);
  expect(before.visitors).toBeGreaterThan(0);
  const visitorsChange = page.locator('.kpi[data-metric="visitors"] .kpi-change');
  await visitorsChange.waitFor();
  const want = (((weekKpis.visitors - before.visitors) / before.visitors) * 100).toFixed(1);
  expect(await visitorsChange.getAttribute('data-change')).toBe(want);
  expect(await visitorsChange.textContent()).toContain(`${Math.abs(Number(want)).toFixed(0)}%`);
  expect(await page.locator('.chart .u-legend .u-series').count()).toBe(3);

  // A reload reads the same view from the URL.
  await page.reload();
  await waitForKpis(page, weekKpis);
  expect(await page.getByLabel('Range').inputValue()).toBe('7d');
  expect(await page.getByRole('switch', { name: 'Compare with previous period' }).isChecked()).toBe(true);
  expect(await visitorsChange.getAttribute('data-change')).toBe(want);

  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'overview-desktop');
  expect(w.problems).toEqual([]);
  await w.context.close();
});

it('asks each first question once on a fresh load (the early asks and the page’s own never both go)', async () => {
  const w = await watchedPage(browser, ctx.baseUrl);
  await signIn(w);
  // A new tab of the signed-in browser: the app starts from the session cookie alone.
  const page = await w.context.newPage();
  const asked: string[] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.pathname === `/api/websites/${site.id}`) asked.push('website');
    if (url.pathname !== '/api/v2/query') return;
    const body = req.postDataJSON() as { metrics: string[]; dimensions?: string[] };
    const dims = body.dimensions ?? [];
    const kind =
      dims.length === 0 && body.metrics.join() === KPIS.join()
        ? 'kpis'
        : dims[0]?.startsWith('time:')
          ? 'series'
          : 'panel';
    asked.push(kind);
  });
  await page.goto(`${ctx.baseUrl}/sites/${site.id}`);
  await waitForKpis(page, await expectedKpis('30d'));
  await page.locator('.chart canvas').first().waitFor();
  const count = (kind: string) => asked.filter((a) => a === kind).length;
  expect([count('kpis'), count('series'), count('website')]).toEqual([1, 1, 1]);
  expect(w.problems).toEqual([]);
  await w.context.close();
});

it('shows an annotation made through the API as a marker on the chart', async () => {
  const call = client(ctx.baseUrl);
  const login = await call('POST', '/api/auth/login', { body: { email: owner.email, password: 'password-123' } });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('tidemark_session='))
    ?.split(';')[0];
  expect(cookie).toBeDefined();
  const created = await call('POST', '/api/annotations', {
    headers: { cookie: cookie!, origin: ctx.baseUrl },
    body: { websiteId: site.id, type: 'deploy', message: 'v2.0 to production', occurredAt: at(3) },
  });
  expect(created.status).toBe(201);

  const w = await watchedPage(browser, ctx.baseUrl);
  await signIn(w);
  await w.page.goto(`${ctx.baseUrl}/sites/${site.id}?range=7d`);
  const marker = w.page.locator('.chart-marker');
  await marker.waitFor();
  expect(await marker.count()).toBe(1);
  expect(await marker.getAttribute('title')).toContain('deploy: v2.0 to production');
  // Weeks: the chart regroups (30 days touch 5 or 6 Monday-started weeks), the marker moves with it.
  await w.page.getByLabel('Range').selectOption('30d');
  await w.page.getByRole('button', { name: 'Weeks' }).click();
  await w.page.waitForURL(/interval=week/);
  await w.page.waitForFunction(() =>
    ['5', '6'].includes(
      (globalThis as unknown as InPage).document.querySelector('.chart')?.getAttribute('data-points') ?? '',
    ),
  );
  await marker.waitFor();

  // A custom range: two dates, in the URL, answered as v2 answers those dates.
  const day = (n: number) => at(n).slice(0, 10);
  await w.page.getByLabel('Range').selectOption('custom');
  await w.page.getByLabel('From', { exact: true }).fill(day(12));
  await w.page.getByLabel('To', { exact: true }).fill(day(4));
  await w.page.waitForURL((url) => url.searchParams.get('from') === day(12) && url.searchParams.get('to') === day(4));
  await waitForKpis(w.page, await expectedKpis([day(12), day(4)]));

  // The last 24 hours by the hour, compared with the 24 hours before (instants, not dates).
  await w.page.getByLabel('Range').selectOption('24h');
  await w.page.getByRole('switch', { name: 'Compare with previous period' }).check();
  await w.page.waitForURL(/range=24h&compare=1/);
  await w.page.locator('.chart[data-series="2"]').waitFor();
  expect(Number(await w.page.locator('.chart').getAttribute('data-points'))).toBeGreaterThanOrEqual(24);

  // Out of the range, out of the chart.
  await w.page.getByLabel('Range').selectOption('today');
  await w.page.waitForURL(/range=today/);
  await w.page.locator('.chart canvas').first().waitFor();
  await w.page.waitForFunction(
    () => !(globalThis as unknown as InPage).document.querySelector('.overview [aria-busy="true"]'),
  );
  expect(await marker.count()).toBe(0);
  expect(w.problems).toEqual([]);
  await w.context.close();
});

it('fits a phone’s width and the dark theme', async () => {
  for (const [name, options] of [
    ['overview-375', { width: 375, height: 800 }],
    ['overview-dark', { colorScheme: 'dark' as const }],
    ['overview-375-dark', { width: 375, height: 800, colorScheme: 'dark' as const }],
  ] as const) {
    const w = await watchedPage(browser, ctx.baseUrl, options);
    await signIn(w);
    await w.page.goto(`${ctx.baseUrl}/sites/${site.id}?range=30d&compare=1`);
    await waitForKpis(w.page, await expectedKpis('30d'));
    await w.page.locator('.chart canvas').first().waitFor();
    await w.page.getByRole('region', { name: 'Devices' }).locator('tbody tr').first().waitFor();
    // Nothing wider than the screen.
    expect(await w.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      options.width ?? 1280,
    );
    expect(await accessibilityViolations(w.page)).toEqual([]);
    await screenshot(w.page, name);
    expect(w.problems).toEqual([]);
    await w.context.close();
  }
});

it('says what to do when a site has no data yet', async () => {
  const empty = await createWebsite(ctx, owner, 'empty.example');
  const w = await watchedPage(browser, ctx.baseUrl);
  await signIn(w);
  await w.page.goto(`${ctx.baseUrl}/sites/${empty.id}`);
  await w.page.getByText('No visits in this range yet').waitFor();
  const link = w.page.getByRole('link', { name: 'see the snippet and install it' });
  expect(await link.getAttribute('href')).toBe(`/sites/${empty.id}/settings/tracking`);
  await w.page.getByText('No countries in this range').waitFor();
  expect(await w.page.locator('.kpi[data-metric="visitors"] .kpi-value').textContent()).toBe('0');
  expect(await accessibilityViolations(w.page)).toEqual([]);
  await screenshot(w.page, 'overview-empty');
  expect(w.problems).toEqual([]);
  await w.context.close();
});
