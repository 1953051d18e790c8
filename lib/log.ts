// pino logger (DESIGN §2 rule 7). Redaction is a second line of defence: code never logs raw IPs, keys,
// tokens or passwords in the first place.
import pino, { type Logger } from 'pino';

export type { Logger };

const redact = {
  paths: [
    'password',
    '*.password',
    'token',
    '*.token',
    'key',
    '*.key',
    'ip',
    '*.ip',
    'clientIp',
    '*.clientIp',
    'slack_webhook_url',
    '*.slack_webhook_url',
    'req.headers.authorization',
    'req.headers.cookie',
    'req.headers["x-api-key"]',
    'req.headers["x-forwarded-for"]',
    'headers.authorization',
    'headers.cookie',
  ],
  censor: '[redacted]',
};

export function createLogger(level: string, role: string, destination: pino.DestinationStream = stdout): Logger {
  return pino({ level, base: { role }, redact, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

// When a role outlives its parent the stdout pipe is gone; pino's default sonic-boom destination then
// retries the EPIPE write forever and blocks shutdown. Writing through process.stdout and dropping lines
// once it has failed keeps a process with nowhere to log able to stop.
let stdoutBroken = false;
let stdoutWatched = false;
const stdout: pino.DestinationStream = {
  write(line: string) {
    if (!stdoutWatched) {
      stdoutWatched = true;
      process.stdout.on('error', () => {
        stdoutBroken = true;
      });
    }
    if (!stdoutBroken) process.stdout.write(line);
  },
};
