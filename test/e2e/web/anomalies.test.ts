// Anomalies on the overview chart in Chromium: a site with a weekly pattern (test/helpers/anomalyFixture.ts),
// a spike 20 hours ago with a deploy annotated an hour before it, and a drop 5 hours after it; the anomaly job
// runs; the chart marks both with a band of their severity whose label names the metric, the deviation and the
// suspect deploy, and lists them under the chart, from the timeseries answer alone (no request of their own).
// No failed request or console error, no serious axe violation; screenshots by hours and by days.
import type { Browser } from 'playwright-core';
import { detectForWebsite } from '../../../jobs/anomalies';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { errorRows, HOUR, storeErrors, storeSeries, visitRows, visitsAt, WEEK } from '../../helpers/anomalyFixture';
import {
  accessibilityViolations,
  createDashboardContext,
  launchBrowser,
  screenshot,
  signInThroughPage,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';
import { storeRows } from '../../helpers/statsFixture';

jest.setTimeout(240_000);

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: string;

const NOW_HOUR = Math.floor(Date.now() / HOUR) * HOUR;
const SPIKE = NOW_HOUR - 20 * HOUR;
const DROP = SPIKE + 5 * HOUR;

beforeAll(async () => {
  ctx = await createDashboardContext();
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'anomaly-chart');
  site = (await createWebsite(ctx, owner, 'spiky.example')).id;
  // This week's last 7 days in full (the chart), the weeks before around the judged hours (the baselines); three
  // times the fixture's traffic, so that even a weekend night has the volume to be judged.
  const scale = 3;
  await storeSeries(ctx.clickhouse, site, NOW_HOUR - 7 * 24 * HOUR, NOW_HOUR, { scale, skip: [SPIKE, DROP] });
  for (let k = 1; k <= 4; k++)
    await storeSeries(ctx.clickhouse, site, SPIKE - k * WEEK - HOUR, DROP - k * WEEK + 2 * HOUR, { scale });
  for (const [hour, visits] of [
    [SPIKE, visitsAt(SPIKE, scale) * 4],
    [DROP, Math.round(visitsAt(DROP, scale) * 0.35)],
  ]) {
    await storeRows(ctx.clickhouse, visitRows(site, hour, 0, visits));
    await storeErrors(ctx.clickhouse, errorRows(site, hour, 0, visits));
  }
  await ctx.pool.query(
    `INSERT INTO annotations (website_id, team_id, type, message, occurred_at, created_by)
     VALUES ($1, $2, 'deploy', 'v2.3 new checkout', $3, $4)`,
    [site, owner.teamId, new Date(SPIKE - HOUR), owner.id],
  );
  const hours = [];
  for (let h = SPIKE - HOUR; h <= DROP + HOUR; h += HOUR) hours.push(h);
  await detectForWebsite(ctx.pool, ctx.clickhouse, site, hours);
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

it('marks the anomalies on the chart with their severity, metric, deviation and suspect annotation', async () => {
  const stored = await ctx.pool.query<{ metric_name: string; severity: string }>(
    'SELECT metric_name, severity FROM anomalies WHERE website_id = $1 ORDER BY started_at, metric_name',
    [site],
  );
  // Worked out from the fixture: the spike quadruples the visits (+300 %), the drop keeps 35 % of them (−65 %).
  expect(stored.rows.filter((r) => r.metric_name === 'visitors')).toEqual([
    { metric_name: 'visitors', severity: 'critical' },
    { metric_name: 'visitors', severity: 'info' },
  ]);

  const w = await watchedPage(browser, ctx.baseUrl);
  const { page } = w;
  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('anomal')) asked.push(r.url());
  });
  await signInThroughPage(page, ctx.baseUrl, owner);
  await page.goto(`${ctx.baseUrl}/sites/${site}?range=24h`);
  const bands = page.locator('.chart-band');
  await bands.first().waitFor();
  // One band per anomalous hour, in its worst severity's colour (visitors, pageviews … of an hour together).
  const tones = await bands.evaluateAll((els) => els.map((e) => e.getAttribute('data-tone')));
  expect(tones).toEqual(['critical', 'info']);
  const spike = page.locator('.chart-band.is-critical .chart-band-tab').first();
  const title = await spike.getAttribute('title');
  expect(title).toMatch(/Anomaly \(critical\), [^\n]*: Visitors \d+ against \d+(\.\d+)? expected \(\+\d+ ?%\)/);
  expect(title).toContain('Suspect changes: deploy: v2.3 new checkout');
  // The list under the chart says the same in words.
  const listed = page.locator('.chart-anomalies li[data-metric="visitors"]');
  expect(await listed.count()).toBe(2);
  expect(await listed.first().textContent()).toContain('suspect changes: deploy: v2.3 new checkout');
  // A band covers its hour: it is at least as wide as one hourly bucket and inside the plot.
  const box = await page.locator('.chart-band.is-critical').first().boundingBox();
  const plot = await page.locator('.chart-host .u-over').boundingBox();
  expect(box && plot).toBeTruthy();
  expect(box!.width).toBeGreaterThan(plot!.width / 24 / 2);
  expect(box!.x).toBeGreaterThanOrEqual(plot!.x - 1);
  expect(box!.x + box!.width).toBeLessThanOrEqual(plot!.x + plot!.width + 1);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'overview-anomalies-hours');

  // By days, both fall on one or two day buckets: still one band per run of buckets, never stacked stripes.
  await page.goto(`${ctx.baseUrl}/sites/${site}?range=7d`);
  await page.locator('.chart-band').first().waitFor();
  const dayBands = await page.locator('.chart-band').evaluateAll((els) => els.map((e) => e.getAttribute('data-tone')));
  expect(dayBands[0]).toBe('critical');
  expect(dayBands.length).toBeLessThanOrEqual(2);
  await page.locator('.panel-grid .panel').first().waitFor();
  await page.waitForLoadState('networkidle');
  await screenshot(page, 'overview-anomalies-days');
  expect(asked).toEqual([]);
  expect(w.problems).toEqual([]);
  await w.context.close();

  // The dark theme: the bands and severity labels keep their contrast.
  const dark = await watchedPage(browser, ctx.baseUrl, { colorScheme: 'dark' });
  await signInThroughPage(dark.page, ctx.baseUrl, owner);
  await dark.page.goto(`${ctx.baseUrl}/sites/${site}?range=24h`);
  await dark.page.locator('.chart-band').first().waitFor();
  expect(await accessibilityViolations(dark.page)).toEqual([]);
  await screenshot(dark.page, 'overview-anomalies-dark');
  expect(dark.problems).toEqual([]);
  await dark.context.close();
});
