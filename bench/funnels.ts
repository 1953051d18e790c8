// Funnel benchmark, embedded mode (issue 22 target: a 4-step funnel over 30 days of the 10-million-event
// dataset ≤ 250 ms p50 and ≤ 500 ms p99).
//
//   npx tsc -p tsconfig.json && node dist/bench/funnels.js [--events 10000000] [--runs 30] [--keep]
//
// Starts the whole service on fresh resources, fills one website as bench/stats.ts does (bench/generate.ts),
// rolls closed days up, saves two funnels through the dashboard API — 1. path /p/1* (or the page /p/1),
// 2. page goal /p/2*, 3. path /p/3* (or /p/3), 4. event goal Signup — and times their results over HTTP, one
// request at a time: the External API over range=30d, unfiltered and with a visit-key filter, and the
// dashboard's results. Beside p50 and p99
// it prints the service's CPU time per request (store and web roles, from /proc) and CPU / wall time: on a
// shared machine a ratio well below 1 means the request waited for a core.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { generate, rawTailHours, rollUp, settleMerges } from './generate';
import { api, log, runBenchmark, type Service, startService, type Timing, timeGet, timingRow, until } from './service';

const TARGET = { p50: 250, p99: 500 };
const CLK_TCK = 100; // Linux USER_HZ

/** utime + stime of a process, in clock ticks (0 when it is gone). */
function cpuTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(after[11]) + Number(after[12]);
  } catch {
    return 0;
  }
}

/** The supervisor and its children (the roles), by scanning /proc for processes whose parent it is. */
function servicePids(supervisorPid: number): number[] {
  const pids = [supervisorPid];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === supervisorPid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Seconds since a process started (from /proc: its start time in clock ticks after boot). */
function ageSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / CLK_TCK;
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - started;
}

/**
 * Waits until the worker role has run past its start-up check of the store (30 s at most): the bulk insert
 * keeps the embedded store from answering pings, so a worker still starting would fail its check and the
 * supervisor would stop the service. On a busy machine the worker can start well after the web role is ready.
 */
async function workerStarted(service: Service): Promise<void> {
  const worker = () =>
    servicePids(service.supervisorPid).find((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workers/main.js');
      } catch {
        return false;
      }
    });
  await until('the worker role past its start-up', 180_000, 1000, async () => {
    const pid = worker();
    return pid !== undefined && ageSeconds(pid) > 35 ? true : undefined;
  });
}

/** timeGet with the service's CPU time over the same requests (warm-ups included: 3 + runs). */
async function timeWithCpu(
  service: Service,
  path: string,
  runs: number,
  headers?: Record<string, string>,
): Promise<Timing & { cpuMs: number; ratio: number }> {
  const pids = servicePids(service.supervisorPid);
  const ticks = () => pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const [t0, wall0] = [ticks(), Date.now()];
  const r = await timeGet(service, path, runs, headers);
  const [cpu, wall] = [((ticks() - t0) * 1000) / CLK_TCK, Date.now() - wall0];
  return { ...r, cpuMs: cpu / (runs + 3), ratio: cpu / Math.max(1, wall) };
}

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
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 30);
  const service = await startService({ name: 'funnelbench' });
  try {
    await workerStarted(service);
    const started = Date.now();
    const stored = await generate(service, target);
    log(`generated ${stored.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const rolling = Date.now();
    log(`${await rollUp(service)} in ${((Date.now() - rolling) / 1000).toFixed(1)} s`);
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    const { token, wide, narrow } = await saveFunnels(service);
    const site = service.website.id;
    const external = (id: string) => `/api/external/v1/analytics/${site}/funnels/${id}?range=30d`;
    const countries = encodeURIComponent(JSON.stringify([['is', 'country', ['US', 'DE']]]));
    const cases: [string, string, Record<string, string> | undefined][] = [
      ['External API, wide 4 steps, 30d', external(wide), undefined],
      ['External API, wide, 30d, country filter', `${external(wide)}&filters=${countries}`, undefined],
      [
        'dashboard results, wide, 30d',
        `/api/websites/${site}/funnels/${wide}/results?period=30d`,
        { authorization: `Bearer ${token}` },
      ],
      ['External API, narrow 4 steps, 30d', external(narrow), undefined],
    ];
    const width = 44;
    const lines = [
      `Tidemark funnel benchmark — embedded store, ${stored.toLocaleString('en-US')} events over 90 days, 30 days read, ${runs} sequential runs each`,
      `(${new Date().toISOString()}: funnels read raw events; ${await rawTailHours(service)} hours of the range are not rolled up, which only the visit-key filter's visit values notice)`,
      '',
      `${'query'.padEnd(width)} │ ${'p50'.padStart(8)} │ ${'p99'.padStart(8)} │ target p50 / p99 │ result │ CPU/request │ CPU/wall`,
    ];
    for (const [name, path, headers] of cases) {
      const r = await timeWithCpu(service, path, runs, headers);
      if (r.failure) log(r.failure);
      lines.push(
        `${timingRow(name, width, r, TARGET).padEnd(width + 55)} │ ${`${r.cpuMs.toFixed(0)} ms`.padStart(11)} │ ${r.ratio.toFixed(2).padStart(8)}`,
      );
      log(lines[lines.length - 1]);
    }
    for (const [name, id] of [
      ['wide', wide],
      ['narrow', narrow],
    ]) {
      const sample = await api(service.base, 'GET', external(id), undefined, token);
      const steps = (sample.json.data?.steps ?? []) as { name: string; visitors: number; conversion_rate: number }[];
      lines.push(`${name}: ${steps.map((s) => `${s.name} ${s.visitors} (${s.conversion_rate} %)`).join(' → ')}`);
    }
    lines.splice(lines.length - 2, 0, '');
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
