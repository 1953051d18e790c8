// The dashboard's Retention section (issue 25) in a real browser: weekly cohorts stored straight into the store
// on the Wednesdays of the four weeks before this one (UTC site), computed by the retention job, read by the
// section with the signed-in reader's token.
//
// Cohort A (Wednesday 4 weeks ago): 10 visitors; 6 back 3 weeks ago, 4 of them 2 weeks ago, 2 last week.
// Cohort B (Wednesday 3 weeks ago): 5 visitors; 3 back 2 weeks ago. A cookieless browser id on every
// Wednesday never counts. Weekly grid: A 100 % · 60 % · 40 % · 20 %, B 100 % · 60 % · 0 %.
// Daily view: B's day, 7 days on (2 weeks ago Wednesday): 3 of 5 = 60 %.
import type { Browser } from 'playwright-core';
import { retention } from '../../../jobs/retention';
import type { EventRow } from '../../../lib/ingest/job/rows';
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
let siteId: string;
let emptyId: string;

jest.setTimeout(180_000);

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// This week's Monday (UTC), and the Wednesday `n` weeks before this week.
const todayMs = Date.parse(`${iso(Date.now())}T00:00:00Z`);
const thisMonday = todayMs - ((new Date(todayMs).getUTCDay() + 6) % 7) * DAY;
const wednesday = (weeksAgo: number) => thisMonday - weeksAgo * 7 * DAY + 2 * DAY;
const monday = (weeksAgo: number) => iso(thisMonday - weeksAgo * 7 * DAY);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'retention-ui');
  siteId = (await createWebsite(ctx, owner, 'cohorts-ui.example.com')).id;
  emptyId = (await createWebsite(ctx, owner, 'no-cohorts.example.com')).id;
  const rows: EventRow[] = [];
  const visit = (visitor: string, weeksAgo: number, source: 'server' | 'browser' = 'server') =>
    rows.push(
      eventRow(siteId, {
        visitor_id: visitor,
        source,
        session_id: `${visitor}-${weeksAgo}`,
        ts: new Date(wednesday(weeksAgo) + 10 * 3600_000).toISOString(),
      }),
    );
  for (let i = 0; i < 10; i++) {
    visit(`a${i}`, 4);
    if (i < 6) visit(`a${i}`, 3);
    if (i < 4) visit(`a${i}`, 2);
    if (i < 2) visit(`a${i}`, 1);
  }
  for (let i = 0; i < 5; i++) {
    visit(`b${i}`, 3);
    if (i < 3) visit(`b${i}`, 2);
  }
  for (const w of [4, 3, 2, 1]) visit('0123456789abcdef0123456789abcdef', w, 'browser');
  await storeRows(ctx.clickhouse, rows);
  await retention({ pool: ctx.pool, clickhouse: ctx.clickhouse, logger: ctx.logger }, { websiteId: siteId });
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

it('shows the weekly grid shaded by rate, switches to daily and monthly, and an empty state', async () => {
  const { page, problems } = await watchedPage(browser, ctx.baseUrl);
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${siteId}`);
  await page.getByRole('link', { name: 'Retention' }).click();
  await page.waitForURL(`${ctx.baseUrl}/sites/${siteId}/retention`);
  const cell = (cohort: string, period: number) => page.locator(`td[data-cohort="${cohort}"][data-period="${period}"]`);
  await cell(monday(4), 0).waitFor();

  const rates = async (cohort: string, periods: number) => {
    const out: string[] = [];
    for (let p = 0; p < periods; p++) out.push(((await cell(cohort, p).textContent()) ?? '').trim());
    return out;
  };
  expect(await rates(monday(4), 4)).toEqual(['100%', '60%', '40%', '20%']);
  expect(await rates(monday(3), 3)).toEqual(['100%', '60%', '0%']);
  // Visitors per cohort: the cookieless id is in none.
  const sizes = await page
    .locator('.ret-grid tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.querySelector('td')?.textContent?.trim()));
  expect(sizes).toEqual(['5', '10']);
  // Higher rates are darker: the 60 % cell's background differs from the 20 % cell's.
  const bg = (cohort: string, p: number) =>
    cell(cohort, p).evaluate(
      (el) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el)
          .backgroundColor,
    );
  expect(await bg(monday(4), 1)).not.toBe(await bg(monday(4), 3));
  // Period-1 rates 60 and 60: the average is 60 %.
  await page.getByTestId('retention-summary').getByText('60.0%').first().waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'retention-weekly');

  await page.getByRole('tab', { name: 'Daily' }).click();
  const bDay = iso(wednesday(3));
  await cell(bDay, 7).waitFor();
  expect((await cell(bDay, 7).textContent())?.trim()).toBe('60%');
  expect((await cell(bDay, 1).textContent())?.trim()).toBe('0%');
  await screenshot(page, 'retention-daily');

  await page.getByRole('tab', { name: 'Monthly' }).click();
  await page.locator('.ret-grid th', { hasText: 'Month 0' }).waitFor();

  await page.goto(`${ctx.baseUrl}/sites/${emptyId}/retention`);
  await page.getByText('No retention cohorts yet').waitFor();
  await screenshot(page, 'retention-empty');
  expect(problems).toEqual([]);
});
