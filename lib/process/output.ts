// Every line a Tidemark process writes is JSON (pino's shape): a failed start, a bad configuration, and what
// libraries or Node itself would print as plain text (console.*, process warnings) all go through pino.
import pino from 'pino';
import { createLogger, type Logger } from '../log';

/** The one line a process writes when it cannot start, on stderr, before it exits. */
export function writeFatal(role: string, message: string, fields: Record<string, unknown> = {}): void {
  const logger = pino(
    { base: { role }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ fd: 2, sync: true }),
  );
  logger.fatal(fields, message);
}

/** Routes console.* and process warnings of this process into a JSON logger for `role`. */
export function captureStrayOutput(role: string, level: string): Logger {
  const logger = createLogger(level, role);
  const text = (args: unknown[]) =>
    args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : safeJson(a))).join(' ');
  const info = (...args: unknown[]) => logger.info({ source: 'console' }, text(args));
  console.log = info;
  console.info = info;
  console.debug = (...args: unknown[]) => logger.debug({ source: 'console' }, text(args));
  console.warn = (...args: unknown[]) => logger.warn({ source: 'console' }, text(args));
  console.error = (...args: unknown[]) => logger.error({ source: 'console' }, text(args));
  process.removeAllListeners('warning');
  process.on('warning', (w) =>
    logger.warn({ source: 'node', warning: w.name, code: (w as NodeJS.ErrnoException).code }, w.message),
  );
  return logger;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
