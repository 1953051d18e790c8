// SIGTERM/SIGINT handling shared by every role (DESIGN §2 rule 8): stop once, within 10 s, then exit.
import { unsupportedNode } from './nodeVersion';
import { captureStrayOutput, writeFatal } from './output';
import { StartupError } from './startup';

export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * Runs `stop` on SIGTERM or SIGINT, and when the supervising parent goes away (its IPC channel closes), so a
 * role never outlives a supervisor that was killed. Register it before start-up work: a signal that
 * arrives while the role is still starting then waits for the start and stops what was started.
 */
export function onShutdown(stop: () => Promise<void>, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => process.exit(1), deadlineMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  if (process.connected) process.on('disconnect', handler);
}

/**
 * Starts a role with its shutdown handler already in place. A failed start exits with one JSON line naming
 * the reason (and the setting, when known); a finished start tells a supervising parent it is ready.
 */
export function runRole<T extends { stop(): Promise<void> }>(
  name: string,
  start: () => Promise<T>,
  opts: { logLevel?: string } = {},
): void {
  const unsupported = unsupportedNode();
  if (unsupported) {
    writeFatal(name, unsupported);
    process.exit(1);
  }
  captureStrayOutput(name, opts.logLevel ?? 'info');
  const started = start();
  onShutdown(async () => {
    const role = await started.catch(() => undefined);
    await role?.stop();
  });
  started.then(
    () => {
      if (process.connected) process.send?.({ type: 'ready', role: name });
    },
    (err: Error) => {
      const setting = err instanceof StartupError ? { setting: err.setting } : {};
      writeFatal(name, `failed to start: ${err.message}`, setting);
      process.exit(1);
    },
  );
}
