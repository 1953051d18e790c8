// The overview's question box and conversation panel in a real browser (issue 27): a question, its answer
// (summary and table) from the server's interpreter, a follow-up leaning on it, a suggestion, and a question
// it cannot read; hand-counted from the events below. Also a phone width and the accessibility check.
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
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: string;
const DAY = 86_400_000;

jest.setTimeout(180_000);

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'scale', 'ask-web');
  site = (await createWebsite(ctx, owner, 'ask-web.example.com')).id;
  // Two days ago: v1 (mobile: / and /pricing), v2 (desktop: /pricing), v3 (desktop: /pricing).
  const at = new Date(Math.floor(Date.now() / DAY) * DAY - 2 * DAY + DAY / 2).toISOString();
  const v = (id: string, device: string) => ({ visitor_id: id, session_id: `s-${id}`, device_type: device, ts: at });
  await storeRows(ctx.clickhouse, [
    eventRow(site, { ...v('v1', 'mobile'), pathname: '/' }),
    eventRow(site, { ...v('v1', 'mobile'), pathname: '/pricing' }),
    eventRow(site, { ...v('v2', 'desktop'), pathname: '/pricing' }),
    eventRow(site, { ...v('v3', 'desktop'), pathname: '/pricing' }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

const turns = (page: Page) => page.locator('.ask-turn');

async function askThroughBox(page: Page, question: string, count: number) {
  await page.getByLabel('Question about this site').fill(question);
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await turns(page)
    .nth(count - 1)
    .waitFor();
}

it('asks, answers with a table, follows up, and offers suggestions', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site}`);
  await page.getByLabel('Question about this site').waitFor();

  await askThroughBox(page, 'Top pages in the last 7 days', 2);
  const answer = turns(page).nth(1);
  expect(await answer.locator('.ask-text').textContent()).toContain('/pricing (3)');
  expect(await answer.locator('tbody tr').allInnerTexts()).toEqual(['/pricing\t3', '/\t1']);

  await askThroughBox(page, 'only mobile', 4);
  expect(await turns(page).nth(3).locator('tbody tr').allInnerTexts()).toEqual(['/\t1', '/pricing\t1']);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'ask-conversation');

  // A suggestion is a question the server answers: one click asks it.
  const suggestions = page.getByLabel('Suggested questions').getByRole('button');
  expect(await suggestions.count()).toBeGreaterThan(0);
  await suggestions.first().click();
  await turns(page).nth(5).waitFor();

  await page.getByLabel('Question about this site').fill('Tell me a joke');
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'could not be read' }).waitFor();
  expect(await turns(page).count()).toBe(6);
  expect(problems.filter((p) => !p.includes('422'))).toEqual([]);
  await context.close();
});

it('fits a phone', async () => {
  const { page, context } = await watchedPage(browser, ctx.baseUrl, { width: 375, height: 800 });
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site}`);
  await askThroughBox(page, 'How many visitors in the last 7 days?', 2);
  expect(await turns(page).nth(1).locator('.ask-figure strong').textContent()).toBe('3');
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow).toBeLessThanOrEqual(0);
  await screenshot(page, 'ask-phone');
  await context.close();
});
