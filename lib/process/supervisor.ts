// `npm start`: runs every role of a single-machine install as supervised child processes. A child that
// dies is restarted with backoff; SIGTERM stops them in reverse start order within the deadline.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { configOrExit } from '../config';
import { createLogger, type Logger } from '../log';
import { DIST_ROOT } from '../paths';
import { type BackgroundPriority, backgroundLaunch } from './cpuPriority';
import { onShutdown, SHUTDOWN_DEADLINE_MS } from './shutdown';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  /**
   * The child tells the supervisor when it has started (runRole's `ready` message): later children start after
   * it, and an exit before that is a failed start. Without it a child counts as started once spawned.
   */
  signalsReady?: boolean;
  /** CPU priority of a background role (cpuPriority.ts); unset = the supervisor's own. */
  priority?: BackgroundPriority;
}

const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 60_000;
/** Failed starts in a row after which a child is given up on (and the supervisor stops). */
export const MAX_FAILED_STARTS = 5;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

export class Supervisor {
  private readonly running = new Map<string, ChildProcess>();
  private readonly restarts = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter>();
  private stopping = false;

  /** `onGiveUp` runs when a child has failed to start MAX_FAILED_STARTS times in a row. */
  constructor(
    private readonly specs: ChildSpec[],
    private readonly logger: Logger,
    private readonly onGiveUp: (child: string, reason: string) => void = () => undefined,
  ) {}

  restartCount(name: string): number {
    return this.restarts.get(name) ?? 0;
  }

  pid(name: string): number | undefined {
    return this.running.get(name)?.pid;
  }

  async start(): Promise<void> {
    for (const spec of this.specs) {
      const ready = spec.signalsReady
        ? new Promise<void>((resolve, reject) => this.waiters.set(spec.name, { resolve, reject }))
        : Promise.resolve();
      this.launch(spec, 0, 0);
      await ready;
    }
  }

  private launch(spec: ChildSpec, crashes: number, failedStarts: number): void {
    // The IPC channel lets a child notice when the supervisor is gone, even after a SIGKILL, and say it is ready.
    const launch = backgroundLaunch(spec.command, spec.args, spec.priority ?? 'normal');
    const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    if (child.pid !== undefined) launch.after?.(child.pid);
    const startedAt = Date.now();
    let started = !spec.signalsReady;
    const lastLine = lastLineOf(child);
    this.running.set(spec.name, child);
    this.logger.info({ child: spec.name, pid: child.pid, cpu: launch.how }, 'child started');
    if (spec.priority === 'idle' && launch.how !== 'SCHED_IDLE') {
      this.logger.warn(
        { child: spec.name, cpu: launch.how },
        'SCHED_IDLE unavailable (no working chrt): background role runs niced instead',
      );
    }
    child.on('message', (message: { type?: string }) => {
      if (message?.type !== 'ready' || started) return;
      started = true;
      this.logger.info({ child: spec.name, ms: Date.now() - startedAt }, 'child ready');
      this.waiters.get(spec.name)?.resolve();
      this.waiters.delete(spec.name);
    });
    child.on('exit', (code, signal) => {
      if (this.running.get(spec.name) === child) this.running.delete(spec.name);
      if (this.stopping) return;
      const failures = started ? 0 : failedStarts + 1;
      const reason = lastLine() ?? `exit code ${code ?? signal}`;
      if (failures >= MAX_FAILED_STARTS) {
        this.logger.fatal(
          { child: spec.name, failedStarts: failures, reason },
          `${spec.name} failed to start ${failures} times in a row; giving up`,
        );
        this.waiters.get(spec.name)?.reject(new Error(`${spec.name} failed to start: ${reason}`));
        this.waiters.delete(spec.name);
        this.onGiveUp(spec.name, reason);
        return;
      }
      // A child that ran for a while starts over; one that keeps dying soon after starting backs off.
      const nextCrashes = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : crashes + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (nextCrashes - 1));
      this.restarts.set(spec.name, this.restartCount(spec.name) + 1);
      this.logger.error(
        { child: spec.name, code, signal, reason, failedStarts: failures, restartInMs: delay },
        'child exited; restarting',
      );
      // Not unref'd: while a child waits to be restarted, nothing else may keep the supervisor alive.
      setTimeout(() => {
        if (!this.stopping) this.launch(spec, nextCrashes, failures);
      }, delay);
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

/** Passes the child's stderr through and remembers its last line (the fatal line of a failed start, as its message). */
function lastLineOf(child: ChildProcess): () => string | undefined {
  let last: string | undefined;
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    const complete = lines.filter((l) => l.trim());
    if (complete.length) last = complete[complete.length - 1];
  });
  return () => {
    const line = partial.trim() || last;
    if (!line) return undefined;
    try {
      const parsed = JSON.parse(line) as { msg?: unknown };
      return typeof parsed.msg === 'string' ? parsed.msg : line;
    } catch {
      return line;
    }
  };
}

if (require.main === module) {
  const config = configOrExit('supervisor');
  const logger = createLogger(config.LOG_LEVEL, 'supervisor');
  const node = process.execPath;
  const script = (rel: string) => path.join(DIST_ROOT, rel);
  const specs: ChildSpec[] = [];
  const role = (name: string, file: string, priority?: BackgroundPriority): ChildSpec => ({
    name,
    command: node,
    args: [script(file)],
    signalsReady: true,
    ...(priority ? { priority } : {}),
  });
  if (config.EMBEDDED_STORE) specs.push(role('store', 'lib/clickhouse/store-main.js', config.BACKGROUND_PRIORITY));
  specs.push(
    role('web', 'api/server.js'),
    role('worker', 'workers/main.js', config.BACKGROUND_PRIORITY),
    role('clock', 'jobs/clock.js'),
  );
  const giveUp = () => void supervisor.stop().then(() => process.exit(1));
  const supervisor: Supervisor = new Supervisor(specs, logger, giveUp);
  onShutdown(() => supervisor.stop());
  supervisor.start().then(
    () => logger.info({ url: config.PUBLIC_URL }, 'tidemark is running'),
    (err: Error) => {
      logger.error({ err: err.message }, 'start-up failed');
      giveUp();
    },
  );
}
