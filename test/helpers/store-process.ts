// Runs the compiled store role (dist/lib/clickhouse/store-main.js) as a child process for integration tests.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface StoreProcess {
  url: string;
  port: number;
  /** The credential the store created under its DATA_DIR; clients send it as CLICKHOUSE_PASSWORD. */
  password: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

export async function startStoreProcess(opts: { dataDir: string; port?: number }): Promise<StoreProcess> {
  const port = opts.port ?? (await freePort());
  const child = spawnStore(opts.dataDir, port);
  const listening = await waitForListening(child);
  return {
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    password: fs.readFileSync(path.join(opts.dataDir, 'store-credential'), 'utf8').trim(),
    stop: () => stopChild(child),
  };
}

/** The store role as a child process on `dataDir` and `port`, its output piped. */
export function spawnStore(dataDir: string, port: number): ChildProcess {
  const root = repoRoot();
  const entry = path.join(root, 'dist', 'lib', 'clickhouse', 'store-main.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npx tsc -p tsconfig.json\` first`);
  return spawn(process.execPath, [entry], {
    cwd: root,
    env: {
      DATA_DIR: dataDir,
      STORE_PORT: String(port),
      LOG_LEVEL: 'info',
      NODE_ENV: 'test',
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with the port from the `"msg":"store listening"` log line; rejects with stderr on exit or timeout. */
function waitForListening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`store process ${why}\nstderr:\n${stderr}\nstdout:\n${stdout.slice(-4000)}`));
    };
    const timer = setTimeout(
      () => fail(`did not log "store listening" within ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS,
    );
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      for (const line of stdout.split('\n')) {
        if (!line.includes('"store listening"')) continue;
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'store listening' && typeof entry.port === 'number') {
          clearTimeout(timer);
          child.removeListener('exit', onExit);
          resolve(entry.port);
          return;
        }
      }
    });
    const onExit = (code: number | null, signal: string | null): void =>
      fail(`exited early (code ${code}, signal ${signal})`);
    child.once('exit', onExit);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = parent;
  }
  // When this file itself runs compiled from dist/, the repository root is above dist/.
  return path.basename(dir) === 'dist' ? path.dirname(dir) : dir;
}
