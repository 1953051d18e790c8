// A Redis of one test file's own, for what the shared one must never be made to do (refuse writes at
// maxmemory). noeviction, as production must run; nothing kept on disk.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRedis, type Redis, waitReady } from '../../lib/redis';
import { freePort } from './store-process';

export interface PrivateRedis {
  url: string;
  /** The server's process id (SIGSTOP pauses it). */
  pid: number;
  /** An admin connection (CONFIG SET maxmemory …). */
  admin: Redis;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  // Its own directory: a test that turns the append-only file on must not write it into the repository.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-redis-'));
  const server = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--dir',
      dir,
    ],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const failed = new Promise<never>((_, reject) => server.once('error', reject)); // e.g. no redis-server on PATH
  failed.catch(() => undefined);
  const url = `redis://127.0.0.1:${port}`;
  const admin = createRedis(url, 'request', 'tidemark-test');
  try {
    await Promise.race([waitReady(admin), failed]);
  } catch (err) {
    admin.disconnect();
    server.kill('SIGKILL');
    throw err;
  }
  return {
    url,
    pid: server.pid!,
    admin,
    async stop() {
      await admin.quit().catch(() => undefined);
      server.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
