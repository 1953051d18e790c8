// Dashboard benchmark (issue targets: the whole first load ≤ 150 KB of JavaScript gzipped; the dashboard of
// the 10-million-event site shows its KPIs and chart ≤ 1 s after navigation), embedded mode.
//
//   npx tsc -p tsconfig.json && node dist/bench/dashboard.js [--events 10000000] [--runs 5] [--sizes-only] [--keep]
//
// Sizes: every built asset gzipped, and each page's first load as Chromium fetched it (the encoded bytes of
// the scripts and styles a fresh browser downloads before the page is drawn). Time: a fresh browser context
// (signed in, empty cache) navigates to the site's dashboard; the time from navigation start until the KPI
// cards show numbers and the chart has drawn, median of --runs; the same for an empty website of the same
// instance as the baseline (the app's own cost), with their ratio, and CPU per load of the web role and store.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';
import { generate, rollUp, settleMerges } from './generate';
import { cpuMs, cpuSnapshot, serviceProcesses } from './processes';
import { api, DIST, log, runBenchmark, type Service, startService } from './service';

const TARGET = { firstLoadKb: 150, readyMs: 1000 };
const CHROMIUM = '/usr/bin/chromium';
/** What the readiness check touches in the page (the Node project has no DOM types). */
interface PageDocument {
  querySelectorAll(selector: string): { length: number };
  querySelector(selector: string): unknown;
}

/**
 * The overview is drawn: the six KPI cards hold figures and the chart has its canvas (an empty site shows its
 * advice instead). A function, not a string: the page's CSP refuses eval.
 */
