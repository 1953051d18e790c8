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
    'req.headers.authorization',
    'req.headers.cookie',
    'req.headers["x-api-key"]',
    'req.headers["x-forwarded-for"]',
    'headers.authorization',
    'headers.cookie',
  ],
  censor: '[redacted]',
};

export function createLogger(level: string, role: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { role }, redact, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
