// SIGTERM/SIGINT handling shared by every role (DESIGN §2 rule 8): stop once, within 10 s, then exit.
export const SHUTDOWN_DEADLINE_MS = 10_000;

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
}
