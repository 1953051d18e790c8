// The dashboard's conversion panels in Chromium: goals, custom events and their properties, a funnel and
// revenue on the conversions fixture (placed yesterday, UTC, inside the default 30-day view). Every figure
// the page shows is compared with the API's own answer fetched from Node, formatted by the dashboard's
// formatters; choosing a goal filters the whole dashboard (the URL carries the filter).
import type { Browser, Locator, Page } from 'playwright-core';
import { compact, money, percent } from '../../../web/src/lib/format';
import { registerUser, type TestUser } from '../../helpers/accounts';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  signInThroughPage,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { addConversionGoals, conversionsFixture } from '../../helpers/conversionsFixture';
import { client } from '../../helpers/http';
import { storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let browser: Browser;
let call: ReturnType<typeof client>;
let user: TestUser;
let siteId: string;
let emptySiteId: string;
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

jest.setTimeout(180_000);

type Metric = number | { value: number; currency: string } | null;
interface V2Row {
  dimensions: string[];
  metrics: Metric[];
}
const value = (m: Metric) => (m === null ? 0 : typeof m === 'number' ? m : m.value);

async function createSite(domain: string): Promise<string> {
  const res = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain, name: `Shop ${domain}`, timezone: 'UTC' },
  });
  if (res.status !== 201) throw new Error(`site: ${res.status} ${res.text}`);
  return res.body.data.website.id;
}

/** The Stats v2 answer for the dashboard's default view (30 days, no filters) plus `extra`. */
async function v2(extra: Record<string, unknown>, filters: unknown[] = []): Promise<V2Row[]> {
  const res = await call('POST', '/api/v2/query', {
    token: user.token,
    body: { site_id: siteId, date_range: '30d', filters, ...extra },
  });
  if (res.status !== 200) throw new Error(`v2: ${res.status} ${res.text}`);
  return res.body.results;
}

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'pro', 'conversions');
  siteId = await createSite('shop.example.com');
  emptySiteId = await createSite('empty.example.com');
  await addConversionGoals(call, user, siteId);
  await storeRows(ctx.clickhouse, conversionsFixture(siteId, yesterday));
  const goals = await call('GET', `/api/websites/${siteId}/goals`, { token: user.token });
  const thankYou = goals.body.data.goals.find((g: { name: string }) => g.name === 'Thank you');
  const signup = goals.body.data.goals.find((g: { name: string }) => g.name === 'Signup');
  for (const body of [
    { name: 'Checkout', steps: [{ path: '/' }, { path: '/pricing' }, { goal_id: thankYou.id }] },
    { name: 'Docs to signup', steps: [{ path: '/docs/*' }, { goal_id: signup.id }] },
  ]) {
    const funnel = await call('POST', `/api/websites/${siteId}/funnels`, { token: user.token, body });
    if (funnel.status !== 201) throw new Error(`funnel: ${funnel.status} ${funnel.text}`);
  }
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

const signIn = (page: Page, next: string) => signInThroughPage(page, ctx.baseUrl, user, next);

