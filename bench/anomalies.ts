// Anomaly job benchmark, embedded mode (issue 25 target, over the 10-million-event dataset: the hourly job
// ≤ 5 s per website). Fills one website as bench/stats.ts does (bench/generate.ts: 90 days), adds an event goal
// and a page goal, rolls closed days up, then times the job's body for that website: the hourly run (the last
// complete hour against the same hour of the 4 weeks before) and a re-run of yesterday's 24 hours.
//
//   npx tsc -p tsconfig.json && node dist/bench/anomalies.js [--events 10000000] [--runs 10] [--keep]
import { parseArgs } from 'node:util';
import { detectAnomalies } from '../jobs/anomalies';
import { createPool } from '../lib/db/pool';
import { createLogger } from '../lib/log';
import { generate, rollUp, settleMerges } from './generate';
import { log, runBenchmark, startService } from './service';

const TARGET_MS = 5_000;
const HOUR = 3_600_000;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs ?? 10);
  const service = await startService({ name: 'anomalybench' });
  const pool = createPool(service.env.DATABASE_URL ?? '', 4);
  try {
    const started = Date.now();
    const stored = await generate(service, Number(values.events ?? 10_000_000));
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    log(await rollUp(service));
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    const site = service.website.id;
    await pool.query(
      `INSERT INTO goals (website_id, name, kind, path) VALUES ($1, 'Signup', 'event', NULL), ($1, 'Pricing', 'page', '/p/2*')`,
      [site],
    );
    const deps = { pool, clickhouse: service.clickhouse, logger: createLogger('silent', 'bench') };
    const hourly: number[] = [];
    const now = Date.now();
    for (let i = 0; i < runs; i++) {
      // Each run judges another hour of the last days (a cold hour each time, as the hourly job sees it).
      const t0 = performance.now();
      await detectAnomalies(deps, { websiteId: site }, now - i * 5 * HOUR);
      hourly.push(performance.now() - t0);
    }
    const yesterday = new Date(now - 24 * HOUR).toISOString().slice(0, 10);
    const t0 = performance.now();
    const day = await detectAnomalies(deps, { websiteId: site, date: yesterday }, now);
    const dayMs = performance.now() - t0;
    const sorted = [...hourly].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)];
    const max = sorted[sorted.length - 1];
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM anomalies WHERE website_id = $1', [
      site,
    ]);
    const lines = [
      `Tidemark anomaly job benchmark — embedded store, ${stored.toLocaleString('en-US')} events over 90 days, 2 goals`,
      '',
      `hourly run, one website (${runs} hours):  p50 ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms   target ≤ ${TARGET_MS} ms ${max <= TARGET_MS ? 'ok' : 'MISSED'}`,
      `re-run of ${yesterday} (${day.hours} hours):  ${dayMs.toFixed(0)} ms`,
      `anomalies stored: ${rows[0].n}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return max <= TARGET_MS ? 0 : 1;
  } finally {
    await pool.end();
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
