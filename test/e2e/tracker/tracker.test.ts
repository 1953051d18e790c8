// The tracker in a real browser (Debian's Chromium driven by playwright-core): a page served on loopback
// loads /tracker.js, navigates an SPA route, clicks an outbound link and a heatmap target, throws an error
// and calls tidemark(); the rows stored are then checked.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { PROJECT_ROOT } from '../../../lib/paths';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { startTestWorker, waitForEvents } from '../../helpers/ingest';

const CHROMIUM = '/usr/bin/chromium';

// What page.evaluate callbacks touch in the page (the server-side tsconfig has no DOM types).
interface PageWindow {
  tidemark: ((name: string, props?: object) => void) & { optOut(): void; optIn(): void };
  localStorage: { getItem(key: string): string | null };
}
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts');
// Headless Chromium announces itself as HeadlessChrome, which isbot rightly drops; a visitor's browser does not.
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

let ctx: TestContext;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let browser: Browser;
let pageServer: http.Server;
let pageUrl: string;
let site: { id: string; tracking_code: string };

jest.setTimeout(90_000);

beforeAll(async () => {
  ctx = await createTestContext();
  const owner = await registerUser(ctx, 'pro', 'e2e');
  site = await createWebsite(ctx, owner, 'shop.example.com');
  const settings = await client(ctx.baseUrl)('PUT', `/api/websites/${site.id}/tracking`, {
    token: owner.token,
    body: { heatmaps: true, track_outbound_links: true },
  });
  expect(settings.status).toBe(200);
  worker = await startTestWorker(ctx);
  const html = `<!doctype html><html><head><title>Shop</title>
<script>window.tidemark=window.tidemark||function(){(tidemark.q=tidemark.q||[]).push(arguments)};tidemark('Early event',{queued:true});</script>
<script defer data-site="${site.tracking_code}" data-api="${ctx.baseUrl}" data-allow-localhost src="${ctx.baseUrl}/tracker.js"></script>
</head><body style="height:3000px">
<h1 id="hero" class="banner">Welcome</h1>
<button id="spa" onclick="history.pushState({}, '', '/pricing')">Pricing</button>
<a id="out" href="https://partner.example.net/deal" onclick="event.preventDefault()">Partner</a>
<button id="boom" onclick="setTimeout(function(){ throw new TypeError('boom ' + 42) })">Break</button>
</body></html>`;
  pageServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve()));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/landing`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  pageServer?.close();
  await worker?.stop();
  await ctx?.close();
});

interface Row {
  type: string;
  name: string;
  session_id: string;
  visitor_id: string;
  url: string;
  pathname: string;
  referrer: string;
  device_type: string;
  browser: string;
  os: string;
  engagement_ms: number;
  props: string;
}

it('records what a visitor does on a page with the tracker', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, userAgent: USER_AGENT });
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(pageUrl, { waitUntil: 'load' });
  await page.waitForFunction(
    () => typeof (globalThis as unknown as Partial<PageWindow>).tidemark?.optOut === 'function',
  );
  await page.waitForTimeout(300); // the settings request enables click capture
  await page.click('#spa');
  await page.click('#hero');
  await page.click('#out');
  await page.click('#boom');
  await page.evaluate(() => (globalThis as unknown as PageWindow).tidemark('Signup', { plan: 'pro' }));
  await page.waitForTimeout(1200); // visible time before leaving
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'tracker-e2e.png'), fullPage: false });
  await page.close({ runBeforeUnload: true }); // pagehide sends the engagement beacon
  await context.close();
  expect(requested.filter((u) => u.includes('/tracker/replay.'))).toEqual([]); // replay is off for this site

  const where = `website_id = '${site.id}'`;
  // pageview ×2, Early event, Signup, outbound click, heatmap clicks ×4, error, engagement ×2
  expect(await waitForEvents(ctx, 10, where, 20_000)).toBeGreaterThanOrEqual(10);
  // The page's last engagement beacon (sent at pagehide, ~1.2 s of visible time) can land after the rest on a
  // busy machine: wait until the engagement rows add up to more than the time before it, or 20 s.
  const engagedMs = async () =>
    Number(
      (
        await (
          await ctx.clickhouse.query({
            query: `SELECT sum(engagement_ms) AS ms FROM events WHERE ${where} AND type = 'engagement'`,
            format: 'JSONEachRow',
          })
        ).json<{ ms: string }>()
      )[0].ms,
    );
  for (const end = Date.now() + 20_000; (await engagedMs()) <= 500 && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 1_000));
  const rows = await (
    await ctx.clickhouse.query({
      query: `SELECT * FROM events WHERE ${where} ORDER BY ts, type`,
      format: 'JSONEachRow',
    })
  ).json<Row>();

  const pageviews = rows.filter((r) => r.type === 'pageview');
  expect(pageviews.map((r) => r.pathname)).toEqual(['/landing', '/pricing']);
  expect(pageviews[1].referrer).toBe('/landing');
  expect(new Set(rows.map((r) => r.session_id)).size).toBe(1); // one session across the SPA navigation
  expect(new Set(rows.map((r) => r.visitor_id)).size).toBe(1);
  for (const r of pageviews) {
    expect(r.device_type).toBe('desktop');
    expect(r.browser).toMatch(/Chrom/);
    expect(r.os).toBe('Linux');
    expect(r.url).toContain('127.0.0.1');
  }
  const custom = rows.filter((r) => r.type === 'event');
  expect(custom.map((r) => r.name).sort()).toEqual(['Early event', 'Outbound Link: Click', 'Signup']);
  expect(JSON.parse(custom.find((r) => r.name === 'Signup')!.props)).toEqual({ plan: 'pro' });
  expect(JSON.parse(custom.find((r) => r.name === 'Outbound Link: Click')!.props)).toEqual({
    url: 'https://partner.example.net/deal',
  });
  expect(rows.filter((r) => r.type === 'error')).toHaveLength(1);
  const engagement = rows.filter((r) => r.type === 'engagement');
  expect(engagement.length).toBeGreaterThanOrEqual(1);
  expect(engagement.reduce((s, r) => s + Number(r.engagement_ms), 0)).toBeGreaterThan(500);

  const clicks = await (
    await ctx.clickhouse.query({
      query: `SELECT selector, pathname FROM interactions WHERE ${where} ORDER BY ts`,
      format: 'JSONEachRow',
    })
  ).json<{ selector: string; pathname: string }>();
  expect(clicks.map((c) => c.selector)).toEqual(['button#spa', 'h1#hero', 'a#out', 'button#boom']);
  expect(clicks[1].pathname).toBe('/pricing');

  const groups = await ctx.pool.query(
    'SELECT type, message, occurrence_count FROM error_groups WHERE website_id = $1',
    [site.id],
  );
  expect(groups.rows).toEqual([{ type: 'TypeError', message: 'Uncaught TypeError: boom 42', occurrence_count: '1' }]);
  expect(fs.existsSync(path.join(ARTIFACTS, 'tracker-e2e.png'))).toBe(true);
});

it('optOut() stops sending and optIn() resumes', async () => {
  const page = await browser.newPage({ userAgent: USER_AGENT });
  await page.goto(`${pageUrl}?opt`, { waitUntil: 'load' });
  await page.waitForFunction(
    () => typeof (globalThis as unknown as Partial<PageWindow>).tidemark?.optOut === 'function',
  );
  await page.evaluate(() => (globalThis as unknown as PageWindow).tidemark.optOut());
  await page.evaluate(() => (globalThis as unknown as PageWindow).tidemark('While opted out'));
  await page.evaluate(() => (globalThis as unknown as PageWindow).tidemark.optIn());
  // Closed only once the event was answered: this test is about opting out and in, not delivery on unload
  // (a loaded CI machine once closed the page before the request left it).
  const sent = page.waitForResponse(
    (r) => r.request().method() === 'POST' && (r.request().postData() ?? '').includes('After opt-in'),
    { timeout: 20_000 },
  );
  await page.evaluate(() => (globalThis as unknown as PageWindow).tidemark('After opt-in'));
  await sent;
  await page.close();
  expect(await waitForEvents(ctx, 1, `website_id = '${site.id}' AND name = 'After opt-in'`)).toBe(1);
  await new Promise((r) => setTimeout(r, 500));
  const n = await (
    await ctx.clickhouse.query({
      query: `SELECT count() AS n FROM events WHERE name = 'While opted out'`,
      format: 'JSONEachRow',
    })
  ).json<{ n: string }>();
  expect(n[0].n).toBe('0');
});

async function servePage(html: string): Promise<{ url: string; close(): void }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

it('stays silent on localhost without data-allow-localhost; data-persist keeps one visitor id in localStorage', async () => {
  const tag = (extra: string) =>
    `<!doctype html><html><head><script defer data-site="${site.tracking_code}" data-api="${ctx.baseUrl}" ${extra} src="${ctx.baseUrl}/tracker.js"></script></head><body>x</body></html>`;
  const silent = await servePage(tag(''));
  const persisted = await servePage(tag('data-allow-localhost data-persist="true"'));
  try {
    const page = await browser.newPage({ userAgent: USER_AGENT });
    const posts: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && posts.push(r.url()));
    await page.goto(silent.url, { waitUntil: 'load' });
    await page.waitForTimeout(500);
    expect(posts).toEqual([]);
    await page.goto(persisted.url, { waitUntil: 'load' });
    await page.waitForTimeout(300);
    const stored = await page.evaluate(() => (globalThis as unknown as PageWindow).localStorage.getItem('tm_vid'));
    expect(stored).toMatch(/^[0-9a-f-]{36}$/);
    await page.reload({ waitUntil: 'load' });
    await page.close();
    expect(await waitForEvents(ctx, 2, `visitor_id = '${stored}' AND type = 'pageview'`)).toBe(2);
  } finally {
    silent.close();
    persisted.close();
  }
});

it('loads the replay bundle only when replay is on, and masks every input', async () => {
  const owner = await registerUser(ctx, 'pro', 'replay');
  const replaySite = await createWebsite(ctx, owner, 'replay.example.com');
  await client(ctx.baseUrl)('PUT', `/api/websites/${replaySite.id}/tracking`, {
    token: owner.token,
    body: { session_replay: true },
  });
  const html = `<!doctype html><html><head>
