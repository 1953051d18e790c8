// Server-side ingestion benchmark, embedded mode, end to end (see bench/README.md).
//
//   npx tsc -p tsconfig.json && node dist/bench/ingest.js [--quick] [flags]
//
// Starts the whole service (`node dist/lib/process/supervisor.js`, every role) on a fresh PostgreSQL
// database, Redis prefix, ClickHouse database and data directory, sets up a user, an enterprise team with
// lifted limits, a website and a full_access key through the HTTP API and the CLI, then drives
// POST /api/v1/events from a separate load process (bench/ingest-load.ts) in three phases:
//   1. warm-up;
//   2. as fast as possible: accepted events/s and per-batch latency, then the time until every accepted
//      event is counted by ClickHouse (end-to-end rate);
//   3. a fixed 10,000 events/s with freshness probes: how long an accepted event takes to become queryable.
// Prints a table with the issue's targets and PASS/MISS, peak RSS and CPU per role; cleans everything up.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { formatSummary, summarizeProfile } from './cpuprofile-summary';
import { type LoadResult, percentile } from './ingest-load';
import { type CpuSnapshot, cpuSnapshot, cpuUse, ROLES, type Role, serviceProcesses, statusKb } from './processes';
import { DIST, log, runBenchmark, type Service, sleep, startService } from './service';

const TARGETS = {
  acceptRate: 80_000,
  batchP99Ms: 200,
  endToEndRate: 50_000,
  freshnessP99Ms: 5_000,
  steadyRate: 10_000,
};

// ---------------------------------------------------------------------------------------------------------
// small helpers

const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const fmtMs = (n: number) =>
  Number.isFinite(n) ? (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${n.toFixed(0)} ms`) : 'n/a';

// ---------------------------------------------------------------------------------------------------------
// the load process

interface ProbeLine {
  type: 'probe';
  id: string;
  sentAt: number;
  acceptedAt: number;
}

async function runLoad(
  opts: {
    url: string;
    key: string;
    code: string;
    duration: number;
    concurrency: number;
    rate: number;
    batch: number;
    probeEvery: number;
  },
  hooks: { onStart?: (t: number) => void; onProbe?: (p: ProbeLine) => void } = {},
): Promise<LoadResult> {
  const args = [
    path.join(DIST, 'bench', 'ingest-load.js'),
    '--url',
    opts.url,
    '--key',
    opts.key,
    '--code',
    opts.code,
    '--duration',
    String(opts.duration),
    '--concurrency',
    String(opts.concurrency),
    '--rate',
    String(opts.rate),
    '--batch',
    String(opts.batch),
    '--probe-every',
    String(opts.probeEvery),
  ];
  // The load process is a plain node process: no profiler options from our own environment.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let result: LoadResult | undefined;
  const rl = readline.createInterface({ input: child.stdout! });
  const closed = new Promise<void>((resolve) => rl.once('close', () => resolve()));
  rl.on('line', (line) => {
    let msg: { type?: string; t?: number } & Record<string, unknown>;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.type === 'started') hooks.onStart?.(msg.t as number);
    else if (msg.type === 'probe') hooks.onProbe?.(msg as unknown as ProbeLine);
    else if (msg.type === 'result') result = msg as unknown as LoadResult;
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[load] ${d.toString()}`));
  const killer = setTimeout(() => child.kill('SIGKILL'), (opts.duration + 120) * 1000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  await Promise.race([closed, sleep(5_000)]);
  if (!result) throw new Error(`load process exited with ${code} and no result`);
  return result;
}

// ---------------------------------------------------------------------------------------------------------

interface Flags {
  warmup: number;
  accept: number;
  steady: number;
  concurrency: number;
  steadyConcurrency: number;
  rate: number;
  batch: number;
  drainTimeout: number;
  cpuProf: boolean;
  pauseWriter: boolean;
  backgroundPriority?: string;
  keep: boolean;
  json?: string;
}

