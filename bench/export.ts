// Whole-site CSV export benchmark, embedded mode (issue 22 target: the export of 30 days of the 10-million-event
// dataset ≤ 5 s).
//
//   npx tsc -p tsconfig.json && node dist/bench/export.js [--events 10000000] [--runs 3] [--keep]
//
// Starts the whole service on fresh resources and fills one website as bench/stats.ts does (generated events
// over 90 days, rolled up as the clock would). Then, one request at a time, after one warm-up each: the export
// GET /api/external/v2/export?period=30d, its bytes read as they arrive (wall time to the last byte, bytes, CPU
// per role), and the same files asked for as JSON — each CSV's breakdown or timeseries request — summed, for the
// ratio export / JSON. Checks the archive with `unzip -t` and prints each file's rows.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SITE_EXPORT } from '../lib/export/site';
import { generate, rawTailHours, rollUp, settleMerges } from './generate';
import { cpuMs, cpuSnapshot, serviceProcesses } from './processes';
import { log, runBenchmark, type Service, startService } from './service';

const TARGET_MS = 5000;

// ---- the requests --------------------------------------------------------------------------------------

/** GETs `path`, reading the body as it arrives; wall time to the last byte and the body. */
async function timedGet(service: Service, urlPath: string): Promise<{ ms: number; body: Buffer; status: number }> {
  const started = process.hrtime.bigint();
  const res = await fetch(service.base + urlPath, { headers: { 'x-api-key': service.key } });
  const parts: Buffer[] = [];
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const body = Buffer.concat(parts);
  if (res.status !== 200) throw new Error(`GET ${urlPath}: HTTP ${res.status} ${body.toString('utf8').slice(0, 500)}`);
  return { ms, body, status: res.status };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 3);
  const service = await startService({ name: 'exportbench' });
  try {
    const started = Date.now();
    const stored = await generate(service, target);
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const rolling = Date.now();
    log(`${await rollUp(service)} in ${((Date.now() - rolling) / 1000).toFixed(1)} s`);
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);

    const common = `site_id=${service.website.id}&period=30d`;
    const exportPath = `/api/external/v2/export?${common}`;
    // The JSON requests that answer the same files (a JSON breakdown gives at most 1,000 rows a page).
    const jsonPaths = SITE_EXPORT.map((f) =>
      f.property
        ? `/api/external/v2/stats/breakdown?${common}&metrics=${f.metrics.join(',')}&property=${f.property}&limit=1000`
        : `/api/external/v2/stats/timeseries?${common}&metrics=${f.metrics.join(',')}&interval=day`,
    );
    const procs = serviceProcesses(service.supervisorPid);

    await timedGet(service, exportPath); // warm-up
    const exports: { ms: number; bytes: number; cpu: Partial<Record<string, number>> }[] = [];
    let archive: Buffer = Buffer.alloc(0);
    for (let i = 0; i < runs; i++) {
      const before = cpuSnapshot(procs);
      const r = await timedGet(service, exportPath);
      exports.push({ ms: r.ms, bytes: r.body.length, cpu: cpuMs(before, cpuSnapshot(procs)) });
      archive = r.body;
      log(`export run ${i + 1}: ${fmt(r.ms)}, ${r.body.length.toLocaleString('en-US')} bytes`);
    }
    for (const p of jsonPaths) await timedGet(service, p); // warm-up
    const sums: number[] = [];
    const jsonBytes: number[] = [];
    for (let i = 0; i < runs; i++) {
      let sum = 0;
      let bytes = 0;
      for (const p of jsonPaths) {
        const r = await timedGet(service, p);
        sum += r.ms;
        bytes += r.body.length;
      }
      sums.push(sum);
      jsonBytes.push(bytes);
      log(`JSON run ${i + 1}: ${fmt(sum)} for ${jsonPaths.length} requests`);
    }

    // The archive of the last run, checked by unzip; rows per file.
    const file = path.join(os.tmpdir(), `tidemark-export-bench-${service.id}.zip`);
    fs.writeFileSync(file, archive);
    const tested = execFileSync('unzip', ['-t', file], { encoding: 'utf8' });
    const listing = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n');
    const rows = listing.map((name) => {
      const text = execFileSync('unzip', ['-p', file, name], { encoding: 'utf8', maxBuffer: 1 << 30 });
      return `${name} ${text.split('\r\n').length - 2}`;
    });
    fs.rmSync(file, { force: true });

    const best = exports.reduce((a, b) => (b.ms < a.ms ? b : a));
    const exportMs = median(exports.map((e) => e.ms));
    const jsonMs = median(sums);
    const roles = Object.entries(best.cpu)
      .map(([role, ms]) => `${role} ${fmt(ms ?? 0)}`)
      .join(', ');
    const lines = [
      `Tidemark whole-site export benchmark — embedded store, ${stored.toLocaleString('en-US')} events over 90 days, period=30d, ${runs} runs after a warm-up`,
      `(${new Date().toISOString()}: the last ${await rawTailHours(service)} hours of the range are read raw, the rest from rollups)`,
      '',
      `${`export (ZIP of ${SITE_EXPORT.length} CSVs)`.padEnd(26)} │ median ${fmt(exportMs)} (runs: ${exports.map((e) => fmt(e.ms)).join(', ')}) │ target ${fmt(TARGET_MS)} │ ${exportMs <= TARGET_MS ? 'PASS' : 'MISS'}`,
      `bytes                      │ ${best.bytes.toLocaleString('en-US')} zipped; the JSON answers ${median(jsonBytes).toLocaleString('en-US')}`,
      `CPU per role (fastest run) │ ${roles}`,
      `same files as JSON         │ median sum ${fmt(jsonMs)} over ${jsonPaths.length} requests (runs: ${sums.map(fmt).join(', ')})`,
      `ratio export / JSON        │ ${(exportMs / jsonMs).toFixed(2)}`,
      `archive                    │ ${/No errors detected/.test(tested) ? 'unzip -t: no errors' : 'unzip -t: ERRORS'}; rows: ${rows.join(', ')}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return exportMs <= TARGET_MS && /No errors detected/.test(tested) ? 0 : 1;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