<script defer data-site="${replaySite.tracking_code}" data-api="${ctx.baseUrl}" data-allow-localhost src="${ctx.baseUrl}/tracker.js"></script>
</head><body><form><input id="email" type="email"><input id="pw" type="password"></form><p>Visible text</p></body></html>`;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const requested: string[] = [];
    const page = await browser.newPage({ userAgent: USER_AGENT });
    page.on('request', (r) => requested.push(r.url()));
    // The replay bundle loads lazily; on a busy machine that takes a while, so wait for it, not a fixed time.
    const replayLoaded = page.waitForResponse((r) => /\/tracker\/replay\.[0-9a-f]{12}\.js$/.test(r.url()), {
      timeout: 20_000,
    });
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/signup`, { waitUntil: 'load' });
    await replayLoaded;
    await page.waitForTimeout(500);
    await page.fill('#email', 'secret-person@example.com');
    await page.fill('#pw', 'hunter2-password');
    await page.close({ runBeforeUnload: true });
    expect(requested.some((u) => /\/tracker\/replay\.[0-9a-f]{12}\.js$/.test(u))).toBe(true);
    const end = Date.now() + 15_000;
    let chunks: { data: string }[] = [];
    while (Date.now() < end) {
      chunks = await (
        await ctx.clickhouse.query({
          query: `SELECT data FROM replay_chunks WHERE website_id = {w:UUID} ORDER BY seq`,
          query_params: { w: replaySite.id },
          format: 'JSONEachRow',
        })
      ).json<{ data: string }>();
      if (chunks.some((c) => c.data.includes('"source":5'))) break; // an input event arrived
      await new Promise((r) => setTimeout(r, 200));
    }
    const all = chunks.map((c) => c.data).join('');
    expect(all).toContain('Visible text');
    expect(all).toContain('"source":5');
    expect(all).not.toContain('secret-person');
    expect(all).not.toContain('hunter2');
  } finally {
    server.close();
  }
});
