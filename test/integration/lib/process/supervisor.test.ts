import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../../../cli/main';
import { createLogger } from '../../../../lib/log';
import { PROJECT_ROOT } from '../../../../lib/paths';
import { Supervisor } from '../../../../lib/process/supervisor';
import { VERSION } from '../../../../lib/version';
import { dropDatabase, testConfig } from '../../../helpers/context';
import { freePort } from '../../../helpers/store-process';

const logger = createLogger('silent', 'test');
const node = process.execPath;

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Scheduling policy (5 = SCHED_IDLE, 0 = SCHED_OTHER) and nice value of every thread of a process (man 5 proc). */
function threadScheduling(pid: number): { policy: number; nice: number }[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    return { policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) };
  });
}

const SCHED_IDLE = 5;
const SCHED_OTHER = 0;

describe('Supervisor', () => {
  it('restarts a child that dies', async () => {
    const sup = new Supervisor(
      [{ name: 'sleeper', command: node, args: ['-e', 'setInterval(() => {}, 1000)'] }],
      logger,
    );
    await sup.start();
    const first = sup.pid('sleeper')!;
    process.kill(first, 'SIGKILL');
    await until(
      () => sup.restartCount('sleeper') === 1 && sup.pid('sleeper') !== undefined && sup.pid('sleeper') !== first,
      5_000,
    );
    const second = sup.pid('sleeper')!;
    expect(alive(second)).toBe(true);
    await sup.stop();
    expect(alive(second)).toBe(false);
  });

  it('stops children in reverse order and kills one that ignores SIGTERM within the deadline', async () => {
    // Each child says when its SIGTERM handler is in place (a marker file), so a slow start cannot race the stop.
    const marker = (name: string) => path.join(os.tmpdir(), `tm-sup-${process.pid}-${Date.now()}-${name}`);
    const ready = { first: marker('first'), second: marker('second') };
    const stubborn =
      "process.on('SIGTERM', () => {}); require('fs').writeFileSync(process.argv[1], 'ok'); setInterval(() => {}, 1000)";
    const polite =
      "process.on('SIGTERM', () => process.exit(0)); require('fs').writeFileSync(process.argv[1], 'ok'); setInterval(() => {}, 1000)";
    const sup = new Supervisor(
      [
        { name: 'first', command: node, args: ['-e', polite, ready.first] },
        { name: 'second', command: node, args: ['-e', stubborn, ready.second] },
      ],
      logger,
    );
    await sup.start();
    await until(() => fs.existsSync(ready.first) && fs.existsSync(ready.second), 10_000);
    for (const f of Object.values(ready)) fs.rmSync(f, { force: true });
    const pids = { first: sup.pid('first')!, second: sup.pid('second')! };
    const started = Date.now();
    const stopping = sup.stop(1_500);
    // While the supervisor waits on the stubborn last child, the first one must not have been touched yet.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(alive(pids.second)).toBe(true);
    expect(alive(pids.first)).toBe(true);
    await stopping;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(alive(pids.second)).toBe(false);
    expect(alive(pids.first)).toBe(false);
    expect(sup.restartCount('first') + sup.restartCount('second')).toBe(0);
  });
});

describe('background priority', () => {
  // The child reports, once its threads are up, whether it holds the IPC channel and what it was started as.
  const script =
    "setTimeout(() => require('fs').writeFileSync(process.argv[1], JSON.stringify({ connected: process.connected, pid: process.pid })), 200); setInterval(() => {}, 1000)";
  const run = async (priority: 'idle' | 'low' | 'normal') => {
    const marker = path.join(os.tmpdir(), `tm-sup-prio-${process.pid}-${Date.now()}-${priority}`);
    const sup = new Supervisor([{ name: 'bg', command: node, args: ['-e', script, marker], priority }], logger);
    await sup.start();
    try {
      await until(() => fs.existsSync(marker), 10_000);
      const pid = sup.pid('bg')!;
      return {
        pid,
        report: JSON.parse(fs.readFileSync(marker, 'utf8')) as { connected: boolean; pid: number },
        threads: threadScheduling(pid),
      };
    } finally {
      await sup.stop();
      fs.rmSync(marker, { force: true });
    }
  };

  it('idle: every thread of the role runs under SCHED_IDLE, and the role is the program itself with its IPC channel', async () => {
    const { pid, report, threads } = await run('idle');
    expect(threads.length).toBeGreaterThan(1); // node's own threads, created after the start, inherit it
    expect(threads.every((t) => t.policy === SCHED_IDLE)).toBe(true);
    // chrt replaced itself with node: the pid the supervisor signals is the role's, and IPC survived the exec.
    expect(report).toEqual({ connected: true, pid });
  });

  it('low: every thread at nice 19, normal policy', async () => {
    const { pid, report, threads } = await run('low');
    expect(report).toEqual({ connected: true, pid });
    expect(threads.every((t) => t.policy === SCHED_OTHER && t.nice === 19)).toBe(true);
  });

  it("normal: the supervisor's own scheduling", async () => {
    const { threads } = await run('normal');
    const own = os.getPriority();
    expect(threads.every((t) => t.policy === SCHED_OTHER && t.nice === own)).toBe(true);
  });
});