/** Reads until the answer holds `until` alone in its first column (the panel re-queried), or 5 s pass. */
async function settled(read: () => Promise<string[][]>, until: string): Promise<string[][]> {
  const end = Date.now() + 5000;
  for (;;) {
    const rows = await read();
    if ((rows.length === 1 && rows[0][0] === until) || Date.now() > end) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const panel = (page: Page, name: string | RegExp) => page.getByRole('region', { name });

/** The rows of a panel's table body as arrays of cell texts. */
async function tableRows(table: Locator): Promise<string[][]> {
  await table.locator('tbody tr').first().waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
}

it('shows goals, custom events with properties, the funnel and revenue as the API answers them', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page, `/sites/${siteId}`);

  // Goals: every goal, its visitors, completions and conversion rate.
  const goalRows = await v2({ metrics: ['visitors', 'events', 'conversion_rate'], dimensions: ['event:goal'] });
  expect(goalRows.length).toBe(4);
  const goals = panel(page, 'Goals');
  const shownGoals = await tableRows(goals.getByRole('table'));
  expect(shownGoals.sort()).toEqual(
    goalRows
      .map((r) => [
        r.dimensions[0],
        compact(value(r.metrics[0])),
        compact(value(r.metrics[1])),
        percent(value(r.metrics[2]), 1),
      ])
      .sort(),
  );
  // The fixture's worked-out figures, so a wrong API answer cannot pass unnoticed either.
  expect(shownGoals).toContainEqual(['Signup', '3', '3', '60.0%']);

  // Custom events by name.
  const eventRows = (await v2({ metrics: ['visitors', 'events'], dimensions: ['event:name'] })).filter(
    (r) => r.dimensions[0] !== '',
  );
  expect(eventRows.length).toBeGreaterThan(1);
  const events = panel(page, 'Custom events');
  expect((await tableRows(events.getByRole('table'))).sort()).toEqual(
    eventRows.map((r) => [r.dimensions[0], compact(value(r.metrics[0])), compact(value(r.metrics[1]))]).sort(),
  );

  // Funnels: picked one at a time; each step's visitors and share of the first, the drop-off, the total.
  const funnel = panel(page, 'Funnels');
  const saved = await call('GET', `/api/websites/${siteId}/funnels`, { token: user.token });
  const entered: Record<string, number> = {};
  for (const { id, name } of saved.body.data.funnels as { id: string; name: string }[]) {
    await funnel.getByLabel('Funnel').selectOption({ label: name });
    const results = (
      await call('GET', `/api/websites/${siteId}/funnels/${id}/results?period=30d`, { token: user.token })
    ).body.data;
    const { completed, entered: all } = results.totals;
    entered[name] = all;
    await funnel
      .getByText(`${completed} of ${all} ${all === 1 ? 'visitor' : 'visitors'} completed the funnel`)
      .waitFor();
    await funnel.getByText(`1. ${results.steps[0].name}`).waitFor();
    const steps = await funnel.locator('.cv-step').allTextContents();
    expect(steps).toHaveLength(results.steps.length);
    results.steps.forEach(
      (s: { step: number; name: string; visitors: number; conversion_rate: number; dropoff: number }, i: number) => {
        expect(steps[i]).toContain(`${s.step}. ${s.name}`);
        expect(steps[i]).toContain(
          `${compact(s.visitors)} ${s.visitors === 1 ? 'visitor' : 'visitors'} · ${percent(s.conversion_rate, 1)}`,
        );
        if (s.dropoff > 0) expect(steps[i]).toContain(`${compact(s.dropoff)} dropped off`);
      },
    );
  }
  // V1, V3 and V5 land on /, only V1 goes on to /pricing and the thank-you page.
  expect(entered.Checkout).toBe(3);
  await funnel.getByLabel('Funnel').selectOption({ label: 'Checkout' });
  await funnel.getByText('1 of 3 visitors completed the funnel').waitFor();

  // Revenue: the totals and the purchase goal, in the site's currency.
  const [total] = await v2({ metrics: ['events', 'total_revenue', 'average_revenue'] });
  const currency = (total.metrics[1] as { currency: string }).currency;
  expect(currency).toBe('USD');
  expect(value(total.metrics[1])).toBe(100);
  const revenue = panel(page, 'Revenue');
  await revenue.getByText('Total revenue').waitFor();
  const kpis = await revenue.locator('.cv-kpis dd').allTextContents();
  expect(kpis).toEqual([
    money(value(total.metrics[1]), currency),
    money(value(total.metrics[2]), currency),
    compact(value(total.metrics[0])),
  ]);
  // The fixture's EUR purchase counts as a purchase but not in USD revenue: the panel says so.
  await revenue.getByText('Revenue and its average count purchases in USD only').waitFor();
  const purchaseRow = (
    await v2({ metrics: ['events', 'total_revenue', 'average_revenue'], dimensions: ['event:goal'] })
  )
    .filter((r) => r.dimensions[0] === 'Purchase')
    .map((r) => [
      r.dimensions[0],
      compact(value(r.metrics[0])),
      money(value(r.metrics[1]), currency),
      money(value(r.metrics[2]), currency),
    ]);
  expect(await tableRows(revenue.getByRole('table'))).toEqual(purchaseRow);

  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'conversions-desktop');

  // Choosing an event shows its properties: every key with its values and counts.
  await events.getByRole('button', { name: 'Signup', exact: true }).click();
  await events.getByRole('heading', { name: 'Signup' }).waitFor();
  const listed = await call('GET', `/api/external/v1/analytics/${siteId}/events?range=90d&limit=100`, {
    token: user.token,
  });
  const keys: string[] = listed.body.data.events
    .find((e: { name: string }) => e.name === 'Signup')
    .properties.map((p: { key: string }) => p.key);
  expect(keys.sort()).toEqual(['method', 'plan']);
  for (const key of keys) {
    const values = await v2({ metrics: ['visitors', 'events'], dimensions: [`event:props:${key}`] }, [
      ['is', 'event:name', ['Signup']],
    ]);
    const section = events.getByRole('region', { name: `Property ${key}` });
    expect((await tableRows(section.getByRole('table'))).sort()).toEqual(
      values
        .filter((r) => value(r.metrics[1]) > 0)
        .map((r) => [
          r.dimensions[0] === '' ? '(not set)' : r.dimensions[0],
          compact(value(r.metrics[1])),
          compact(value(r.metrics[0])),
        ])
        .sort(),
    );
  }
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'conversions-event-properties');
  await events.getByRole('button', { name: 'All events' }).click();
  await events.getByRole('button', { name: 'Download', exact: true }).waitFor();

  // Choosing a goal filters the dashboard: the URL carries it and the panels answer for it.
  await goals.getByRole('button', { name: 'Docs', exact: true }).click();
  await page.waitForURL((url) => url.searchParams.getAll('f').length === 1);
  const [f] = new URL(page.url()).searchParams.getAll('f');
  expect(f.split(',').map(decodeURIComponent)).toEqual(['event:goal', 'is', 'Docs']);
  const filtered = await v2({ metrics: ['visitors', 'events', 'conversion_rate'], dimensions: ['event:goal'] }, [
    ['is', 'event:goal', ['Docs']],
  ]);
  expect(await settled(async () => (await tableRows(goals.getByRole('table'))).sort(), 'Docs')).toEqual(
    filtered
      .map((r) => [
        r.dimensions[0],
        compact(value(r.metrics[0])),
        compact(value(r.metrics[1])),
        percent(value(r.metrics[2]), 1),
      ])
      .sort(),
  );
  // The key figures become conversions under a goal filter, as the API answers them.
  const [totals] = await v2({ metrics: ['visitors', 'events', 'conversion_rate'] }, [['is', 'event:goal', ['Docs']]]);
  await page.locator('.kpi[data-metric="conversion_rate"][data-value]').waitFor();
  const cards = await page
    .locator('.kpi')
    .evaluateAll((els) => els.map((e) => [e.getAttribute('data-metric'), Number(e.getAttribute('data-value'))]));
  expect(cards).toEqual([
    ['visitors', value(totals.metrics[0])],
    ['events', value(totals.metrics[1])],
    ['conversion_rate', value(totals.metrics[2])],
  ]);
  // Funnels do not read conversions: the goal filter is named as not applied.
  await funnel.getByText('Not applied to funnels: goal filter.').waitFor();

  expect(problems).toEqual([]);
  await context.close();
});

