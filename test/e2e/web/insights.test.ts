// The dashboard's Insights section in a real browser: the website of test/helpers/insightsFixture.ts (two weeks
// ending yesterday), the nightly job run on it, one anomaly turned into an insight; then the feed's cards, its
// type and severity filters, the empty state, a phone and the dark theme.
import type { Browser, Page } from 'playwright-core';
import { insightsJob } from '../../../jobs/insights';
import { insightsFromAnomalies } from '../../../lib/insights/anomalies';
import { addDays, today } from '../../../lib/stats/time';
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
import { insertInsightsFixture } from '../../helpers/insightsFixture';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: string;
let empty: string;

jest.setTimeout(180_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'insights-web');
  site = (await createWebsite(ctx, owner, 'insights-web.example.com')).id;
  empty = (await createWebsite(ctx, owner, 'quiet.example.com')).id;
  const goal = await client(ctx.baseUrl)('POST', `/api/websites/${site}/goals`, {
    token: owner.token,
    body: { name: 'Signup' },
  });
  expect(goal.status).toBe(201);
  await insertInsightsFixture(ctx.clickhouse, site, addDays(today('UTC'), -1));
  await insightsJob(ctx, { websiteId: site });
  const hourAgo = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);
  await ctx.pool.query(
    `INSERT INTO anomalies (website_id, metric_name, expected_value, actual_value, deviation_percentage, severity,
       started_at, last_seen_at, detected_at)
     VALUES ($1, 'visitors', 100, 350, 250, 'critical', $2, $2, $3)`,
    [site, hourAgo, new Date(hourAgo.getTime() + 3_900_000)],
  );
  expect(await insightsFromAnomalies(ctx.pool, site)).toBe(1);
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

const cards = (page: Page) => page.locator('article.insight');
const titles = async (page: Page) => (await cards(page).locator('h3').allTextContents()).sort();

it('lists the insights as cards, filters by type and severity', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site}/insights`);
  await cards(page).first().waitFor();
  const expected = [
    '30 visitors hit errors on /pricing',
    'New country: Germany brought 100 visitors',
    'New page: /promo brought 100 visitors',
    'New source: Newsletter brought 100 visitors',
    'Newsletter brings more visitors but no conversions',
    'Pageviews up 50% week over week',
    'Visitors 250% above normal',
    'Visitors landing on /promo leave at once',
    'Visitors up 100% week over week',
  ];
  const all = await titles(page);
  // The month's forecast is there too, unless yesterday was the month's last day.
  const forecast = all.filter((t) => / should end with about /.test(t));
  expect(all.filter((t) => !forecast.includes(t))).toEqual(expected);
  expect(forecast.length).toBeLessThanOrEqual(1);
  await page.getByText(`${all.length} insights`).waitFor();

  // The anomaly (an hour old) comes first: its severity badge, its numbers, what to do.
  const first = cards(page).first();
  expect(await first.locator('h3').textContent()).toBe('Visitors 250% above normal');
  expect(await first.locator('.insight-badge').textContent()).toBe('critical');
  expect(await first.locator('.insight-type').textContent()).toBe('Anomaly');
  expect(await first.textContent()).toContain('there were 350 visitors against the 100 expected');
  expect(await first.textContent()).toContain('What to do:');
  // Each severity has its own colour (no other stylesheet's badge wins over them).
  const colour = (severity: string) =>
    page.evaluate(`getComputedStyle(document.querySelector('.insight-badge-${severity}')).backgroundColor`);
  const colours = [await colour('critical'), await colour('warning'), await colour('info')];
  expect(new Set(colours).size).toBe(3);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'insights-feed');

  await page.getByRole('tab', { name: 'Recommendations' }).click();
  await page.getByText('3 insights').waitFor();
  expect(await titles(page)).toEqual([
    '30 visitors hit errors on /pricing',
    'Newsletter brings more visitors but no conversions',
    'Visitors landing on /promo leave at once',
  ]);
  expect(new Set(await cards(page).locator('.insight-type').allTextContents())).toEqual(new Set(['Recommendation']));

  await page.getByLabel('Severity').selectOption('critical');
  await page.getByText('1 insight', { exact: true }).waitFor();
  expect(await titles(page)).toEqual(['30 visitors hit errors on /pricing']);
  await screenshot(page, 'insights-filtered');

  await page.getByRole('tab', { name: 'Forecasts' }).click();
  await page.getByText('0 insights').waitFor();
  await page.getByText('No insights match these filters').waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('an empty website says what will appear and when', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${empty}/insights`);
  await page.getByText('No insights yet').waitFor();
  expect(await cards(page).count()).toBe(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'insights-empty');
  expect(problems).toEqual([]);
  await context.close();
});

it('reads well on a phone and in the dark theme', async () => {
  for (const variant of [
    { name: 'mobile', width: 375, height: 800, colorScheme: 'light' as const },
    { name: 'dark', width: 1280, height: 900, colorScheme: 'dark' as const },
  ]) {
    const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, variant);
    await signInThroughPage(page, ctx.baseUrl, owner);
    await page.goto(`${ctx.baseUrl}/sites/${site}/insights`);
    await cards(page).first().waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    const wide = await page.evaluate(`[...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.parentElement.closest('.table-scroll'))
      .map((e) => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))`);
    expect(wide).toEqual([]);
    await screenshot(page, `insights-${variant.name}`);
    expect(problems).toEqual([]);
    await context.close();
  }
});
