// The dashboard's realtime, heatmap, replay and error sections in a real browser, on data fed through the real
// paths: presence recorded as ingestion records it, clicks, errors and an rrweb recording (made by rrweb's
// recorder in this browser) sent to the browser ingestion route and written by the worker.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../../lib/paths';
import { recordPresence } from '../../../lib/realtime/presence';
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
import { CHROME, startTestWorker } from '../../helpers/ingest';

let ctx: TestContext;
let browser: Browser;
let owner: TestUser;
let site: { id: string; tracking_code: string };
let call: ReturnType<typeof client>;
const host = 'sections.example.com';
const replaySession = `sess-${randomUUID()}`;

jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(body: Record<string, unknown>) {
  const res = await call('POST', `/api/events/${site.tracking_code}`, {
    headers: { 'user-agent': CHROME },
    body: {
      session_id: `sess-${randomUUID()}`,
      device_type: 'desktop',
      browser: 'Chrome',
      os: 'macOS',
      user_agent: CHROME,
      ...body,
    },
  });
  expect(res.body.data?.type).toBe('event_recorded');
}

async function count(sql: string): Promise<number> {
  const rows = await (
    await ctx.clickhouse.query({ query: sql, query_params: { w: site.id }, format: 'JSONEachRow' })
  ).json<{ n: string }>();
  return Number(rows[0].n);
}

async function waitUntil(check: () => Promise<boolean>, what: string) {
  const end = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const presence = (n: number, pathname: string, countryCode: string) =>
  recordPresence(
    ctx.redis,
    ctx.config.REDIS_PREFIX,
    Array.from({ length: n }, () => ({
      websiteId: site.id,
      visitorId: randomUUID(),
      pathname,
      countryCode,
      ts: Date.now(),
    })),
  );

/** A real rrweb recording: rrweb's recorder on a small styled page in this browser, with a change a second in. */
async function recordSession(): Promise<unknown[][]> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
  await page.setContent(`<!doctype html><html><head><style>
    body { font-family: sans-serif; margin: 0; background: #fffbe6; }
    h1 { color: rgb(200, 30, 30); padding: 24px; }
  </style></head><body><h1>Recorded pricing page</h1>
  <p style="padding: 0 24px">Plans for every team.</p><button id="buy">Buy now</button></body></html>`);
  await page.addScriptTag({
    content: fs.readFileSync(path.join(PROJECT_ROOT, 'node_modules/@rrweb/record/dist/record.umd.min.cjs'), 'utf8'),
  });
  await page.evaluate(`(() => {
    window.__events = [];
    rrwebRecord.record({ emit: (e) => window.__events.push(e), maskAllInputs: true });
  })()`);
  await sleep(400);
  const first = (await page.evaluate('window.__events.splice(0)')) as unknown[];
  await page.evaluate(`(() => {
    const p = document.createElement('p');
    p.id = 'later';
    p.textContent = 'Added a moment later';
    document.body.appendChild(p);
  })()`);
  await page.mouse.move(200, 200);
  await page.mouse.move(300, 250);
  await sleep(1200);
  await page.mouse.click(310, 260);
  await sleep(300);
  const second = (await page.evaluate('window.__events.splice(0)')) as unknown[];
  await page.close();
  return [first, second];
}

beforeAll(async () => {
  ctx = await createDashboardContext();
  call = client(ctx.baseUrl);
  browser = await launchBrowser();
  owner = await registerUser(ctx, 'pro', 'sections');
  site = await createWebsite(ctx, owner, host);
  const on = await call('PUT', `/api/websites/${site.id}/tracking`, {
    token: owner.token,
    body: { heatmaps: true, session_replay: true },
  });
  expect(on.status).toBe(200);

  const worker = await startTestWorker(ctx);
  try {
    // Heatmap: a cluster around the "Buy" button, a few clicks on the nav, one page with fewer clicks.
    const clicks: [string, number, number, string][] = [];
    for (let i = 0; i < 24; i++) clicks.push(['/pricing', 700 + (i % 5) * 6, 420 + (i % 4) * 5, 'button#buy']);
    for (let i = 0; i < 6; i++) clicks.push(['/pricing', 80 + i * 30, 30, 'nav>a.link']);
    for (let i = 0; i < 3; i++) clicks.push(['/docs', 300, 900 + i * 40, 'main>a.next']);
    for (const [path, x, y, selector] of clicks) {
      await send({
        event_type: 'click',
        url: `https://${host}${path}`,
        x,
        y,
        viewport_width: 1280,
        viewport_height: 800,
        page_height: 2400,
        selector,
      });
    }
    // Errors: two groups, one seen three times.
    for (let i = 0; i < 3; i++) {
      await send({
        event_type: 'error',
        url: `https://${host}/checkout`,
        message: "Cannot read properties of undefined (reading 'price')",
        error_type: 'TypeError',
        stack: 'TypeError: at checkout.js:10:5',
      });
    }
    await send({
      event_type: 'error',
      url: `https://${host}/`,
      message: 'Network request failed',
      error_type: 'Error',
      stack: 'Error: at api.js:3:1',
    });
    // The replay: the recording's two chunks, and a pageview so the session has its visit details.
    await send({ event_type: 'pageview', url: `https://${host}/pricing`, session_id: replaySession });
    const chunks = await recordSession();
    for (const [seq, events] of chunks.entries()) {
      // Chunks arrive as the tracker flushes them, a while apart (the list's duration is their spread).
      if (seq > 0) await sleep(1_500);
      await send({
        event_type: 'replay',
        url: `https://${host}/pricing`,
        session_id: replaySession,
        seq,
        data: JSON.stringify(events),
      });
    }
    await waitUntil(
      async () => (await count('SELECT count() AS n FROM interactions WHERE website_id = {w:UUID}')) === clicks.length,
      'clicks',
    );
    await waitUntil(
      async () => (await count('SELECT count() AS n FROM replay_chunks WHERE website_id = {w:UUID}')) === 2,
      'replay chunks',
    );
    await waitUntil(async () => {
      const r = await ctx.pool.query('SELECT sum(occurrence_count) AS n FROM error_groups WHERE website_id = $1', [
        site.id,
      ]);
      return Number(r.rows[0].n ?? 0) === 4;
    }, 'error groups');
  } finally {
    await worker.stop();
  }
  await presence(2, '/pricing', 'DE');
  await presence(1, '/docs', 'US');
});

afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

const signIn = (page: Page) => signInThroughPage(page, ctx.baseUrl, owner);

const liveNumber = (page: Page) => page.getByTestId('live-visitors').textContent();

it('realtime shows the live visitors and updates by itself as more arrive', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/realtime`);
  await page.getByTestId('live-visitors').waitFor();
  // The three visitors recorded as present, and the one whose pageview went through browser ingestion.
  expect((await liveNumber(page))?.trim()).toBe('4');
  await page.getByRole('region', { name: 'Top pages now' }).getByText('/pricing').waitFor();
  await page.getByRole('region', { name: 'Countries now' }).getByText('Germany').waitFor();
  // The minute chart has a bar for the pageviews just recorded.
  expect(await page.locator('.rt-bar[height]:not([height="0"])').count()).toBeGreaterThan(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'sections-realtime');

  // More visitors arrive; the number follows without a reload (a marker on window would not survive one).
  await page.evaluate('window.__noReload = true');
  await presence(2, '/signup', 'FR');
  const end = Date.now() + 15_000;
  while ((await liveNumber(page))?.trim() !== '6' && Date.now() < end) await sleep(200);
  expect((await liveNumber(page))?.trim()).toBe('6');
  expect(await page.evaluate('window.__noReload')).toBe(true);
  await page.getByRole('region', { name: 'Countries now' }).getByText('France').waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('heatmaps list pages by clicks and draw the chosen page’s click density', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/heatmaps`);
  const pages = page.getByRole('list', { name: 'Pages with clicks' });
  await pages.getByText('/pricing').waitFor();
  expect(await pages.getByRole('button').allTextContents()).toEqual([
    expect.stringMatching(/^\/pricing30/),
    expect.stringMatching(/^\/docs3/),
  ]);
  const canvas = page.getByTestId('heatmap-canvas');
  await canvas.waitFor();
  // Painted pixels, and the colour at the busiest spot (the Buy button, ~55% across, ~18% down).
  const painted = () =>
    page.evaluate(`(() => {
      const c = document.querySelector('[data-testid="heatmap-canvas"]');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
      const x = Math.round(c.width * (712 / 1280));
      const y = Math.round(c.height * (427 / 2400));
      const o = (y * c.width + x) * 4;
      return { painted: n, total: px.length / 4, hot: [px[o], px[o + 1], px[o + 2], px[o + 3]] };
    })()`) as Promise<{ painted: number; total: number; hot: number[] }>;
  const drawn = await painted();
  expect(drawn.painted).toBeGreaterThan(100);
  expect(drawn.painted).toBeLessThan(drawn.total / 2);
  // The hottest spot is at the red end of the scale: far more red than blue.
  expect(drawn.hot[0]).toBeGreaterThan(200);
  expect(drawn.hot[2]).toBeLessThan(80);
  await page.getByRole('region', { name: 'Most clicked elements' }).getByText('button#buy').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'sections-heatmaps');

  // Choosing the other page redraws for it and keeps the choice in the URL.
  await pages.getByRole('button', { name: /\/docs/ }).click();
  await page.getByRole('region', { name: 'Clicks on /docs' }).waitFor();
  await page.getByRole('region', { name: 'Most clicked elements' }).getByText('main>a.next').waitFor();
  expect(new URL(page.url()).searchParams.get('page')).toBe('/docs');
  expect(problems).toEqual([]);
  await context.close();
});

