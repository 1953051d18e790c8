// Shared by the benchmarks: start the whole service (supervisor, every role) on fresh, isolated resources,
// set up an enterprise account with lifted limits, a website and a full_access key; clean everything up.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { type ClickHouseClient, clickHouseTarget, createClickHouse } from '../lib/clickhouse/client';
import { loadConfig } from '../lib/config';
import { percentile } from './ingest-load';
import { ageSeconds, cpuMs, cpuSnapshot, serviceProcesses } from './processes';

export const ROOT = path.resolve(__dirname, '..', '..');
export const DIST = path.join(ROOT, 'dist');
const PG_BASE = 'postgres://postgres@127.0.0.1:5432';
const REDIS_URL = 'redis://127.0.0.1:6379';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function until<T>(
  what: string,
  timeoutMs: number,
  intervalMs: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(intervalMs);
  }
  throw new Error(`${what}: not reached within ${timeoutMs} ms`);
}

export async function api(
  base: string,
  method: string,
  p: string,
  body?: unknown,
  token?: string,
  // biome-ignore lint/suspicious/noExplicitAny: bench replies are read field by field
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, json };
}

export function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'tidemark.js'), ...args],
      { env, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`tidemark ${args.join(' ')} failed: ${stderr || err.message}`));
        else resolve(stdout.trim());
      },
    );
  });
}

export async function cleanup(dbName: string, prefix: string, dataDir: string): Promise<void> {
  const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    let rounds = 0;
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.unlink(...keys);
    } while (cursor !== '0' && ++rounds < 1_000_000);
    log(`cleaned up: database ${dbName} dropped, ${deleted} Redis keys deleted, data dir removed`);
  } finally {
    redis.disconnect();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}

export interface Service {
  id: string;
  base: string;
  env: NodeJS.ProcessEnv;
  clickhouse: ClickHouseClient;
  website: { id: string; tracking_code: string };
  key: string;
  supervisorPid: number;
  /** SIGTERM, then SIGKILL after 20 s (roles follow the supervisor through their IPC channel). */
  stopProcesses(): Promise<void>;
  /** Drops the run's database, Redis keys and data directory. */
  cleanup(): Promise<void>;
  /** stopProcesses, then cleanup unless `keep`. */
  stop(keep?: boolean): Promise<void>;
}

