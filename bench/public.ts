// Public endpoints under load (issue target: /e/live and a widget's JSON at ≥ 5,000 requests/s with p99 ≤ 50 ms
// while 10,000 events/s are ingested), embedded mode.
//
//   npx tsc -p tsconfig.json && node dist/bench/public.js [--quick] [--duration 20] [--rate 5000]
//        [--ingest-rate 10000] [--keep]
//
// Starts the whole service (bench/service.ts) with TRUST_PROXY=loopback, runs server ingestion at
// --ingest-rate events/s for the whole run (bench/ingest-load.ts, its own process), and meanwhile, one phase
// after another, GETs one path at --rate requests/s from 4,096 client addresses (bench/public-load.ts, its own
// process): first nothing (ingestion alone, to subtract its CPU), then /healthz as the baseline, then the
// public endpoints. Per phase: requests/s answered 200, latency from the scheduled send time, and CPU per
// request of the web role and Redis beyond what ingestion alone used, with its ratio to /healthz's.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadResult } from './ingest-load';
import { type CpuSnapshot, cpuMs, cpuSnapshot, type Role, serviceProcesses } from './processes';
import type { PublicLoadResult } from './public-load';
import { DIST, log, runBenchmark, runProcess, sleep, startService } from './service';

const TARGET = { rate: 5_000, p99: 50 };
const WARMUP_S = 3;

