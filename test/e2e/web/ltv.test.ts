// The dashboard's lifetime-value section in a real browser: purchases stored, the nightly job run, then the
// cohort table, its curve, the granularity switch and the empty states. Dates are placed relative to today so
// that the default range (90 days) always covers them: cohorts in the month two before yesterday's (M0) and
// the one before (M1), as of yesterday.
import type { Browser } from 'playwright-core';
import { ltvJob } from '../../../jobs/ltv';
import { setRate } from '../../../lib/ltv/rates';
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
let empty: { id: string };

jest.setTimeout(180_000);

const yesterday = new Date(Date.now() - 86_400_000);
/** An instant on day `day` of the month `back` months before yesterday's, at noon UTC. */
const at = (back: number, day: number) =>
  new Date(Date.UTC(yesterday.getUTCFullYear(), yesterday.getUTCMonth() - back, day, 12)).toISOString();
const monthStart = (back: number) => at(back, 1).slice(0, 10);

function purchase(ts: string, visitor: string, amount: number, currency = 'USD') {
  return eventRow(site.id, {
    ts,
    type: 'purchase',
    pathname: '',
    visitor_id: visitor,
    revenue: amount,
    currency,
    props: JSON.stringify({ payment_provider: 'server', status: 'succeeded' }),
  });
}

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'ltv-web');
  site = await createWebsite(ctx, owner, 'ltv.example.com');
  empty = await createWebsite(ctx, owner, 'no-sales.example.com');
  await setRate(ctx.pool, 'EUR', '1.2', '2000-01-01');
  // M0: A +100 on the 5th, B +50 EUR (60 USD) on the 10th; M1: A +50 on the 5th, C +30 on the 3rd; one GBP
  // purchase without a rate. Monthly: M0 (A, B) 80, 105, 105 per customer; M1 (C) 30, 30.
  await storeRows(ctx.clickhouse, [
    purchase(at(2, 5), 'A', 100),
    purchase(at(2, 10), 'B', 50, 'EUR'),
    purchase(at(1, 5), 'A', 50),
    purchase(at(1, 3), 'C', 30),
    purchase(at(1, 4), 'D', 25, 'GBP'),
  ]);
  await ltvJob(
    {
      pool: ctx.pool,
      clickhouse: ctx.clickhouse,
      logger: ctx.logger,
    },
    { websiteId: site.id },
  );
});
afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

it('shows the cohort table in the site currency, its curve, and switches to weekly cohorts', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}`);
  await page
    .getByRole('navigation', { name: 'Dashboard sections' })
    .getByRole('link', { name: 'Lifetime value' })
    .click();
  await page.waitForURL(`${ctx.baseUrl}/sites/${site.id}/ltv`);
  const table = page.getByRole('region', { name: 'Cohort table' }).getByRole('table');
  await table.waitFor();
  const cells = async (cohort: string) =>
    (await table.locator(`tr[data-cohort="${cohort}"]`).locator('th, td').allTextContents()).map((t) => t.trim());
  expect(await table.locator('thead th').allTextContents()).toEqual([
    'Cohort',
    'Customers',
    'Month 0',
    'Month 1',
    'Month 2',
  ]);
  expect((await cells(monthStart(2))).slice(1)).toEqual(['2', '$80.00', '$105.00', '$105.00']);
  expect((await cells(monthStart(1))).slice(1)).toEqual(['1', '$30.00', '$30.00', '']);
  // The curve: all cohorts and the newest, dashed.
  const chart = page.locator('figure.chart');
  expect(await chart.getAttribute('data-series')).toBe('2');
  expect(await chart.getAttribute('data-points')).toBe('3');
  await page.getByText('1 purchase in GBP left out').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'ltv-monthly');

  await page.getByRole('tab', { name: 'Weekly' }).click();
  await table.getByRole('columnheader', { name: 'Week 0', exact: true }).waitFor();
  const rows = await table.locator('tbody tr').count();
  expect(rows).toBeGreaterThanOrEqual(2);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'ltv-weekly');
  expect(problems).toEqual([]);
  await context.close();
});

it('says when nothing is computed yet, and when there are no customers', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, { width: 390, height: 800 });
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${empty.id}/ltv`);
  await page.getByText('Not computed yet').waitFor();
  expect(await page.getByTestId('ltv-30d').textContent()).toBe('$0.00');
  await ltvJob(
    {
      pool: ctx.pool,
      clickhouse: ctx.clickhouse,
      logger: ctx.logger,
    },
    { websiteId: empty.id },
  );
  await page.reload();
  await page.getByText('No customers in this period').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'ltv-empty-phone');
  expect(problems).toEqual([]);
  await context.close();
});

it('reads well in the dark theme on a phone', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, {
    width: 390,
    height: 844,
    colorScheme: 'dark',
  });
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/ltv`);
  await page.getByRole('region', { name: 'Cohort table' }).getByRole('table').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'ltv-dark-phone');
  expect(problems).toEqual([]);
  await context.close();
});
