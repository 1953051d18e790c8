// Retention benchmark, embedded mode (issue 25 targets, over the 10-million-event dataset: the nightly job's
// share of the 60 s that retention, LTV and insights have together, and GET /retention ≤ 200 ms p50 and
// ≤ 500 ms p99 over its default range).
//
//   npx tsc -p tsconfig.json && node dist/bench/retention.js [--events 10000000] [--runs 30] [--keep]
//
// Fills one website as bench/stats.ts does (bench/generate.ts: 90 days, every visitor a server-sent id, 2.5
// visits each), runs the retention job body for that website three times in this process against the
// service's store and database (the figure is the job's wall time: the store's aggregate and the PostgreSQL
// write), then times the endpoint over HTTP, one request at a time.
import { parseArgs } from 'node:util';
import { retention } from '../jobs/retention';
import { createPool } from '../lib/db/pool';
import { createLogger } from '../lib/log';
import { generate } from './generate';
import { log, runBenchmark, startService, timeGet, timingHeader, timingRow } from './service';

const TARGET = { p50: 200, p99: 500 };

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs ?? 30);
  const service = await startService({ name: 'retentionbench' });
  const pool = createPool(service.env.DATABASE_URL ?? '', 2);
  try {
    const started = Date.now();
    const stored = await generate(service, Number(values.events ?? 10_000_000));
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const ctx = { pool, clickhouse: service.clickhouse, logger: createLogger('warn', 'bench') };
    const jobMs: number[] = [];
    let rows = 0;
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      rows = (await retention(ctx, { websiteId: service.website.id })).rows;
      jobMs.push(Date.now() - t);
    }
    const W = `/api/external/v1/retention/${service.website.id}`;
    const width = 40;
    const results: [string, Awaited<ReturnType<typeof timeGet>>][] = [
      ['retention (weekly, 30d, 6 periods)', await timeGet(service, W, runs)],
      ['retention daily, 90d, 12 periods', await timeGet(service, `${W}?granularity=daily&range=90d&periods=12`, runs)],
    ];
    process.stdout.write(
      `\nRetention over ${stored.toLocaleString('en-US')} events\n` +
        `job (one website, ${rows} cohort rows): ${jobMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')}\n\n`,
    );
    process.stdout.write(`${timingHeader(width)}\n`);
    for (const [name, r] of results) process.stdout.write(`${timingRow(name, width, r, TARGET)}\n`);
    return results.every(([, r]) => r.status === 200) ? 0 : 1;
  } finally {
    await pool.end();
    await service.stop(values.keep);
  }
}

runBenchmark(main);
