// External API read benchmark, embedded mode (issue target: with the Stats API benchmark's 10-million-event
// data, each read endpoint over range=30d answers in ≤ 150 ms p50 and ≤ 400 ms p99).
//
//   npx tsc -p tsconfig.json && node dist/bench/external.js [--events 10000000] [--runs 30] [--keep]
//
// Starts the whole service on fresh resources (bench/service.ts: the team is moved to enterprise and its
// limits lifted with `tidemark admin plan` / `tidemark admin limits --rpm unlimited --monthly unlimited`, so
// rate limits never interfere), fills one website with the generated events and browser data
// (bench/generate.ts: heatmap clicks, replay chunks, error events and error groups), then times each read
// endpoint over HTTP with the full_access key (x-api-key), one request at a time: 3 warm-ups, then --runs.
import { parseArgs } from 'node:util';
import { generateBrowserData, generateEvents, rollUp } from './generate';
import { percentile } from './ingest-load';
import { log, startService, type Service } from './service';

const TARGET = { p50: 150, p99: 400 };

interface Timing {
  p50: number;
  p99: number;
  /** 200, or the last non-200 status seen (warm-ups included). */
  status: number;
  /** The first non-200 reply's body, if any. */
  failure?: string;
}

async function time(service: Service, path: string, runs: number): Promise<Timing> {
  const url = `${service.base}${path}`;
  const headers = { 'x-api-key': service.key };
  let status = 200;
  let failure: string | undefined;
  const once = async (): Promise<number> => {
    const t = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    const body = await res.text();
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (res.status !== 200) {
      status = res.status;
      failure ??= `HTTP ${res.status} ${body.slice(0, 600)}`;
    }
    return ms;
  };
  for (let i = 0; i < 3; i++) await once(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(await once());
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), status, failure };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } } });
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 30);
  if (!(target > 0) || !(runs > 0)) throw new Error('--events and --runs must be positive numbers');
  const service = await startService({ name: 'extbench' });
  try {
    let started = Date.now();
    const gen = await generateEvents(service, target);
    log(`generated ${gen.events.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    // The clock keeps closed days rolled up in a running deployment; do now what it would have done.
    const rolling = Date.now();
    log(`${await rollUp(service)} in ${((Date.now() - rolling) / 1000).toFixed(1)} s`);
    const browser = await generateBrowserData(service, gen);
    log(
      `generated ${browser.interactions.toLocaleString('en-US')} clicks, ${browser.replaySessions.toLocaleString('en-US')} replayed sessions ` +
        `(${browser.replayChunks.toLocaleString('en-US')} chunks), ${browser.errors.toLocaleString('en-US')} errors in ` +
        `${browser.errorGroups} groups in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const id = service.website.id;
    const v1 = '/api/external/v1';
    const cases: [string, string][] = [
      ['GET /usage', `${v1}/usage`],
      ['GET /websites', `${v1}/websites`],
      ['GET /websites/{id}', `${v1}/websites/${id}`],
      ['GET /analytics/{id}', `${v1}/analytics/${id}?range=30d`],
      ['GET /analytics/{id}/visitors', `${v1}/analytics/${id}/visitors?range=30d`],
      ['GET /analytics/{id}/pages', `${v1}/analytics/${id}/pages?range=30d`],
      ['GET /analytics/{id}/countries', `${v1}/analytics/${id}/countries?range=30d`],
      ['GET /analytics/{id}/technology', `${v1}/analytics/${id}/technology?range=30d`],
      ['GET /heatmaps/{id}/pages', `${v1}/heatmaps/${id}/pages`],
      ['GET /replays/{id}/sessions', `${v1}/replays/${id}/sessions`],
      ['GET /errors/{id}/groups', `${v1}/errors/${id}/groups`],
      ['GET /track/realtime/{id}', `${v1}/track/realtime/${id}`],
    ];
    const lines = [
      `Tidemark External API read benchmark — embedded store, ${gen.events.toLocaleString('en-US')} events over 90 days ` +
        `(+ ${browser.interactions.toLocaleString('en-US')} clicks, ${browser.replaySessions.toLocaleString('en-US')} replays, ` +
        `${browser.errors.toLocaleString('en-US')} errors in ${browser.errorGroups} groups), range=30d, ${runs} sequential runs each`,
      '',
      `${'endpoint'.padEnd(32)} │ ${'p50'.padStart(8)} │ ${'p99'.padStart(8)} │ target p50 / p99 │ result`,
    ];
    const failures: string[] = [];
    for (const [name, path] of cases) {
      const r = await time(service, path, runs);
      const pass = r.status === 200 && r.p50 <= TARGET.p50 && r.p99 <= TARGET.p99;
      lines.push(
        `${name.padEnd(32)} │ ${`${r.p50.toFixed(0)} ms`.padStart(8)} │ ${`${r.p99.toFixed(0)} ms`.padStart(8)} │ ${`${TARGET.p50} / ${TARGET.p99} ms`.padEnd(16)} │ ${r.status !== 200 ? `HTTP ${r.status}` : pass ? 'PASS' : 'MISS'}`,
      );
      log(lines[lines.length - 1]);
      if (r.failure) failures.push(`${name} (${path}): ${r.failure}`);
    }
    if (failures.length) lines.push('', 'Non-200 replies:', ...failures.map((f) => `  ${f}`));
    process.stdout.write(`${lines.join('\n')}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`benchmark failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