it('replays list the recording and play it in rrweb-player, loaded only when opened', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  const assets: string[] = [];
  page.on('request', (r) => {
    const m = /\/assets\/([^/?]+)$/.exec(r.url());
    if (m) assets.push(m[1]);
  });
  await signIn(page);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/replays`);
  const row = page.getByRole('row', { name: /\/pricing/ });
  await row.waitFor();
  expect(await row.textContent()).toMatch(/Desktop · Chrome · macOS/);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'sections-replays');
  expect(assets.some((a) => a.startsWith('rrweb-player'))).toBe(false);

  await row.getByRole('link', { name: /Play/ }).click();
  const player = page.frameLocator('[data-testid="replay-frame"]');
  const replayed = player.frameLocator('iframe');
  // The recorded page, rebuilt with its own styles (the player document allows them; see dashboard.ts).
  const heading = replayed.getByRole('heading', { name: 'Recorded pricing page' });
  await heading.waitFor({ timeout: 20_000 });
  const rebuilt = page.frames().find((f) => f.parentFrame()?.parentFrame() === page.mainFrame());
  expect(await rebuilt?.evaluate(`getComputedStyle(document.querySelector('h1')).color`)).toBe('rgb(200, 30, 30)');
  // It plays: the change made a second into the recording appears.
  await replayed.getByText('Added a moment later').waitFor({ timeout: 20_000 });
  expect(assets.some((a) => /^rrweb-player\.[A-Z0-9]+\.js$/.test(a))).toBe(true);
  expect(new URL(page.url()).searchParams.get('session')).toBe(replaySession);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'sections-replay-player');
  expect(problems).toEqual([]);
  await context.close();
});

it('errors list the groups and a status change persists', async () => {
  const { page, context, problems } = await watchedPage(browser, ctx.baseUrl);
  await signIn(page);
  await page.goto(`${ctx.baseUrl}/sites/${site.id}/errors`);
  const row = page.getByRole('row', { name: /reading 'price'/ });
  await row.waitFor();
  expect(await row.getByRole('cell').nth(1).textContent()).toBe('3');
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'sections-errors');

  const select = row.getByLabel(/Status of/);
  expect(await select.inputValue()).toBe('unresolved');
  await select.selectOption('resolved');
  await row.getByText('Saved').waitFor();
  const after = await call('GET', `/api/websites/${site.id}/errors`, { token: owner.token });
  const groups = after.body.data.error_groups as { message: string; status: string }[];
  expect(groups.find((g) => g.message.includes("'price'"))?.status).toBe('resolved');
  expect(groups.find((g) => g.message === 'Network request failed')?.status).toBe('unresolved');

  // The Resolved tab lists it; a reload shows the stored status.
  await page.getByRole('tab', { name: 'Resolved', exact: true }).click();
  await page.getByRole('row', { name: /Network request failed/ }).waitFor({ state: 'detached' });
  expect(await page.getByRole('row', { name: /reading 'price'/ }).count()).toBe(1);
  await page.reload();
  expect(
    await page
      .getByRole('row', { name: /reading 'price'/ })
      .getByLabel(/Status of/)
      .inputValue(),
  ).toBe('resolved');
  expect(problems).toEqual([]);
  await context.close();
});

it('every section reads well on a phone and in the dark theme', async () => {
  for (const variant of [
    { name: 'mobile', width: 375, height: 800, colorScheme: 'light' as const },
    { name: 'dark', width: 1280, height: 900, colorScheme: 'dark' as const },
  ]) {
    const { page, context, problems } = await watchedPage(browser, ctx.baseUrl, variant);
    await signIn(page);
    const sections: [string, (p: Page) => Promise<unknown>][] = [
      ['realtime', (p) => p.getByTestId('live-visitors').waitFor()],
      ['heatmaps', (p) => p.getByTestId('heatmap-canvas').waitFor()],
      ['replays', (p) => p.getByRole('row', { name: /\/pricing/ }).waitFor()],
      ['errors', (p) => p.getByRole('row', { name: /Network request failed/ }).waitFor()],
      [
        `replays?session=${replaySession}`,
        (p) =>
          p
            .frameLocator('[data-testid="replay-frame"]')
            .frameLocator('iframe')
            .getByText('Added a moment later')
            .waitFor({ timeout: 20_000 }),
      ],
    ];
    for (const [path, ready] of sections) {
      await page.goto(`${ctx.baseUrl}/sites/${site.id}/${path}`);
      await ready(page);
      expect([path, await accessibilityViolations(page)]).toEqual([path, []]);
      // Nothing wider than the screen (tables scroll inside their box): the elements sticking out, if any.
      const wide = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.parentElement.closest('.table-scroll'))
        .map((e) => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))`);
      expect([path, wide]).toEqual([path, []]);
      await screenshot(page, `sections-${path.replace(/\?.*/, '-player')}-${variant.name}`);
    }
    expect(problems).toEqual([]);
    await context.close();
  }
});