function flags(): Flags {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      warmup: { type: 'string' },
      accept: { type: 'string' },
      steady: { type: 'string' },
      concurrency: { type: 'string', default: '6' },
      'steady-concurrency': { type: 'string', default: '4' },
      rate: { type: 'string', default: String(TARGETS.steadyRate) },
      batch: { type: 'string', default: '1000' },
      'drain-timeout': { type: 'string', default: '600' },
      'cpu-prof': { type: 'boolean', default: false },
      'pause-writer': { type: 'boolean', default: false },
      'background-priority': { type: 'string' },
      keep: { type: 'boolean', default: false },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      [
        'node dist/bench/ingest.js [--quick] [--warmup s] [--accept s] [--steady s] [--concurrency n]',
        '  [--steady-concurrency n] [--rate events/s] [--batch n] [--drain-timeout s] [--cpu-prof] [--pause-writer]',
        '  [--background-priority idle|low|normal] [--keep] [--json file]',
        '  --quick      short phases (2 s / 8 s / 8 s instead of 5 s / 20 s / 20 s)',
        '  --cpu-prof   profile store, web and worker (preloaded V8 profiler) and print a self-time summary per role',
        '  --pause-writer  diagnostic: SIGSTOP the worker role during the max-rate load (accept ceiling of web alone;',
        '               the end-to-end figure of such a run is not comparable)',
        "  --background-priority p  BACKGROUND_PRIORITY of the service (default: the service's own, idle)",
        '  --keep       leave the database, Redis keys and data directory in place (prints their names)',
        '  --json f     also write every figure as JSON to f',
        '',
      ].join('\n'),
    );
    process.exit(0);
  }
  const q = values.quick;
  return {
    warmup: Number(values.warmup ?? (q ? 2 : 5)),
    accept: Number(values.accept ?? (q ? 8 : 20)),
    steady: Number(values.steady ?? (q ? 8 : 20)),
    concurrency: Number(values.concurrency),
    steadyConcurrency: Number(values['steady-concurrency']),
    rate: Number(values.rate),
    batch: Number(values.batch),
    drainTimeout: Number(values['drain-timeout']),
    cpuProf: values['cpu-prof'],
    pauseWriter: values['pause-writer'],
    backgroundPriority: values['background-priority'],
    keep: values.keep,
    json: values.json,
  };
}