function ready(): number | false {
  const doc = (globalThis as unknown as { document: PageDocument }).document;
  const drawn =
    doc.querySelectorAll('.kpi .kpi-value').length === 6 &&
    Boolean(doc.querySelector('.chart canvas') || doc.querySelector('.overview .state-empty'));
  return drawn && (globalThis as unknown as { performance: { now(): number } }).performance.now();
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function assetSizes(): { name: string; raw: number; gzip: number }[] {
  const dir = path.join(DIST, 'web', 'assets');
  return fs
    .readdirSync(dir)
    .map((name) => {
      const body = fs.readFileSync(path.join(dir, name));
      return { name, raw: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length };
    })
    .sort((a, b) => b.gzip - a.gzip);
}

function printSizes(): void {
  const sizes = assetSizes();
  const width = Math.max(...sizes.map((s) => s.name.length));
  console.log(`\nBuilt assets (${sizes.length}), gzipped:`);
  for (const s of sizes) console.log(`  ${s.name.padEnd(width)} │ ${kb(s.gzip).padStart(9)} │ raw ${kb(s.raw)}`);
}

async function signedInState(browser: Browser, service: Service): Promise<string> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${service.base}/login`);
  await page.getByLabel('Email').fill(`bench-${service.id}@example.com`);
  await page.getByLabel('Password').fill(`bench password ${service.id}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${service.base}/sites`);
  const file = path.join(DIST, `dashboard-bench-state-${service.id}.json`);
  await context.storageState({ path: file });
  await context.close();
  return file;
}

interface Load {
  readyMs: number;
  /** The API requests of the load: path (and v2's dimensions), start and duration, ms from navigation. */
  requests: string[];
  /** Encoded (gzipped) bytes of scripts, and of styles, fetched for the page. */
  js: number;
  css: number;
}

async function loadOnce(browser: Browser, state: string, url: string): Promise<Load> {
  const context = await browser.newContext({ storageState: state, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(ready, undefined, {
    polling: 'raf',
    timeout: 60_000,
  });
  const readyMs = (await handle.jsonValue()) as number;
  // The panels' questions finish before the next load: each navigation is timed on an otherwise idle server
  // (the embedded store runs one query at a time and finishes what a closed page asked).
  await page.waitForLoadState('networkidle');
  const requests = (await page.evaluate(`performance.getEntriesByType('resource')
    .filter((e) => new URL(e.name).pathname.startsWith('/api/'))
    .map((e) => new URL(e.name).pathname + ' @' + Math.round(e.startTime) + ' +' + Math.round(e.duration))`)) as string[];
  const bytes = (await page.evaluate(`(() => {
    const sum = (ext) => performance.getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname.endsWith(ext)).reduce((n, e) => n + e.encodedBodySize, 0);
    return { js: sum('.js'), css: sum('.css') };
  })()`)) as { js: number; css: number };
  await context.close();
  return { readyMs, requests, ...bytes };
}

async function timeLoads(browser: Browser, service: Service, state: string, url: string, runs: number) {
  await loadOnce(browser, state, url); // warm the server's caches, as a reader's second visit finds them
  const procs = serviceProcesses(service.supervisorPid);
  const before = cpuSnapshot(procs);
  const loads: Load[] = [];
  for (let i = 0; i < runs; i++) loads.push(await loadOnce(browser, state, url));
  const cpu = cpuMs(before, cpuSnapshot(procs));
  return {
    readyMs: median(loads.map((l) => l.readyMs)),
    all: loads.map((l) => Math.round(l.readyMs)),
    js: median(loads.map((l) => l.js)),
    css: median(loads.map((l) => l.css)),
    cpu: { web: (cpu.web ?? NaN) / runs, store: (cpu.store ?? NaN) / runs },
    requests: loads[loads.length - 1].requests,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      runs: { type: 'string' },
      'sizes-only': { type: 'boolean' },
      keep: { type: 'boolean' },
    },
  });
  printSizes();
  if (values['sizes-only']) return 0;
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 5);
  const service = await startService({ name: 'dashbench' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const started = Date.now();
    const stored = await generate(service, target);
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    log(await rollUp(service));
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    const state = await signedInState(browser, service);
    const login = await api(service.base, 'POST', '/api/auth/login', {
      email: `bench-${service.id}@example.com`,
      password: `bench password ${service.id}`,
    });
    const empty = await api(
      service.base,
      'POST',
      '/api/websites',
      { domain: 'empty.example.com', name: 'Empty', timezone: 'UTC' },
      login.json.data.token,
    );
    if (empty.status !== 201) throw new Error(`create website: ${empty.status}`);

    const baseline = await timeLoads(
      browser,
      service,
      state,
      `${service.base}/sites/${empty.json.data.website.id}`,
      runs,
    );
    const full = await timeLoads(browser, service, state, `${service.base}/sites/${service.website.id}`, runs);
    fs.rmSync(state, { force: true });

    const firstLoad = full.js;
    console.log(`\nDashboard of the ${(stored / 1e6).toFixed(1)}M-event site, range 30d, ${runs} fresh loads each:`);
    console.log(`  page                 │ KPIs + chart p50 │ runs (ms)                 │ CPU web / store per load`);
    for (const [name, r] of [
      ['empty site (baseline)', baseline],
      [`${(stored / 1e6).toFixed(0)}M-event site`, full],
    ] as const) {
      console.log(
        `  ${name.padEnd(20)} │ ${`${r.readyMs.toFixed(0)} ms`.padStart(16)} │ ${r.all.join(', ').padEnd(25)} │ ${r.cpu.web.toFixed(0)} / ${r.cpu.store.toFixed(0)} ms`,
      );
    }
    console.log(`  the last load's API requests (start, duration after navigation):`);
    for (const r of full.requests) console.log(`    ${r}`);
    console.log(`  ratio 10M / empty: ${(full.readyMs / baseline.readyMs).toFixed(2)}×`);
    console.log(`  first load: ${kb(firstLoad)} JavaScript + ${kb(full.css)} CSS (gzipped, as fetched)`);
    const pass = firstLoad <= TARGET.firstLoadKb * 1024 && full.readyMs <= TARGET.readyMs;
    console.log(
      `\ntargets: first load ≤ ${TARGET.firstLoadKb} KB JS → ${firstLoad <= TARGET.firstLoadKb * 1024 ? 'PASS' : 'MISS'}; KPIs and chart ≤ ${TARGET.readyMs} ms → ${full.readyMs <= TARGET.readyMs ? 'PASS' : 'MISS'}`,
    );
    return pass ? 0 : 2;
  } finally {
    await browser.close();
    await service.stop(values.keep);
  }
}

runBenchmark(main);
