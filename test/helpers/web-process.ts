// Runs the compiled web role (dist/api/server.js) as a child process, for tests that kill it.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../lib/config';
import { freePort } from './store-process';

export interface WebProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Like a crash: SIGKILL, no shutdown of any kind. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

/** The environment that reproduces `config` in a child role (only what tests set). */
export function roleEnv(config: Config, port: number): NodeJS.ProcessEnv {
  return {
    NODE_ENV: config.NODE_ENV,
    PORT: String(port),
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    DEDUPE_REDIS_URL: config.DEDUPE_REDIS_URL,
    REDIS_PREFIX: config.REDIS_PREFIX,
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    CLICKHOUSE_DATABASE: config.CLICKHOUSE_DATABASE,
    CLICKHOUSE_USER: config.CLICKHOUSE_USER,
    CLICKHOUSE_PASSWORD: config.CLICKHOUSE_PASSWORD,
    DATA_DIR: config.DATA_DIR,
    JWT_SECRET: config.JWT_SECRET,
    LOG_LEVEL: 'info',
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
  };
}

function webEntry(): string {
  const entry = path.join(__dirname, '..', '..', 'dist', 'api', 'server.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npx tsc -p tsconfig.json\` first`);
  return entry;
}

export async function startWebProcess(config: Config): Promise<WebProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [webEntry()], {
    env: roleEnv(config, port),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, 'web listening');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves once the child logs `msg`; rejects with its output when it exits first or takes too long. */
function waitForLine(child: ChildProcess, msg: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`web process ${why}\n${out.slice(-4000)}`));
    };
    const timer = setTimeout(() => fail(`did not log "${msg}" within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited early (code ${code}, signal ${signal})`);
    child.once('exit', onExit);
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(`"msg":"${msg}"`)) {
        clearTimeout(timer);
        child.removeListener('exit', onExit);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve();
      }
    });
  });
}

/** Runs a role expected to refuse to start: its exit code and what it printed on stdout and stderr. */
export async function roleStartFailure(
  entry: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = START_TIMEOUT_MS,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const file = path.join(__dirname, '..', '..', 'dist', entry);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npx tsc -p tsconfig.json\` first`);
  const child = spawn(process.execPath, [file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close', not 'exit': exit can come before the last of stderr has been read.
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr, stdout };
}

/** Runs a web role expected to refuse to start. */
export function webStartFailure(config: Config, port: number, env: NodeJS.ProcessEnv = {}) {
  return roleStartFailure(path.join('api', 'server.js'), { ...roleEnv(config, port), ...env });
}

/** The one line a refused start writes on stderr, parsed (it must be exactly one JSON line). */
export function fatalLine(stderr: string): { level: number; role: string; msg: string; setting?: string } {
  const lines = stderr.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${lines.length}:\n${stderr}`);
  return JSON.parse(lines[0]);
}

/** Every non-empty line of `text` parses as a JSON object. */
export function allJsonLines(text: string): boolean {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .every((l) => {
      try {
        return typeof JSON.parse(l) === 'object';
      } catch {
        return false;
      }
    });
}
