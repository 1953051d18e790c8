// Load generator for the public endpoints' benchmark (bench/public.ts starts it as its own process): GETs one
// path at a fixed rate, open loop, over keep-alive loopback connections, from a pool of client addresses given
// in X-Forwarded-For (the service runs with TRUST_PROXY=loopback), so the per-address limit meets the traffic
// of many visitors rather than one.
//
//   node dist/bench/public-load.js --url http://127.0.0.1:3000 --path /e/live/tm-… [--rate 5000]
//        [--duration 20] [--accept application/json] [--addresses 4096] [--sockets 256]
//
// Prints one JSON line on stdout at the end. Latency runs from each request's scheduled send time, so a
// server that falls behind shows its queueing too (no coordinated omission).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { percentile } from './ingest-load';

export interface PublicLoadResult {
  type: 'result';
  path: string;
  targetRate: number;
  seconds: number;
  sent: number;
  ok: number;
  perSecond: number;
  byStatus: Record<string, number>;
  errors: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  generatorCpuMs: number;
}

const round = (n: number) => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      path: { type: 'string' },
      rate: { type: 'string', default: '5000' },
      duration: { type: 'string', default: '20' },
      accept: { type: 'string', default: '*/*' },
      addresses: { type: 'string', default: '4096' },
      sockets: { type: 'string', default: '256' },
    },
  });
  if (!values.url || !values.path) {
    process.stderr.write('usage: public-load --url URL --path PATH [--rate n] [--duration s] [--accept type]\n');
    process.exit(2);
  }
  const url = new URL(values.url);
  const rate = Math.max(1, Number(values.rate));
  const durationMs = Number(values.duration) * 1000;
  const addresses = Array.from(
    { length: Math.max(1, Number(values.addresses)) },
    (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  );
  const sockets = Math.max(1, Number(values.sockets));
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  const latencies: number[] = [];
  const byStatus: Record<string, number> = {};
  let sent = 0;
  let errors = 0;
  let inFlight = 0;

  const once = (scheduled: number) => {
    sent++;
    inFlight++;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: values.path,
        method: 'GET',
        agent,
        headers: { accept: values.accept, 'x-forwarded-for': addresses[sent % addresses.length] },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          latencies.push(performance.now() - scheduled);
          byStatus[res.statusCode ?? 0] = (byStatus[res.statusCode ?? 0] ?? 0) + 1;
        });
      },
    );
    req.on('error', () => {
      inFlight--;
      errors++;
    });
    req.end();
  };

  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await new Promise<void>((resolve) => {
    let due = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      const elapsed = Math.min(now - start, durationMs);
      const target = Math.floor((elapsed / 1000) * rate);
      // Each request's scheduled time is when the schedule wanted it, even if this tick is late.
      for (; due < target; due++) once(start + (due / rate) * 1000);
      if (now - start >= durationMs) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  const seconds = (performance.now() - start) / 1000;
  // Let what is in flight finish (a bounded wait), so its latency counts.
  const drainUntil = performance.now() + 10_000;
  while (inFlight > 0 && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const ok = byStatus['200'] ?? 0;
  const result: PublicLoadResult = {
    type: 'result',
    path: values.path,
    targetRate: rate,
    seconds: round(seconds),
    sent,
    ok,
    perSecond: Math.round(ok / seconds),
    byStatus,
    errors: errors + inFlight,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1] ?? NaN),
    },
    generatorCpuMs: Math.round((cpu.user + cpu.system) / 1000),
  };
  // Requests still queued in the destroyed agent would keep the process alive.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