/** Starts the service for a benchmark; `timezone` is the website's, `extraEnv` goes to the service only. */
export async function startService(opts: {
  name: string;
  timezone?: string;
  extraEnv?: NodeJS.ProcessEnv;
}): Promise<Service> {
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const dbName = `tidemark_${opts.name}_${id}`;
  const prefix = `tm${opts.name}_${id}`;
  const chDatabase = `${opts.name}_${id}`;
  const dataDir = path.join(os.tmpdir(), `tidemark-${opts.name}-${id}`);
  const logFile = path.join(os.tmpdir(), `tidemark-${opts.name}-${id}.log`);
  const port = await freePort();
  let storePort = await freePort();
  while (storePort === port) storePort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    PORT: String(port),
    // The dashboard's sign-in refuses requests from any origin other than PUBLIC_URL's.
    PUBLIC_URL: base,
    STORE_PORT: String(storePort),
    DATABASE_URL: `${PG_BASE}/${dbName}`,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    CLICKHOUSE_DATABASE: chDatabase,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  fs.mkdirSync(dataDir, { recursive: true });
  log(`database ${dbName}, ClickHouse database ${chDatabase}, port ${port}, store ${storePort}; log ${logFile}`);
  const logStream = fs.createWriteStream(logFile);
  const supervisor: ChildProcess = spawn(process.execPath, [path.join(DIST, 'lib', 'process', 'supervisor.js')], {
    env: { ...env, ...opts.extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  supervisor.stdout!.pipe(logStream, { end: false });
  supervisor.stderr!.pipe(logStream, { end: false });
  const exited = new Promise<void>((resolve) => supervisor.on('exit', () => resolve()));
  // The service's own configuration, so the credential is the one its store created (or this call creates first).
  const clickhouse = createClickHouse(clickHouseTarget(loadConfig({ ...env, ...opts.extraEnv })), {
    requestTimeoutMs: 1_800_000,
  });
  const stopProcesses = async () => {
    await clickhouse.close().catch(() => undefined);
    if (supervisor.exitCode === null && supervisor.signalCode === null) {
      log('stopping the service (SIGTERM)');
      supervisor.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000)]);
      if (supervisor.exitCode === null && supervisor.signalCode === null) {
        log('service did not stop within 20 s; SIGKILL');
        supervisor.kill('SIGKILL');
      }
    }
    logStream.end();
  };
  const cleanupRun = () => cleanup(dbName, prefix, dataDir);
  const stop = async (keep = false) => {
    await stopProcesses();
    if (keep) log(`kept: database ${dbName}, Redis ${prefix}:*, data ${dataDir}`);
    else await cleanupRun();
  };
  try {
    await until('GET /readyz = 200', 180_000, 250, async () => {
      if (supervisor.exitCode !== null) throw new Error(`the service exited during start-up; see ${logFile}`);
      return (await fetch(`${base}/readyz`)).status === 200 ? true : undefined;
    });
    const reg = await api(base, 'POST', '/api/auth/register', {
      email: `bench-${id}@example.com`,
      password: `bench password ${id}`,
    });
    if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.json)}`);
    const token: string = reg.json.data.token;
    const teamId: string = reg.json.data.team.id;
    log(await runCli(env, ['admin', 'plan', '--team', teamId, '--plan', 'enterprise']));
    log(await runCli(env, ['admin', 'limits', '--team', teamId, '--rpm', 'unlimited', '--monthly', 'unlimited']));
    const site = await api(
      base,
      'POST',
      '/api/websites',
      { domain: 'shop.example.com', name: 'Bench shop', timezone: opts.timezone ?? 'UTC' },
      token,
    );
    if (site.status !== 201) throw new Error(`create website: ${site.status} ${JSON.stringify(site.json)}`);
    const keyRes = await api(
      base,
      'POST',
      `/api/teams/${teamId}/api-keys`,
      { name: 'bench', permission: 'full_access' },
      token,
    );
    if (keyRes.status !== 201) throw new Error(`create key: ${keyRes.status} ${JSON.stringify(keyRes.json)}`);
    return {
      id,
      base,
      env,
      clickhouse,
      website: site.json.data.website,
      key: keyRes.json.data.key,
      supervisorPid: supervisor.pid!,
      stopProcesses,
      cleanup: cleanupRun,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

export interface Timing {
  p50: number;
  p99: number;
  /** 200, or the last non-200 status seen (warm-ups included). */
  status: number;
  /** The first non-200 reply's body, if any. */
  failure?: string;
  /** CPU milliseconds per timed request of the web role and the store (embedded mode). */
  cpu: { web: number; store: number };
}

/** Times GET `path` with the service's key, one request at a time: 3 warm-ups, then `runs` timed requests. */
export async function timeGet(
  service: Service,
  path: string,
  runs: number,
  headers: Record<string, string> = { 'x-api-key': service.key },
): Promise<Timing> {
  const url = `${service.base}${path}`;
  let status = 200;
  let failure: string | undefined;
  const once = async (): Promise<number> => {
    const t = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    const body = await res.text();
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (res.status !== 200) {
      status = res.status;
      failure ??= `HTTP ${res.status} ${body.slice(0, 600)}`;
    }
    return ms;
  };
  for (let i = 0; i < 3; i++) await once();
  const procs = serviceProcesses(service.supervisorPid);
  const before = cpuSnapshot(procs);
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(await once());
  const cpu = cpuMs(before, cpuSnapshot(procs));
  ms.sort((a, b) => a - b);
  return {
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    status,
    failure,
    cpu: { web: (cpu.web ?? NaN) / runs, store: (cpu.store ?? NaN) / runs },
  };
}

/** One row of a latency table: name │ p50 │ p99 │ target │ PASS, MISS or the HTTP status. */
export function timingRow(
  name: string,
  width: number,
  r: Timing,
  target: { p50: number; p99: number },
  baseline?: Timing,
): string {
  const pass = r.status === 200 && r.p50 <= target.p50 && r.p99 <= target.p99;
  const verdict = r.status !== 200 ? `HTTP ${r.status}` : pass ? 'PASS' : 'MISS';
  const cpu = `${r.cpu.web.toFixed(1)} / ${r.cpu.store.toFixed(1)} ms`.padStart(17);
  const ratio = baseline ? ` │ ${(r.p50 / baseline.p50).toFixed(2)}×`.padEnd(9) : '';
  return `${name.padEnd(width)} │ ${`${r.p50.toFixed(0)} ms`.padStart(8)} │ ${`${r.p99.toFixed(0)} ms`.padStart(8)} │ ${cpu}${ratio} │ ${`${target.p50} / ${target.p99} ms`.padEnd(16)} │ ${verdict}`;
}

/** The header of timingRow's table (with the ratio column when rows have a baseline). */
export function timingHeader(width: number, baseline = false): string {
  return `${'query'.padEnd(width)} │ ${'p50'.padStart(8)} │ ${'p99'.padStart(8)} │ ${'CPU web / store'.padStart(17)}${baseline ? ' │ ×base ' : ''} │ target p50 / p99 │ result`;
}

/** Runs a benchmark's main and exits with its code; a crash prints its stack and exits 1. */
export function runBenchmark(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      process.stderr.write(`benchmark failed: ${err.stack ?? err.message}\n`);
      process.exit(1);
    },
  );
}

/**
 * Waits until the worker role has run past its start-up check of the store (30 s at most): the bulk insert
 * keeps the embedded store from answering pings, so a worker still starting would fail its check and the
 * supervisor would stop the service. On a busy machine the worker can start well after the web role is ready.
 */
export async function workerStarted(service: Service): Promise<void> {
  await until('the worker role past its start-up', 180_000, 1000, async () => {
    const pid = serviceProcesses(service.supervisorPid).get('worker');
    return pid !== undefined && ageSeconds(pid) > 35 ? true : undefined;
  });
}

/** Runs a load script as its own process and returns its last JSON line of type "result". */
export function runProcess<T>(script: string, args: string[], timeoutS: number): Promise<T> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [path.join(DIST, 'bench', script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let result: T | undefined;
  const rl = readline.createInterface({ input: child.stdout! });
  rl.on('line', (line) => {
    try {
      const msg = JSON.parse(line) as { type?: string };
      if (msg.type === 'result') result = msg as T;
    } catch {
      // not a JSON line
    }
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[${script}] ${d.toString()}`));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutS * 1000);
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      // The last line may still be in the pipe when the process exits.
      setTimeout(
        () => (result ? resolve(result) : reject(new Error(`${script} exited ${code} without a result`))),
        200,
      );
    }),
  );
}
