// `npm start`: runs every role of a single-machine install as supervised child processes. A child that
// dies is restarted with backoff; SIGTERM stops them in reverse start order within the deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { clickHouseTarget, createClickHouse } from '../clickhouse/client';
import { configOrExit } from '../config';
import { createLogger, type Logger } from '../log';
import { DIST_ROOT } from '../paths';
import { backgroundLaunch, type BackgroundPriority } from './cpuPriority';
import { onShutdown, SHUTDOWN_DEADLINE_MS } from './shutdown';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  /** Resolves when the child is ready to serve; later children start after it. */
  ready?: () => Promise<void>;
  /** CPU priority of a background role (cpuPriority.ts); unset = the supervisor's own. */
  priority?: BackgroundPriority;
}

const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

export class Supervisor {
  private readonly running = new Map<string, ChildProcess>();
  private readonly restarts = new Map<string, number>();
  private stopping = false;

  constructor(
    private readonly specs: ChildSpec[],
    private readonly logger: Logger,
  ) {}

  restartCount(name: string): number {
    return this.restarts.get(name) ?? 0;
  }

  pid(name: string): number | undefined {
    return this.running.get(name)?.pid;
  }

  async start(): Promise<void> {
    for (const spec of this.specs) {
      this.launch(spec, 0);
      if (spec.ready) await spec.ready();
    }
  }

  private launch(spec: ChildSpec, failures: number): void {
    // The IPC channel lets a child notice when the supervisor is gone, even after a SIGKILL.
    const launch = backgroundLaunch(spec.command, spec.args, spec.priority ?? 'normal');
    const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    if (child.pid !== undefined) launch.after?.(child.pid);
    const startedAt = Date.now();
    this.running.set(spec.name, child);
    this.logger.info({ child: spec.name, pid: child.pid, cpu: launch.how }, 'child started');
    if (spec.priority === 'idle' && launch.how !== 'SCHED_IDLE') {
      this.logger.warn({ child: spec.name, cpu: launch.how }, 'SCHED_IDLE unavailable (no working chrt): background role runs niced instead');
    }
    child.on('exit', (code, signal) => {
      if (this.running.get(spec.name) === child) this.running.delete(spec.name);
      if (this.stopping) return;
      const stable = Date.now() - startedAt > STABLE_AFTER_MS;
      const nextFailures = stable ? 1 : failures + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (nextFailures - 1));
      this.restarts.set(spec.name, this.restartCount(spec.name) + 1);
      this.logger.error({ child: spec.name, code, signal, restartInMs: delay }, 'child exited; restarting');
      setTimeout(() => {
        if (!this.stopping) this.launch(spec, nextFailures);
      }, delay).unref();
    });
  }

  /** SIGTERM each child in reverse order, waiting for each; SIGKILL whatever outlives the deadline. */
  async stop(deadlineMs = SHUTDOWN_DEADLINE_MS - 500): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + deadlineMs;
    for (const spec of [...this.specs].reverse()) {
      const child = this.running.get(spec.name);
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const remaining = Math.max(0, deadline - Date.now());
      const timer = setTimeout(() => child.kill('SIGKILL'), remaining);
      await exited;
      clearTimeout(timer);
      this.logger.info({ child: spec.name }, 'child stopped');
    }
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

if (require.main === module) {
  const config = configOrExit();
  const logger = createLogger(config.LOG_LEVEL, 'supervisor');
  const node = process.execPath;
  const script = (rel: string) => path.join(DIST_ROOT, rel);
  const specs: ChildSpec[] = [];
  if (config.EMBEDDED_STORE) {
    const probe = createClickHouse(clickHouseTarget(config, 'default'));
    specs.push({
      name: 'store',
      command: node,
      args: [script('lib/clickhouse/store-main.js')],
      priority: config.BACKGROUND_PRIORITY,
      ready: () => waitFor(async () => (await probe.ping()).success, 60_000, 'store'),
    });
  }
  specs.push(
    {
      name: 'web',
      command: node,
      args: [script('api/server.js')],
      ready: () =>
        waitFor(async () => (await fetch(`http://127.0.0.1:${config.PORT}/healthz`)).ok, 120_000, 'web'),
    },
    { name: 'worker', command: node, args: [script('workers/main.js')], priority: config.BACKGROUND_PRIORITY },
    { name: 'clock', command: node, args: [script('jobs/clock.js')] },
  );
  const supervisor = new Supervisor(specs, logger);
  onShutdown(() => supervisor.stop());
  supervisor.start().then(
    () => logger.info({ url: config.PUBLIC_URL }, 'tidemark is running'),
    (err: Error) => {
      logger.error({ err: err.message }, 'start-up failed');
      void supervisor.stop().then(() => process.exit(1));
    },
  );
}
