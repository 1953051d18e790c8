// Stats API benchmark, embedded mode (issue targets: over 10 million events in 90 days, period=30d:
// aggregate of all five metrics ≤ 100 ms p50, timeseries by day ≤ 150 ms, breakdown by page (limit 100)
// ≤ 250 ms, all ≤ 500 ms p99, for v1 and for v2 with two filters).
//
//   npx tsc -p tsconfig.json && node dist/bench/stats.js [--events 10000000] [--runs 30] [--keep]
//
// Starts the whole service on fresh resources, fills one website with generated events through the bulk
// path (bench/generate.ts: one INSERT … SELECT in ClickHouse writing the same columns the ingest writer does;
// the sessions view fills as it would), then times each endpoint over HTTP, one request at a time.
import { parseArgs } from 'node:util';
import { generate, rawTailHours, rollUp, settleMerges } from './generate';
import { log, runBenchmark, startService, timeGet, timingHeader, timingRow } from './service';

const TARGETS = { aggregate: 100, timeseries: 150, breakdown: 250, p99: 500 };

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 30);
  const service = await startService({ name: 'statsbench' });
  try {
    const started = Date.now();
    const stored = await generate(service, target);
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // The clock keeps closed days rolled up in a running deployment; do now what it would have done.
    const rolling = Date.now();
    log(`${await rollUp(service)} in ${((Date.now() - rolling) / 1000).toFixed(1)} s`);
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    const site = service.website.id;
    const common = `site_id=${site}&period=30d`;
    const two = encodeURIComponent(
      JSON.stringify([
        ['is', 'country', ['US', 'DE']],
        ['is_not', 'browser', ['Safari']],
      ]),
    );
    const cases: [string, string, number][] = [
      [
        'v1 aggregate, 5 metrics',
        `/api/external/v1/stats/aggregate?${common}&metrics=visitors,pageviews,visit_duration,bounce_rate,events`,
        TARGETS.aggregate,
      ],
      [
        'v1 timeseries by day',
        `/api/external/v1/stats/timeseries?${common}&metrics=visitors,pageviews&interval=day`,
        TARGETS.timeseries,
      ],
      [
        'v1 breakdown by page, limit 100',
        `/api/external/v1/stats/breakdown?${common}&metrics=visitors,pageviews&property=event:page&limit=100`,
        TARGETS.breakdown,
      ],
      [
        'v2 aggregate, 5 metrics, 2 filters',
        `/api/external/v2/stats/aggregate?${common}&metrics=visitors,pageviews,visit_duration,bounce_rate,events&filters=${two}`,
        TARGETS.aggregate,
      ],
      [
        'v2 timeseries by day, 2 filters',
        `/api/external/v2/stats/timeseries?${common}&metrics=visitors,pageviews&interval=day&filters=${two}`,
        TARGETS.timeseries,
      ],
      [
        'v2 breakdown by page, 2 filters',
        `/api/external/v2/stats/breakdown?${common}&metrics=visitors,pageviews&property=event:page&limit=100&filters=${two}`,
        TARGETS.breakdown,
      ],
    ];
    const lines = [
      `Tidemark Stats API benchmark — embedded store, ${stored.toLocaleString('en-US')} events over 90 days, period=30d, ${runs} sequential runs each`,
      `(${new Date().toISOString()}: the last ${await rawTailHours(service)} hours of the range are read raw, the rest from rollups)`,
      '',
      timingHeader(38),
    ];
    for (const [name, path, p50Target] of cases) {
      const r = await timeGet(service, path, runs);
      lines.push(timingRow(name, 38, r, { p50: p50Target, p99: TARGETS.p99 }));
      log(lines[lines.length - 1]);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
