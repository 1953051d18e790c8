// The dashboard in a real browser: Debian's Chromium driven by playwright-core, a server whose PUBLIC_URL is
// its own address (sign-in refuses requests from any other origin), and the checks every journey makes —
// no request of the dashboard's answered 4xx/5xx, no console error (a CSP violation is one), no serious
// accessibility violation (axe-core), and a screenshot of each page kept under test-artifacts/web/.
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../lib/paths';
import { createTestContext, type TestContext } from './context';

const CHROMIUM = '/usr/bin/chromium';
export const WEB_ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'web');
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A test context served at a PUBLIC_URL equal to its own address (path prefix optional). */
export async function createDashboardContext(overrides: Record<string, string> = {}): Promise<TestContext> {
  const port = await freePort();
  return createTestContext({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...overrides });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Requests to the server answered 4xx/5xx, console errors and uncaught page errors, as they happened. */
  problems: string[];
}

/** A page in a fresh browser context (its own cookies), watched for failed requests and errors. */
export async function watchedPage(
  browser: Browser,
  baseUrl: string,
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('response', (res) => {
    if (res.url().startsWith(baseUrl) && res.status() >= 400)
      problems.push(`${res.request().method()} ${res.url().slice(baseUrl.length)} → ${res.status()}`);
  });
  page.on('console', (m) => {
    // Failed loads are reported as responses above, with their method and path.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return { page, context, problems };
}

/** Signs in through the login page (then on to `next`, by default the sites list). */
export async function signInThroughPage(
  page: Page,
  baseUrl: string,
  user: { email: string; password?: string },
  next = '/sites',
): Promise<void> {
  await page.goto(`${baseUrl}/login${next === '/sites' ? '' : `?next=${encodeURIComponent(next)}`}`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password ?? 'password-123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}${next}`);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(WEB_ARTIFACTS, { recursive: true });
  const file = path.join(WEB_ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now, as readable lines. axe is evaluated
 * through the DevTools protocol, which the page's Content-Security-Policy does not apply to.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE_SOURCE};0`);
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
