// The dashboard behind a reverse proxy that serves it under a path prefix (PUBLIC_URL=http://host/analytics,
// the proxy forwarding /analytics/* with the prefix removed): pages, assets, API calls and links all keep
// the prefix, and signing in works through it.
import http from 'node:http';
import type { Browser } from 'playwright-core';
import {
  accessibilityViolations,
  createDashboardContext,
  freePort,
  launchBrowser,
  screenshot,
  watchedPage,
} from '../../helpers/browser';
import type { TestContext } from '../../helpers/context';

let ctx: TestContext;
let browser: Browser;
let proxy: http.Server;
let publicUrl: string;
const PREFIX = '/analytics';

jest.setTimeout(90_000);

beforeAll(async () => {
  const proxyPort = await freePort();
  publicUrl = `http://127.0.0.1:${proxyPort}${PREFIX}`;
  ctx = await createDashboardContext({ PUBLIC_URL: publicUrl });
  const upstream = new URL(ctx.baseUrl);
  proxy = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url !== PREFIX && !url.startsWith(`${PREFIX}/`)) {
      res.writeHead(404).end('not under the prefix');
      return;
    }
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: url.slice(PREFIX.length) || '/',
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', () => resolve()));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  proxy?.close();
  await ctx?.close();
});

it('runs the first-run set-up and signs in under the prefix', async () => {
  const { page, context, problems } = await watchedPage(browser, `http://127.0.0.1:${new URL(publicUrl).port}`);
  const requested: string[] = [];
  page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  await page.goto(`${publicUrl}/`);
  await page.waitForURL(`${publicUrl}/setup`);
  await page.getByLabel('Email').fill('owner@example.com');
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create owner account' }).click();
  await page.waitForURL(`${publicUrl}/sites/new`);
  // Every request the app made stayed under the prefix (assets, API calls).
  expect(requested.filter((p) => !p.startsWith(`${PREFIX}/`))).toEqual([]);
  expect(requested).toEqual(expect.arrayContaining([expect.stringMatching(/^\/analytics\/assets\/main\./)]));
  expect(requested).toContain(`${PREFIX}/api/auth/register`);
  // Links carry the prefix.
  expect(await page.getByRole('link', { name: 'Sites' }).getAttribute('href')).toBe(`${PREFIX}/sites`);
  await page.reload();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'path-prefix');
  expect(problems).toEqual([]);
  await context.close();
});
