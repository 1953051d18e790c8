// The nightly insights job on a generated website, embedded mode (issue 25: retention, LTV and insights
// together ≤ 60 s for the 10-million-event website). Generates events over 90 days with goals, purchases and
// JavaScript errors, rolls them up as the clock would, then times the job for that website and yesterday,
// first run and repeats (a repeat rewrites nothing: the same rows).
//
//   npx tsc -p tsconfig.json && node dist/bench/insights.js [--events 200000] [--runs 5] [--keep]
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { insightsJob } from '../jobs/insights';
import { createLogger } from '../lib/log';
import { generateBrowserData, generateEvents, generatePurchases, rawTailHours, rollUp, settleMerges } from './generate';
import { log, runBenchmark, startService } from './service';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs ?? 5);
  const service = await startService({ name: 'insightsbench' });
  const pool = new Pool({ connectionString: service.env.DATABASE_URL, max: 4 });
  try {
    const gen = await generateEvents(service, Number(values.events ?? 200_000));
    const purchases = await generatePurchases(service, gen);
    const browser = await generateBrowserData(service, gen);
    for (const name of ['Signup', 'Newsletter'])
      await pool.query("INSERT INTO goals (website_id, name, kind) VALUES ($1, $2, 'event')", [
        service.website.id,
        name,
      ]);
    log(await rollUp(service));
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);

    const ctx = { pool, clickhouse: service.clickhouse, logger: createLogger('silent', 'bench') };
    const times: number[] = [];
    let written = 0;
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const run = await insightsJob(ctx, { websiteId: service.website.id });
      times.push(performance.now() - started);
      written = run.insights;
    }
    const sorted = [...times].sort((a, b) => a - b);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const lines = [
      `Tidemark insights job — embedded store, one website: ${gen.events.toLocaleString('en-US')} events, ${purchases.toLocaleString('en-US')} purchases, ${browser.errors.toLocaleString('en-US')} errors over 90 days`,
      `(${new Date().toISOString()}: the last ${await rawTailHours(service)} hours read raw, the rest from rollups; ${written} insights written)`,
      '',
      `first run ${s(times[0])} │ median of ${runs} ${s(sorted[Math.floor(runs / 2)])} │ slowest ${s(sorted[runs - 1])}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await pool.end();
    await service.stop(values.keep);
  }
}

runBenchmark(main);