async function main(): Promise<number> {
  const f = flags();
  const profDir = path.join(
    os.tmpdir(),
    `tidemark-bench-prof-${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`,
  );
  const extraEnv: NodeJS.ProcessEnv = {};
  if (f.backgroundPriority) extraEnv.BACKGROUND_PRIORITY = f.backgroundPriority;
  if (f.cpuProf) {
    fs.mkdirSync(profDir, { recursive: true });
    // Node refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the profiler instead.
    extraEnv.NODE_OPTIONS = `--require ${path.join(DIST, 'bench', 'cpu-profile-preload.js')}`;
    extraEnv.BENCH_CPU_PROF_DIR = profDir;
  }
  let service: Service | undefined;
  interrupted = async () => {
    log('interrupted: stopping the service and cleaning up');
    await service?.stop(f.keep).catch((err: Error) => log(`cleanup failed: ${err.message}`));
  };
  service = await startService({ name: 'bench', extraEnv });
  const { base, key, website, clickhouse } = service;
  const rolePids = new Map<number, Role>();
  const report: Record<string, unknown> = {
    id: service.id,
    startedAt: new Date().toISOString(),
    flags: f,
    cores: os.cpus().length,
  };

  try {
    const procs = serviceProcesses(service.supervisorPid);
    for (const [role, pid] of procs) rolePids.set(pid, role);
    log(`processes: ${[...procs].map(([r, p]) => `${r}=${p}`).join(' ')}`);

    const ch = clickhouse;
    const count = async (): Promise<number> => {
      const rs = await ch.query({
        query: 'SELECT count() AS n FROM events WHERE website_id = {w:UUID}',
        query_params: { w: website.id },
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ n: string }>())[0].n);
    };
    const waitCount = async (
      expected: number,
      timeoutS: number,
    ): Promise<{ at: number; n: number; reached: boolean }> => {
      const end = Date.now() + timeoutS * 1000;
      let n = await count();
      while (n < expected && Date.now() < end) {
        await sleep(200);
        n = await count();
      }
      return { at: Date.now(), n, reached: n >= expected };
    };
    const load = (
      duration: number,
      concurrency: number,
      rate: number,
      probeEvery: number,
      hooks?: Parameters<typeof runLoad>[1],
    ) =>
      runLoad(
        { url: base, key, code: website.tracking_code, duration, concurrency, rate, batch: f.batch, probeEvery },
        hooks,
      );

    // --- phase 1: warm-up ---
    log(`phase 1: warm-up ${f.warmup} s, concurrency ${f.concurrency}`);
    const warm = await load(f.warmup, f.concurrency, 0, 0);
    log(
      `warm-up: ${fmtInt(warm.eventsAccepted)} accepted (${fmtInt(warm.acceptedPerSecond)}/s), p99 ${fmtMs(warm.latencyMs.p99)}`,
    );
    const warmCounted = await waitCount(warm.eventsAccepted, f.drainTimeout);
    if (!warmCounted.reached) log(`warm-up events not all counted: ${warmCounted.n} of ${warm.eventsAccepted}`);
    const baseline = await count();

    // --- phase 2: max-rate accept, then drain ---
    log(`phase 2: max rate ${f.accept} s, concurrency ${f.concurrency}`);
    let acceptStart = 0;
    let cpuA: CpuSnapshot | undefined;
    const timeline: { s: number; counted: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if (acceptStart) {
          const n = await count().catch(() => NaN);
          timeline.push({ s: Math.round((Date.now() - acceptStart) / 100) / 10, counted: n - baseline });
        }
        await sleep(1000);
      }
    })();
    const accept = await load(f.accept, f.concurrency, 0, 0, {
      onStart: (t) => {
        acceptStart = t;
        cpuA = cpuSnapshot(procs);
        if (f.pauseWriter && procs.get('worker')) process.kill(procs.get('worker')!, 'SIGSTOP');
      },
    });
    if (f.pauseWriter && procs.get('worker')) process.kill(procs.get('worker')!, 'SIGCONT');
    const cpuAcceptEnd = cpuSnapshot(procs);
    sampling = false;
    await sampler;
    const countedAtLoadEnd = (await count()) - baseline;
    log(
      `accept: ${fmtInt(accept.eventsAccepted)} accepted in ${accept.seconds} s = ${fmtInt(accept.acceptedPerSecond)}/s; ` +
        `p50 ${fmtMs(accept.latencyMs.p50)} p99 ${fmtMs(accept.latencyMs.p99)}; counted so far ${fmtInt(countedAtLoadEnd)}`,
    );
    const drained = await waitCount(baseline + accept.eventsAccepted, f.drainTimeout);
    const cpuDrainEnd = cpuSnapshot(procs);
    const e2eSeconds = (drained.at - acceptStart) / 1000;
    const e2eRate = drained.reached ? accept.eventsAccepted / e2eSeconds : (drained.n - baseline) / e2eSeconds;
    const drainSeconds = (drained.at - accept.endedAt) / 1000;
    log(
      `drained: ${fmtInt(drained.n - baseline)} counted ${e2eSeconds.toFixed(1)} s after phase start (drain ${drainSeconds.toFixed(1)} s) → ${fmtInt(e2eRate)}/s`,
    );

    // --- phase 3: steady rate with freshness probes ---
    log(
      `phase 3: steady ${fmtInt(f.rate)} events/s for ${f.steady} s, concurrency ${f.steadyConcurrency}, one probe per batch`,
    );
    const baseline3 = await count();
    const pending = new Map<string, ProbeLine>();
    const delays: number[] = [];
    let probesTotal = 0;
    let steadyRunning = true;
    let cpuS: CpuSnapshot | undefined;
    const poller = (async () => {
      const pollEnd = () => (steadyRunning ? Infinity : Date.now() + 60_000);
      let stopAt = Infinity;
      while (steadyRunning || (pending.size > 0 && Date.now() < stopAt)) {
        if (!steadyRunning && stopAt === Infinity) stopAt = pollEnd();
        if (pending.size > 0) {
          const ids = [...pending.keys()];
          try {
            const rs = await ch.query({
              query:
                'SELECT DISTINCT visitor_id AS v FROM events WHERE website_id = {w:UUID} AND visitor_id IN {ids:Array(String)}',
              query_params: { w: website.id, ids },
              format: 'JSONEachRow',
            });
            const seenAt = Date.now(); // the reply's arrival: a conservative upper bound of visibility
            for (const { v } of await rs.json<{ v: string }>()) {
              const p = pending.get(v);
              if (!p) continue;
              pending.delete(v);
              delays.push(seenAt - p.acceptedAt);
            }
          } catch (err) {
            log(`probe query failed: ${(err as Error).message}`);
          }
        }
        await sleep(200);
      }
    })();
    const steady = await load(f.steady, f.steadyConcurrency, f.rate, 1, {
      onStart: () => {
        cpuS = cpuSnapshot(procs);
      },
      onProbe: (p) => {
        probesTotal++;
        pending.set(p.id, p);
      },
    });
    const cpuSteadyEnd = cpuSnapshot(procs);
    steadyRunning = false;
    await poller;
    const unseen = pending.size;
    delays.sort((a, b) => a - b);
    // Probes never seen count as "infinitely late" for the percentiles.
    const withUnseen = [...delays, ...Array.from({ length: unseen }, () => Infinity)];
    const fresh = {
      probes: probesTotal,
      seen: delays.length,
      unseen,
      p50: percentile(withUnseen, 50),
      p95: percentile(withUnseen, 95),
      p99: percentile(withUnseen, 99),
      max: withUnseen[withUnseen.length - 1] ?? NaN,
      min: delays[0] ?? NaN,
    };
    const steadyCounted = await waitCount(baseline3 + steady.eventsAccepted, f.drainTimeout);
    log(
      `steady: ${fmtInt(steady.acceptedPerSecond)}/s accepted, freshness p50 ${fmtMs(fresh.p50)} p99 ${fmtMs(fresh.p99)} (${fresh.seen}/${fresh.probes} probes)`,
    );

    // --- memory ---
    const finalProcs = serviceProcesses(service.supervisorPid);
    for (const [role, pid] of finalProcs) rolePids.set(pid, role);
    const rss: Record<string, { peakMb: number; nowMb: number; pid: number }> = {};
    for (const [role, pid] of finalProcs) {
      rss[role] = {
        pid,
        peakMb: Math.round((statusKb(pid, 'VmHWM') ?? NaN) / 1024),
        nowMb: Math.round((statusKb(pid, 'VmRSS') ?? NaN) / 1024),
      };
    }
    const restarted = ROLES.filter((r) => procs.get(r) !== undefined && finalProcs.get(r) !== procs.get(r));

    // --- report ---
    // The load process's own CPU of its timed part (it has exited by now, so it reports it itself).
    const loadCpu = (r: LoadResult) => Math.round((r.generatorCpuMs / 1000 / r.seconds) * 100);
    const cpu = {
      accept: { ...(cpuA ? cpuUse(cpuA, cpuAcceptEnd) : {}), load: loadCpu(accept) },
      drain: cpuUse(cpuAcceptEnd, cpuDrainEnd),
      steady: { ...(cpuS ? cpuUse(cpuS, cpuSteadyEnd) : {}), load: loadCpu(steady) },
    };
    Object.assign(report, {
      warmup: warm,
      accept,
      endToEnd: {
        accepted: accept.eventsAccepted,
        counted: drained.n - baseline,
        reached: drained.reached,
        seconds: e2eSeconds,
        drainSecondsAfterLoad: drainSeconds,
        countedAtLoadEnd,
        rate: e2eRate,
        timeline,
      },
      steady,
      steadyCounted: { reached: steadyCounted.reached, counted: steadyCounted.n - baseline3 },
      freshness: fresh,
      rss,
      cpu,
      restarted,
    });

    const pass = (ok: boolean) => (ok ? 'PASS' : 'MISS');
    const by = (value: number, target: number, higherBetter: boolean) => {
      if (!Number.isFinite(value)) return '';
      const ok = higherBetter ? value >= target : value <= target;
      if (ok) return '';
      return higherBetter
        ? ` (${Math.round((1 - value / target) * 100)}% short)`
        : ` (${(value / target).toFixed(1)}× the limit)`;
    };
    const rows: [string, string, string, string][] = [
      [
        'accepted events/s, max rate, separate process',
        fmtInt(accept.acceptedPerSecond),
        `≥ ${fmtInt(TARGETS.acceptRate)}`,
        pass(accept.acceptedPerSecond >= TARGETS.acceptRate) + by(accept.acceptedPerSecond, TARGETS.acceptRate, true),
      ],
      ['  per-batch latency p50 / p95', `${fmtMs(accept.latencyMs.p50)} / ${fmtMs(accept.latencyMs.p95)}`, '', ''],
      [
        '  per-batch latency p99 (1,000 events)',
        fmtMs(accept.latencyMs.p99),
        `≤ ${TARGETS.batchP99Ms} ms`,
        pass(accept.latencyMs.p99 <= TARGETS.batchP99Ms) + by(accept.latencyMs.p99, TARGETS.batchP99Ms, false),
      ],
      ['  batches / errors', `${fmtInt(accept.batchesSent)} / ${JSON.stringify(accept.errorsByStatus)}`, '', ''],
      [
        'end to end, accepted → counted, events/s',
        fmtInt(e2eRate),
        `≥ ${fmtInt(TARGETS.endToEndRate)}`,
        pass(drained.reached && e2eRate >= TARGETS.endToEndRate) + by(e2eRate, TARGETS.endToEndRate, true),
      ],
      [
        '  counted at end of load / drain after load',
        `${fmtInt(countedAtLoadEnd)} / ${drainSeconds.toFixed(1)} s`,
        '',
        '',
      ],
      [
        'steady phase: accepted events/s (target rate)',
        `${fmtInt(steady.acceptedPerSecond)} (${fmtInt(f.rate)})`,
        '',
        '',
      ],
      ['  per-batch latency p50 / p99', `${fmtMs(steady.latencyMs.p50)} / ${fmtMs(steady.latencyMs.p99)}`, '', ''],
      ['  freshness p50 (accepted → queryable)', fmtMs(fresh.p50), '', ''],
      [
        '  freshness p99',
        fmtMs(fresh.p99),
        `≤ ${TARGETS.freshnessP99Ms / 1000} s`,
        pass(fresh.p99 <= TARGETS.freshnessP99Ms && steady.acceptedPerSecond >= 0.95 * f.rate) +
          by(fresh.p99, TARGETS.freshnessP99Ms, false),
      ],
      ['  probes seen / sent, max delay', `${fresh.seen} / ${fresh.probes}, ${fmtMs(fresh.max)}`, '', ''],
    ];
    for (const role of [...ROLES, 'supervisor'] as const) {
      const r = rss[role];
      if (r) rows.push([`peak RSS ${role} (VmHWM)`, `${r.peakMb} MB`, '', `now ${r.nowMb} MB`]);
    }
    rows.push([
      'peak RSS load generator',
      `${Math.round(Math.max(accept.generatorMaxRssMb, steady.generatorMaxRssMb))} MB`,
      '',
      '',
    ]);
    const cpuLine = (c: Record<string, number>) =>
      `${['store', 'web', 'worker', 'clock', 'redis', 'load'].map((r) => `${r} ${c[r] ?? '-'}%`).join(', ')} | machine ${c.machine}% of ${os.cpus().length} cores`;
    const w = [46, 30, 14];
    const line = (c: string[]) => `${c[0].padEnd(w[0])} │ ${c[1].padEnd(w[1])} │ ${c[2].padEnd(w[2])} │ ${c[3]}`;
    const out = [
      '',
      `Tidemark server ingestion benchmark — embedded store, ${os.cpus().length} cores, ${new Date().toISOString()}`,
      `phases: warm-up ${f.warmup} s, max rate ${f.accept} s (concurrency ${f.concurrency}), steady ${f.steady} s at ${fmtInt(f.rate)}/s (concurrency ${f.steadyConcurrency}); batches of ${f.batch}, ~${fmtInt(accept.bodyBytesMean)} B each`,
      '',
      line(['figure', 'value', 'target', 'result']),
      line(['─'.repeat(w[0]), '─'.repeat(w[1]), '─'.repeat(w[2]), '──────']),
      ...rows.map(line),
      '',
      `CPU (% of one core) during max-rate load: ${cpuLine(cpu.accept)}`,
      `CPU during drain after load:             ${cpuLine(cpu.drain)}`,
      `CPU during steady phase:                 ${cpuLine(cpu.steady)}`,
      `written rows timeline during max-rate load (s → counted): ${timeline.map((t) => `${t.s}→${fmtInt(t.counted)}`).join(', ')}`,
      restarted.length ? `WARNING: roles restarted during the run: ${restarted.join(', ')}` : '',
      '',
    ];
    process.stdout.write(out.join('\n'));
    return 0;
  } finally {
    await service.stopProcesses();
    if (f.cpuProf) {
      await sleep(500);
      const files = fs.existsSync(profDir) ? fs.readdirSync(profDir).filter((x) => x.endsWith('.cpuprofile')) : [];
      const summaries: string[] = [];
      for (const file of files) {
        const pid = Number(file.split('.').at(-2));
        const role = rolePids.get(pid) ?? `pid ${pid}`;
        if (role === 'clock' || role === 'supervisor') continue;
        try {
          summaries.push(formatSummary(summarizeProfile(path.join(profDir, file), 25), `${role} (${file})`));
        } catch (err) {
          summaries.push(`${file}: ${(err as Error).message}`);
        }
      }
      process.stdout.write(`\nCPU profiles in ${profDir}\n\n${summaries.join('\n\n')}\n`);
    }
    if (f.json) fs.writeFileSync(f.json, JSON.stringify(report, null, 2));
    if (!f.keep) await service.cleanup().catch((err: Error) => log(`cleanup failed: ${err.message}`));
  }
}

// Ctrl-C or SIGTERM during a run still stops the service and removes what the run created.
let interrupted: (() => Promise<void>) | undefined;
let interrupting = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupting) return;
    interrupting = true;
    void (interrupted ?? (async () => undefined))().finally(() => process.exit(130));
  });
}

runBenchmark(main);