interface Phase {
  name: string;
  load?: PublicLoadResult;
  ingest?: LoadResult;
  cpu: Partial<Record<Role, number>>;
  seconds: number;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      'ingest-rate': { type: 'string' },
      keep: { type: 'boolean' },
      'cpu-prof': { type: 'boolean' },
    },
  });
  const duration = Number(values.duration ?? (values.quick ? 8 : 20));
  const rate = Number(values.rate ?? TARGET.rate);
  const ingestRate = Number(values['ingest-rate'] ?? 10_000);
  if (!(duration > 0) || !(rate > 0) || !(ingestRate >= 0)) throw new Error('--duration, --rate, --ingest-rate');

  const extraEnv: NodeJS.ProcessEnv = { TRUST_PROXY: 'loopback' };
  const profiles = path.join(os.tmpdir(), `tidemark-pubbench-prof-${process.pid}`);
  if (values['cpu-prof']) {
    // Node refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the profiler instead.
    extraEnv.NODE_OPTIONS = `--require ${path.join(DIST, 'bench', 'cpu-profile-preload.js')}`;
    extraEnv.BENCH_CPU_PROF_DIR = profiles;
  }
  const service = await startService({ name: 'pubbench', extraEnv });
  try {
    const code = service.website.tracking_code;
    const cases: { name: string; path: string; accept: string; target: boolean }[] = [
      { name: 'GET /healthz (baseline)', path: '/healthz', accept: '*/*', target: false },
      { name: 'GET /e/live/{code}', path: `/e/live/${code}`, accept: '*/*', target: true },
      {
        name: 'GET /widgets/{code}/preview (JSON)',
        path: `/widgets/${code}/preview`,
        accept: 'application/json',
        target: true,
      },
      {
        name: 'GET /widgets/{code}/realtime (JSON)',
        path: `/widgets/${code}/realtime`,
        accept: 'application/json',
        target: true,
      },
      {
        name: 'GET /widgets/{code}/recent (HTML)',
        path: `/widgets/${code}/recent`,
        accept: 'text/html',
        target: false,
      },
    ];
    const base = service.base;
    const procs = serviceProcesses(service.supervisorPid);
    const phases: Phase[] = [];
    // Each phase runs its own ingestion load (warm-up included), so a slow phase never outlasts it.
    const ingestFor = (seconds: number) =>
      ingestRate > 0
        ? runProcess<LoadResult>(
            'ingest-load.js',
            [
              '--url',
              base,
              '--key',
              service.key,
              '--code',
              code,
              '--duration',
              String(seconds),
              '--rate',
              String(ingestRate),
              '--batch',
              '1000',
              '--concurrency',
              '4',
            ],
            seconds + 120,
          )
        : Promise.resolve(undefined);
    const phase = async (name: string, path?: string, accept = '*/*') => {
      const ingesting = ingestFor(WARMUP_S + duration + 1);
      const publicArgs = (d: number) => [
        '--url',
        base,
        '--path',
        path ?? '',
        '--rate',
        String(rate),
        '--duration',
        String(d),
        '--accept',
        accept,
      ];
      if (path) await runProcess<PublicLoadResult>('public-load.js', publicArgs(WARMUP_S), WARMUP_S + 60);
      else await sleep(WARMUP_S * 1000);
      const a: CpuSnapshot = cpuSnapshot(procs);
      const load = path
        ? await runProcess<PublicLoadResult>('public-load.js', publicArgs(duration), duration + 60)
        : await sleep(duration * 1000).then(() => undefined);
      const b = cpuSnapshot(procs);
      const ingest = await ingesting.catch((err: Error) => {
        log(`ingestion load failed: ${err.message}`);
        return undefined;
      });
      phases.push({ name, load, ingest, cpu: cpuMs(a, b), seconds: (b.at - a.at) / 1000 });
      log(
        `${name}: ${load ? `${load.perSecond} req/s answered 200, p50 / p99 ${load.latencyMs.p50} / ${load.latencyMs.p99} ms, statuses ${JSON.stringify(load.byStatus)}; ` : ''}` +
          `ingestion ${ingest ? `${ingest.acceptedPerSecond} events/s, p99 ${ingest.latencyMs.p99} ms` : 'none'}; ${((b.at - a.at) / 1000).toFixed(1)} s measured`,
      );
      await sleep(2_000);
    };
    log(
      `${ingestRate.toLocaleString('en-US')} events/s ingested in every phase; ${rate.toLocaleString('en-US')} requests/s`,
    );
    await phase('ingestion alone');
    for (const c of cases) await phase(c.name, c.path, c.accept);

    // CPU a request cost beyond ingestion's own, per role.
    const idle = phases[0];
    const extra = (p: Phase, role: Role) => {
      const perSecond = (idle.cpu[role] ?? 0) / idle.seconds;
      return ((p.cpu[role] ?? 0) - perSecond * p.seconds) / Math.max(1, p.load?.sent ?? 1);
    };
    const baseline = phases[1];
    // Under contention a phase's share can fall below ingestion's own rate: then there is no honest figure.
    const us = (ms: number) => (ms > 0 ? `${(ms * 1000).toFixed(0)} µs` : 'n/a');
    const lines = [
      `Tidemark public endpoints — embedded store, ${rate.toLocaleString('en-US')} requests/s from 4,096 addresses (open loop, ` +
        `latency from the scheduled send), ${duration} s per phase after ${WARMUP_S} s of warm-up, while ` +
        `${ingestRate.toLocaleString('en-US')} events/s are ingested (1,000-event batches)`,
      '',
      `${'phase'.padEnd(36)} │ ${'200/s'.padStart(6)} │ ${'p50'.padStart(7)} │ ${'p95'.padStart(7)} │ ${'p99'.padStart(7)} │ non-200 │ ${'web CPU/req'.padStart(11)} │ ${'Redis/req'.padStart(9)} │ ×base │ result`,
    ];
    let failed = false;
    for (const [i, p] of phases.entries()) {
      if (!p.load) {
        const pct = (role: Role) => `${Math.round(((p.cpu[role] ?? 0) / p.seconds / 1000) * 100)} %`;
        lines.push(
          `${p.name.padEnd(36)} │ web ${pct('web')}, Redis ${pct('redis')}, store ${pct('store')}, worker ${pct('worker')} of a core`,
        );
        continue;
      }
      const l = p.load;
      const non200 = l.sent - l.ok;
      const web = extra(p, 'web');
      const target = cases[i - 1].target;
      const pass = l.perSecond >= TARGET.rate * 0.98 && l.latencyMs.p99 <= TARGET.p99 && non200 === 0;
      if (target && !pass) failed = true;
      lines.push(
        `${p.name.padEnd(36)} │ ${String(l.perSecond).padStart(6)} │ ${`${l.latencyMs.p50} ms`.padStart(7)} │ ${`${l.latencyMs.p95} ms`.padStart(7)} │ ${`${l.latencyMs.p99} ms`.padStart(7)} │ ${String(non200).padStart(7)} │ ${us(web).padStart(11)} │ ${us(extra(p, 'redis')).padStart(9)} │ ${(web > 0 && extra(baseline, 'web') > 0 ? `${(web / extra(baseline, 'web')).toFixed(1)}×` : 'n/a').padStart(5)} │ ${target ? (pass ? 'PASS' : 'MISS') : '—'}`,
      );
      if (non200) lines.push(`${''.padEnd(36)}   statuses ${JSON.stringify(l.byStatus)}, errors ${l.errors}`);
    }
    lines.push('', 'Ingestion in each phase (accepted events/s, per-batch p99):');
    for (const p of phases)
      lines.push(
        `  ${p.name.padEnd(36)} ${p.ingest ? `${p.ingest.acceptedPerSecond.toLocaleString('en-US')} events/s, p99 ${p.ingest.latencyMs.p99} ms, errors ${JSON.stringify(p.ingest.errorsByStatus)}` : 'no result'}`,
      );
    lines.push(
      `Targets: ≥ ${TARGET.rate.toLocaleString('en-US')} requests/s answered 200 (2 % slack for the schedule's edges), p99 ≤ ${TARGET.p99} ms, no non-200.`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    return failed ? 1 : 0;
  } finally {
    await service.stop(values.keep === true);
    if (values['cpu-prof']) log(`CPU profiles in ${profiles} (node dist/bench/cpuprofile-summary.js FILE)`);
  }
}

runBenchmark(main);
