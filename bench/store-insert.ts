// The embedded engine alone: CPU per row of inserting the ingest benchmark's rows into `events_ingest`, by
// payload format, and what background merges add. One process holds chDB (no HTTP, no Redis), so the
// process's CPU time is the engine's (all its threads) plus a little of Node's.
//
//   npx tsc -p tsconfig.json && node dist/bench/store-insert.js [--rows 24000] [--rounds 8] [--merge-inserts 30]
//
// 1. Formats, merges stopped: the same rows as JSONCompactEachRow (raw insert, the text alternative) and as
//    RowBinary (read by file(), what ingest jobs carry and the store does with them), alternated --rounds times;
//    prints the median CPU µs per row and wall ms per insert of each.
// 2. Merges: --merge-inserts RowBinary inserts of 50,000 rows, one a second, with merges running, then waits
//    until no merge has run for 8 s; prints CPU µs per row during the load and until settled.
// Rows come from the API's own pipeline (lib/ingest/accept/pipeline.ts with in-memory stand-ins) fed with the load
// generator's batches, so they are the rows the service writes; their JSON lines are written by the engine.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Session } from 'chdb';
import { readMigrations, renderClickHouseSql, splitStatements } from '../lib/db/migrate';
import { openEnrichers } from '../lib/ingest/accept/enrichers';
import { ingestServerBatch } from '../lib/ingest/accept/pipeline';
import { ingestBatchSchema } from '../lib/ingest/accept/serverSchemas';
import { EVENT_ROW_TYPES, eventRowSpans, ROW_BINARY_COLUMNS } from '../lib/ingest/job/rowBinary';
import { buildTemplates, renderBody } from './ingest-load';
import { standInDeps, standInPrincipal } from './pipeline-standins';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMicros = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** `count` event rows as the API builds them: ingest job payloads (RowBinary, ROW_BINARY_COLUMNS order). */
async function buildRows(count: number): Promise<Buffer> {
  const website = { id: randomUUID(), team_id: randomUUID(), domain: 'shop.example.com', tracking_code: 'bench' };
  const enrichers = await openEnrichers({});
  const payloads: Buffer[] = [];
  const deps = standInDeps(website, enrichers, async (_id, job) => {
    payloads.push(job.payload);
  });
  const principal = standInPrincipal(website);
  const templates = buildTemplates(96, 1000, website.tracking_code);
  let built = 0;
  for (let i = 0; built < count; i++) {
    const batch = ingestBatchSchema.parse(
      JSON.parse(renderBody(templates[i % templates.length], Date.now(), undefined)),
    );
    built += (await ingestServerBatch(deps, { principal, batch, gpc: false })).acceptedCount;
  }
  enrichers.geo.close();
  const all = Buffer.concat(payloads);
  return all.subarray(0, eventRowSpans(all)[count - 1].end);
}

function openEngine(dir: string): Session {
  const session = new Session(path.join(dir, 'db'));
  session.query('CREATE DATABASE IF NOT EXISTS bench');
  session.query('USE bench');
  // The same rows go in again and again: no insert may be skipped as a duplicate block.
  session.query('SET insert_deduplicate = 0');
  for (const m of readMigrations('clickhouse'))
    for (const st of splitStatements(renderClickHouseSql(m.sql))) session.query(st);
  return session;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '24000' },
      rounds: { type: 'string', default: '8' },
      'merge-inserts': { type: 'string', default: '30' },
    },
  });
  const rows = Number(values.rows);
  const rounds = Number(values.rounds);
  const mergeInserts = Number(values['merge-inserts']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-store-insert-'));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const rowBinary = await buildRows(rows);
    const file = path.join(dir, 'rows.bin');
    fs.writeFileSync(file, rowBinary);
    const structure = ROW_BINARY_COLUMNS.map((c, i) => `${c} ${EVENT_ROW_TYPES[i]}`).join(', ');
    const fromFile = (f: string) => `file('${f}', 'RowBinary', '${structure.replace(/'/g, "\\'")}')`;
    const session = openEngine(dir);
    session.query('SYSTEM STOP MERGES');
    // The same rows as JSON lines, written by the engine itself.
    const json = session.query(`SELECT * FROM ${fromFile(file)}`, 'JSONCompactEachRow');
    out(
      `rows per insert ${rows.toLocaleString('en-US')}: JSONCompactEachRow ${json.length.toLocaleString('en-US')} B, RowBinary ${rowBinary.length.toLocaleString('en-US')} B`,
    );
    const formats = {
      JSONCompactEachRow: () =>
        session.insert({
          table: 'events_ingest',
          columns: [...ROW_BINARY_COLUMNS],
          format: 'JSONCompactEachRow',
          values: Buffer.from(json),
        }),
      RowBinary: () =>
        session.queryAsync(
          `INSERT INTO events_ingest (${ROW_BINARY_COLUMNS.join(', ')}) SELECT * FROM ${fromFile(file)}`,
        ),
    };
    const results = new Map<string, { cpu: number[]; wall: number[] }>(
      Object.keys(formats).map((f) => [f, { cpu: [], wall: [] }]),
    );
    for (let round = 0; round <= rounds; round++) {
      for (const [name, run] of Object.entries(formats)) {
        const cpu = process.cpuUsage();
        const wall = process.hrtime.bigint();
        await run();
        // Round 0 warms up and is not counted.
        if (round === 0) continue;
        results.get(name)!.cpu.push(cpuMicros(cpu) / rows);
        results.get(name)!.wall.push(Number(process.hrtime.bigint() - wall) / 1e6);
      }
    }
    out('format               CPU µs per row (median, range)   wall ms per insert (median)');
    for (const [name, r] of results) {
      out(
        `${name.padEnd(20)} ${median(r.cpu).toFixed(2).padStart(6)} (${Math.min(...r.cpu).toFixed(2)}–${Math.max(...r.cpu).toFixed(2)})            ${median(r.wall).toFixed(0)}`,
      );
    }
    session.close();

    // Merges: a fresh engine, RowBinary inserts of 50,000 rows a second with merges running.
    const mergeRows = 50_000;
    const bigFile = path.join(dir, 'rows-50k.bin');
    fs.writeFileSync(bigFile, await buildRows(mergeRows));
    const merging = openEngine(path.join(dir, 'merging'));
    const cpu = process.cpuUsage();
    const started = Date.now();
    for (let i = 0; i < mergeInserts; i++) {
      const wait = started + i * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await merging.queryAsync(
        `INSERT INTO events_ingest (${ROW_BINARY_COLUMNS.join(', ')}) SELECT * FROM ${fromFile(bigFile)}`,
      );
    }
    const duringLoad = cpuMicros(cpu);
    for (let quiet = 0; quiet < 8; ) {
      await new Promise((r) => setTimeout(r, 1000));
      quiet = Number(merging.query('SELECT count() FROM system.merges', 'TSV')) === 0 ? quiet + 1 : 0;
    }
    const settled = cpuMicros(cpu);
    const parts = merging
      .query("SELECT count() FROM system.parts WHERE active AND database = 'bench' AND table = 'events'", 'TSV')
      .trim();
    const total = mergeRows * mergeInserts;
    out(
      `merges running, ${mergeInserts} inserts of 50,000 rows a second: ${(duringLoad / total).toFixed(2)} µs CPU per row during the load, ` +
        `${(settled / total).toFixed(2)} until merges settled (${parts} parts of events left)`,
    );
    merging.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`store-insert failed: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