it('fits a phone in the dark theme', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, {
    width: 375,
    height: 800,
    colorScheme: 'dark',
  });
  await signIn(page, `/sites/${siteId}`);
  await panel(page, 'Goals').getByRole('table').waitFor();
  await panel(page, 'Custom events').getByRole('table').waitFor();
  await panel(page, 'Funnels').locator('.cv-total').waitFor();
  await panel(page, 'Revenue').getByRole('table').waitFor();
  // Nothing wider than the screen.
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'conversions-phone-dark');
  expect(problems).toEqual([]);
  await context.close();

  const desktop = await watchedPage(browser, ctx.baseUrl, { colorScheme: 'dark' });
  await signIn(desktop.page, `/sites/${siteId}`);
  await panel(desktop.page, 'Revenue').getByRole('table').waitFor();
  await panel(desktop.page, 'Funnels').locator('.cv-total').waitFor();
  expect(await accessibilityViolations(desktop.page)).toEqual([]);
  await screenshot(desktop.page, 'conversions-desktop-dark');
  expect(desktop.problems).toEqual([]);
  await desktop.context.close();
});

it('says what to set up on a site without goals, events or funnels', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page, `/sites/${emptySiteId}`);
  await panel(page, 'Goals').getByText('No goals yet').waitFor();
  await panel(page, 'Custom events').getByText('No custom events in this period').waitFor();
  await panel(page, 'Revenue').getByText('No purchase goal yet').waitFor();
  const funnels = panel(page, 'Funnels');
  await funnels.getByText('No funnels yet').waitFor();
  expect(await funnels.getByRole('link', { name: 'Set one up in settings' }).getAttribute('href')).toBe(
    `/sites/${emptySiteId}/settings/funnels`,
  );
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'conversions-empty');
  expect(problems).toEqual([]);
  await context.close();
});
