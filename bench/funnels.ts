// Funnel benchmark, embedded mode (issue 22 target, over the 10-million-event dataset: a 4-step funnel over
// 30 days ≤ 250 ms p50 and ≤ 500 ms p99). Each row also prints CPU per request of the web role and the store,
// and its p50 as a multiple of a plain visitors aggregate timed in the same run.
//
//   npx tsc -p tsconfig.json && node dist/bench/funnels.js [--events 10000000] [--runs 30] [--keep]
//
// Fills one website as bench/stats.ts does (bench/generate.ts), rolls closed days up, saves two funnels
// through the dashboard API — 1. path /p/1* (narrow: the page /p/1), 2. page goal /p/2*, 3. path /p/3*
// (narrow: /p/3), 4. event goal Signup — and times their results over HTTP, one request at a time: the
// External API over range=30d, unfiltered and with a visit-key filter, and the dashboard's results.
import { parseArgs } from 'node:util';
import { generate, rawTailHours, rollUp, settleMerges } from './generate';
import { api, log, runBenchmark, type Service, startService, timeGet, timingHeader, timingRow } from './service';

const TARGET = { p50: 250, p99: 500 };

/**
 * Signs in as the bench user (startService registers it with these credentials) and saves two funnels of
 * four steps: a wide one whose page steps each match a fifth of the pages, and a narrow one whose first and
 * third steps are single pages.
 */
async function saveFunnels(service: Service): Promise<{ token: string; wide: string; narrow: string }> {
  const login = await api(service.base, 'POST', '/api/auth/login', {
    email: `bench-${service.id}@example.com`,
    password: `bench password ${service.id}`,
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.json)}`);
  const token: string = login.json.data.token;
  const W = `/api/websites/${service.website.id}`;
  const goal = async (body: object) => {
    const res = await api(service.base, 'POST', `${W}/goals`, body, token);
    if (res.status !== 201) throw new Error(`goal: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json.data.goal.id as string;
  };
  const page = await goal({ kind: 'page', path: '/p/2*' });
  const signup = await goal({ kind: 'event', name: 'Signup' });
  const save = async (name: string, first: string, third: string) => {
    const steps = [{ path: first }, { goal_id: page }, { path: third }, { goal_id: signup }];
    const res = await api(service.base, 'POST', `${W}/funnels`, { name, steps }, token);
    if (res.status !== 201) throw new Error(`funnel: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json.data.funnel.id as string;
  };
  return { token, wide: await save('Wide', '/p/1*', '/p/3*'), narrow: await save('Narrow', '/p/1', '/p/3') };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs ?? 30);
  const service = await startService({ name: 'funnelbench' });
  try {
    const started = Date.now();
    const stored = await generate(service, Number(values.events ?? 10_000_000));
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    log(await rollUp(service));
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    const { token, wide, narrow } = await saveFunnels(service);

    const site = service.website.id;
    const external = (id: string) => `/api/external/v1/analytics/${site}/funnels/${id}?range=30d`;
    const countries = encodeURIComponent(JSON.stringify([['is', 'country', ['US', 'DE']]]));
    const baseline = await timeGet(
      service,
      `/api/external/v2/stats/aggregate?site_id=${site}&period=30d&metrics=visitors`,
      runs,
    );
    const cases: [string, string, Record<string, string>?][] = [
      ['External, wide, 4 steps', external(wide)],
      ['External, wide, country filter', `${external(wide)}&filters=${countries}`],
      [
        'dashboard results, wide',
        `/api/websites/${site}/funnels/${wide}/results?period=30d`,
        { authorization: `Bearer ${token}` },
      ],
      ['External, narrow, 4 steps', external(narrow)],
    ];
    const lines = [
      `Tidemark funnel benchmark — embedded store, ${stored.toLocaleString('en-US')} events over 90 days, 30 days read raw, ${runs} sequential runs each`,
      `(${new Date().toISOString()}: ${await rawTailHours(service)} hours of the range are not rolled up; only the visit-key filter reads rolled-up visit values)`,
      '',
      timingHeader(34, true),
      timingRow('baseline: v2 aggregate visitors', 34, baseline, { p50: 100, p99: 500 }, baseline),
    ];
    const failures: string[] = [];
    for (const [name, path, headers] of cases) {
      const r = await timeGet(service, path, runs, headers);
      lines.push(timingRow(name, 34, r, TARGET, baseline));
      log(lines[lines.length - 1]);
      if (r.failure) failures.push(`${name}: ${r.failure}`);
    }
    lines.push('');
    for (const [name, id] of [
      ['wide', wide],
      ['narrow', narrow],
    ]) {
      const sample = await api(service.base, 'GET', external(id), undefined, token);
      const steps = (sample.json.data?.steps ?? []) as { name: string; visitors: number; conversion_rate: number }[];
      lines.push(`${name}: ${steps.map((s) => `${s.name} ${s.visitors} (${s.conversion_rate} %)`).join(' → ')}`);
    }
    process.stdout.write(`${[...lines, ...failures].join('\n')}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