describe('a supervisor that is killed outright', () => {
  it('takes its children with it: they see the IPC channel close and stop', async () => {
    const dist = path.join(PROJECT_ROOT, 'dist', 'lib');
    const child = `require(${JSON.stringify(path.join(dist, 'process', 'shutdown.js'))}).onShutdown(async () => {}); setInterval(() => {}, 1000)`;
    const parentScript = `
      const { Supervisor } = require(${JSON.stringify(path.join(dist, 'process', 'supervisor.js'))});
      const { createLogger } = require(${JSON.stringify(path.join(dist, 'log.js'))});
      const sup = new Supervisor([{ name: 'role', command: process.execPath, args: ['-e', ${JSON.stringify(child)}] }], createLogger('silent', 'test'));
      sup.start().then(() => setTimeout(() => process.stdout.write(String(sup.pid('role')) + '\\n'), 300));
      setInterval(() => {}, 1000);`;
    const parent = spawn(node, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((resolve) =>
      parent.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    await until(() => !alive(childPid), 5_000);
    expect(alive(childPid)).toBe(false);
  });
});

describe('npm start (all roles under the supervisor)', () => {
  jest.setTimeout(120_000);

  it('comes up ready, stops on SIGTERM within 10 s, and starts again on the same data', async () => {
    const config = testConfig();
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      STORE_PORT: String(await freePort()),
      DATABASE_URL: config.DATABASE_URL,
      REDIS_PREFIX: config.REDIS_PREFIX,
      CLICKHOUSE_DATABASE: config.CLICKHOUSE_DATABASE,
      DATA_DIR: config.DATA_DIR,
      LOG_LEVEL: 'warn',
    };
    let running: ReturnType<typeof spawn> | undefined;
    try {
      for (let round = 0; round < 2; round++) {
        const child = spawn(node, [path.join(PROJECT_ROOT, 'dist', 'lib', 'process', 'supervisor.js')], {
          env,
          stdio: 'ignore',
        });
        running = child;
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        await until(async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
          } catch {
            return false;
          }
        }, 90_000);
        const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
        expect(ready).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok', clickhouse: 'ok' } });
        // The store engine and the worker yield the CPU to the web role (BACKGROUND_PRIORITY=idle by default).
        const roleOf = (pid: string) => {
          try {
            return path.basename(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1]);
          } catch {
            return ''; // gone between the listing and the read
          }
        };
        const children = () =>
          fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
        // Worker and clock start after the web is ready, and a role started through chrt is chrt until it execs.
        const roleNames = () => children().map(roleOf).sort();
        await until(
          () => JSON.stringify(roleNames()) === JSON.stringify(['clock.js', 'main.js', 'server.js', 'store-main.js']),
          10_000,
        );
        const roles = Object.fromEntries(children().map((pid) => [roleOf(pid), Number(pid)]));
        expect(Object.keys(roles).sort()).toEqual(['clock.js', 'main.js', 'server.js', 'store-main.js']);
        expect(threadScheduling(roles['store-main.js']).every((t) => t.policy === SCHED_IDLE)).toBe(true);
        expect(threadScheduling(roles['main.js']).every((t) => t.policy === SCHED_IDLE)).toBe(true);
        expect(threadScheduling(roles['server.js']).every((t) => t.policy === SCHED_OTHER)).toBe(true);
        expect(threadScheduling(roles['clock.js']).every((t) => t.policy === SCHED_OTHER)).toBe(true);
        if (round === 0) {
          // `tidemark status` lists the three roles that keep a heartbeat, with this build's version.
          const io = {
            lines: [] as string[],
            out: (t: string) => void io.lines.push(t),
            err: (t: string) => void io.lines.push(t),
            stdin: async () => '',
          };
          await until(async () => {
            io.lines.length = 0;
            if ((await main(['status', '--json'], io, env)) !== 0) return false;
            const status = JSON.parse(io.lines[0]) as { roles: { role: string; pid: number; version: string }[] };
            return JSON.stringify(status.roles.map((r) => r.role)) === JSON.stringify(['clock', 'web', 'worker']);
          }, 15_000);
          const status = JSON.parse(io.lines[0]);
          expect(status.roles.map((r: { pid: number }) => r.pid).sort()).toEqual(
            [roles['clock.js'], roles['server.js'], roles['main.js']].sort(),
          );
          expect(status.roles.every((r: { version: string }) => r.version === VERSION)).toBe(true);
          expect(status.store).toMatchObject({ reachable: true, embedded: true });
          expect(status.queues.map((q: { queue: string }) => q.queue)).toEqual([
            'ingest',
            'jobs',
            'webhook-events',
            'webhook-deliveries',
            'llm',
          ]);
        }
        const started = Date.now();
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
      }
    } finally {
      if (running && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        await new Promise((r) => running!.once('exit', r));
      }
      await dropDatabase(config.DATABASE_URL);
    }
  });
});
