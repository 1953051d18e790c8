// Conversions benchmark, embedded mode (issue 22 targets, over the 10-million-event dataset with goals, props
// and purchases, period=30d: goal breakdown with conversion_rate and a props breakdown each ≤ 250 ms p50 and
// ≤ 500 ms p99). Each row also prints CPU per request of the web role and the store, and its p50 as a
// multiple of a plain visitors aggregate timed in the same run.
//
//   npx tsc -p tsconfig.json && node dist/bench/conversions.js [--events 10000000] [--runs 30] [--keep]
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { generateEvents, generatePurchases, rawTailHours, rollUp, settleMerges } from './generate';
import { log, runBenchmark, startService, timeGet, timingHeader, timingRow } from './service';

const TARGET = { p50: 250, p99: 500 };

/** The bench website's goals: two custom events, a page pattern over 1 in 10 paths, and purchases. */
const GOALS: [string, string, string | null][] = [
  ['Signup', 'event', null],
  ['Newsletter', 'event', null],
  ['Product 1xx', 'page', '/p/1*'],
  ['Purchase', 'purchase', null],
];

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs ?? 30);
  const service = await startService({ name: 'convbench' });
  try {
    const started = Date.now();
    const gen = await generateEvents(service, Number(values.events ?? 10_000_000));
    const purchases = await generatePurchases(service, gen);
    log(
      `generated ${gen.events.toLocaleString('en-US')} events and ${purchases.toLocaleString('en-US')} purchases in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const pg = new Client({ connectionString: service.env.DATABASE_URL });
    await pg.connect();
    for (const [name, kind, path] of GOALS) {
      await pg.query('INSERT INTO goals (website_id, name, kind, path) VALUES ($1, $2, $3, $4)', [
        service.website.id,
        name,
        kind,
        path,
      ]);
    }
    await pg.end();
    log(await rollUp(service));
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);

    const site = service.website.id;
    const v2 = (endpoint: string, params: Record<string, string>) =>
      `/api/external/v2/stats/${endpoint}?${new URLSearchParams({ site_id: site, period: '30d', ...params })}`;
    const external = (what: string) => `/api/external/v1/analytics/${site}/${what}?range=30d`;
    const baseline = await timeGet(service, v2('aggregate', { metrics: 'visitors' }), runs);
    const cases: [string, string][] = [
      [
        'goals by goal, conversion_rate',
        v2('breakdown', { property: 'event:goal', metrics: 'visitors,events,conversion_rate' }),
      ],
      [
        'goals by goal, revenue',
        v2('breakdown', { property: 'event:goal', metrics: 'visitors,total_revenue,average_revenue' }),
      ],
      ['props breakdown (plan)', v2('breakdown', { property: 'event:props:plan', metrics: 'visitors,events' })],
      [
        'one goal by day, conversion_rate',
        v2('timeseries', {
          metrics: 'visitors,conversion_rate',
          filters: JSON.stringify([['is', 'goal', ['Signup']]]),
        }),
      ],
      ['External /goals', external('goals')],
      ['External /events', external('events')],
      ['External /revenue', external('revenue')],
    ];
    const lines = [
      `Tidemark conversions benchmark — embedded store, ${gen.events.toLocaleString('en-US')} events and ${purchases.toLocaleString('en-US')} purchases over 90 days, 30 days read, ${runs} sequential runs each`,
      `(${new Date().toISOString()}: the last ${await rawTailHours(service)} hours of the range are read raw, the rest from rollups)`,
      '',
      timingHeader(34, true),
      timingRow('baseline: v2 aggregate visitors', 34, baseline, { p50: 100, p99: 500 }, baseline),
    ];
    const failures: string[] = [];
    for (const [name, path] of cases) {
      const r = await timeGet(service, path, runs);
      lines.push(timingRow(name, 34, r, TARGET, baseline));
      log(lines[lines.length - 1]);
      if (r.failure) failures.push(`${name}: ${r.failure}`);
    }
    process.stdout.write(`${[...lines, ...failures].join('\n')}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
