// Lifetime-value benchmark, embedded mode (issue 25 targets, over the 10-million-event dataset: the endpoint
// ≤ 200 ms p50 and ≤ 500 ms p99; the nightly job is one part of retention + LTV + insights ≤ 60 s). Generates
// events and purchases (one in ten in EUR, one in twenty refunded), sets an EUR rate with the CLI, times the
// job body for the website (in this process, against the service's stores), then the endpoint over HTTP.
//
//   npx tsc -p tsconfig.json && node dist/bench/ltv.js [--events 10000000] [--runs 30] [--job-runs 3] [--keep]
import { parseArgs } from 'node:util';
import { ltvJob } from '../jobs/ltv';
import { createPool } from '../lib/db/pool';
import { createLogger } from '../lib/log';
import type { Redis } from '../lib/redis';
import { generateEvents, generatePurchases } from './generate';
import { log, runBenchmark, runCli, startService, timeGet, timingHeader, timingRow } from './service';

const TARGET = { p50: 200, p99: 500 };

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      runs: { type: 'string' },
      'job-runs': { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const runs = Number(values.runs ?? 30);
  const jobRuns = Number(values['job-runs'] ?? 3);
  const service = await startService({ name: 'ltvbench' });
  const pool = createPool(service.env.DATABASE_URL as string, 2);
  try {
    const started = Date.now();
    const gen = await generateEvents(service, Number(values.events ?? 10_000_000));
    const purchases = await generatePurchases(service, gen);
    log(
      `generated ${gen.events.toLocaleString('en-US')} events and ${purchases.toLocaleString('en-US')} purchases in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    log(await runCli(service.env, ['admin', 'rates', 'set', 'EUR', '1.08', '--date', '2000-01-01']));

    // The job needs no Redis; the context's queue fields are unused by its body.
    const ctx = {
      pool,
      clickhouse: service.clickhouse,
      redis: undefined as unknown as Redis,
      redisPrefix: '',
      logger: createLogger('silent', 'bench'),
    };
    const jobMs: number[] = [];
    for (let i = 0; i < jobRuns; i++) {
      const t = process.hrtime.bigint();
      await ltvJob(ctx, { websiteId: service.website.id });
      jobMs.push(Number(process.hrtime.bigint() - t) / 1e6);
      log(`ltv job run ${i + 1}: ${jobMs[i].toFixed(0)} ms`);
    }
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ltv_cohorts WHERE website_id = $1',
      [service.website.id],
    );
    jobMs.sort((a, b) => a - b);

    const site = service.website.id;
    const cases: [string, string][] = [
      ['GET ltv (90d, monthly)', `/api/external/v1/revenue/${site}/ltv`],
      ['GET ltv (90d, weekly)', `/api/external/v1/revenue/${site}/ltv?granularity=weekly`],
      ['GET ltv (1y, weekly)', `/api/external/v1/revenue/${site}/ltv?range=1y&granularity=weekly`],
    ];
    const lines = [
      `Tidemark lifetime-value benchmark — embedded store, ${gen.events.toLocaleString('en-US')} events and ${purchases.toLocaleString('en-US')} purchases over 90 days`,
      `ltv job (one website, ${rows[0].n} cohort rows): median ${jobMs[Math.floor(jobMs.length / 2)].toFixed(0)} ms, best ${jobMs[0].toFixed(0)} ms over ${jobRuns} runs`,
      '',
      timingHeader(28),
    ];
    const failures: string[] = [];
    for (const [name, path] of cases) {
      const r = await timeGet(service, path, runs);
      lines.push(timingRow(name, 28, r, TARGET));
      if (r.failure) failures.push(`${name}: ${r.failure}`);
    }
    process.stdout.write(`${[...lines, ...failures].join('\n')}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await pool.end();
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
