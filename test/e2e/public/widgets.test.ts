// The public widgets in a real browser (Debian's Chromium driven by playwright-core): a page served from
// another origin frames the three HTML widgets and fetches a counter's JSON; each frame must render its numbers
// (not a blocked frame), and the cross-origin fetch must be allowed by CORS.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { chTime } from '../../../lib/ingest/job/rows';
import { PROJECT_ROOT } from '../../../lib/paths';
import { recordPresence } from '../../../lib/realtime/presence';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { eventRow, storeRows } from '../../helpers/statsFixture';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts');
const HOUR = 3_600_000;

// What page.evaluate callbacks touch in the page (the server-side tsconfig has no DOM types).
interface PageWindow {
  fetch(url: string): Promise<{ status: number; json(): Promise<{ data: { live_visitors: number } }> }>;
}

let ctx: TestContext;
let browser: Browser;
let pageServer: http.Server;
let pageUrl: string;
let site: { id: string; tracking_code: string };
let pageviews = 0;

jest.setTimeout(90_000);

beforeAll(async () => {
  ctx = await createTestContext();
  const owner = await registerUser(ctx, 'pro', 'widgets');
  site = await createWebsite(ctx, owner, 'shop.example.com');
  const now = Date.now();
  const countries = ['DE', 'DE', 'US', 'FR', 'GB', 'DE', 'US', 'JP'];
  await recordPresence(
    ctx.redis,
    ctx.config.REDIS_PREFIX,
    countries.slice(0, 7).map((c, i) => ({
      websiteId: site.id,
      visitorId: randomUUID(),
      pathname: '/',
      countryCode: c,
      ts: now - i * 1_000,
    })),
  );
  // A day of pageviews with a busy afternoon, from eight visitors in five countries.
  const rows = [];
  for (let h = 0; h < 24; h++) {
    const n = 1 + Math.round(6 * Math.sin((h / 23) * Math.PI) ** 2);
    for (let j = 0; j < n; j++) {
      const v = (h + j) % countries.length;
      const ts = now - h * HOUR - j * 60_000 - 60_000;
      rows.push(
        eventRow(site.id, {
          ts: new Date(ts).toISOString(),
          received_at: chTime(ts),
          visitor_id: `00000000-0000-4000-8000-00000000000${v}`,
          session_id: `s${v}`,
          country_code: countries[v],
        }),
      );
    }
  }
  await storeRows(ctx.clickhouse, rows);
  pageviews = rows.length;

  const widgetUrl = (kind: string) => `${ctx.baseUrl}/widgets/${site.tracking_code}/${kind}`;
  const html = `<!doctype html><html><head><title>A blog</title>
<style>body{font-family:sans-serif;background:#f0f2f5;margin:24px}iframe{border:1px solid #d9dde3;border-radius:8px;margin:0 12px 12px 0;background:#fff}</style>
</head><body><h1>My blog</h1>
<iframe id="realtime" src="${widgetUrl('realtime')}" width="300" height="150" title="Live visitors"></iframe>
<iframe id="preview" src="${widgetUrl('preview')}" width="300" height="150" title="Last 24 hours"></iframe>
<iframe id="recent" src="${widgetUrl('recent')}" width="300" height="150" title="Countries"></iframe>
</body></html>`;
  pageServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve()));
  // Another host name and port than the API's 127.0.0.1: a different origin.
  pageUrl = `http://localhost:${(pageServer.address() as AddressInfo).port}/post`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  pageServer?.close();
  await ctx?.close();
});

it('shows each widget’s numbers inside a page of another origin', async () => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 260 } });
  const blocked: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') blocked.push(m.text());
  });
  await page.goto(pageUrl, { waitUntil: 'load' });
  const frame = async (id: string) => {
    const handle = await page.waitForSelector(`#${id}`);
    const f = await handle.contentFrame();
    if (!f) throw new Error(`no frame for #${id}`);
    await f.waitForSelector('footer');
    return f;
  };
  const realtime = await frame('realtime');
  expect(await realtime.textContent('.big')).toBe('7');
  expect(await realtime.textContent('main')).toContain('visitors on the site now');
  const preview = await frame('preview');
  expect(await preview.textContent('.sub')).toBe(`8 visitors · ${pageviews} pageviews`);
  expect(await preview.locator('.bars div').count()).toBe(24);
  const recent = await frame('recent');
  const names = await recent.locator('li .name').allTextContents();
  expect(names[0]).toBe('Germany');
  expect(names).toEqual(expect.arrayContaining(['United States', 'France', 'United Kingdom', 'Japan']));
  expect(await recent.textContent('footer a')).toBe('IP Geolocation by DB-IP');
  expect(await recent.getAttribute('footer a', 'href')).toBe('https://db-ip.com');

  // The counter's JSON from this origin's script: CORS lets the page read it.
  const live = await page.evaluate(async (url) => {
    const res = await (globalThis as unknown as PageWindow).fetch(url);
    return { status: res.status, body: await res.json() };
  }, `${ctx.baseUrl}/e/live/${site.tracking_code}`);
  expect(live.status).toBe(200);
  expect(live.body.data.live_visitors).toBe(7);

  // Nothing the widgets do is refused by their policy or the browser.
  expect(blocked).toEqual([]);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'public-widgets.png') });
  await page.close();
});
