// Typed errors (DESIGN §2 rule 6). Thrown anywhere, rendered in one place by api/middleware/errors.ts.
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, code = 'VALIDATION_ERROR') => new HttpError(400, code, message);
export const unauthorized = (message = 'Authentication required') => new HttpError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'Insufficient permission', code = 'FORBIDDEN') => new HttpError(403, code, message);
export const notFound = (message = 'Not found') => new HttpError(404, 'NOT_FOUND', message);
export const conflict = (message: string) => new HttpError(409, 'CONFLICT', message);

/** 429 with Retry-After in whole seconds (at least 1), for every limit that refuses a request. */
export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, 'RATE_LIMITED', message, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

export const serviceUnavailable = (message = 'Service temporarily unavailable; retry shortly', retryAfterSeconds = 5) =>
  new HttpError(503, 'SERVICE_UNAVAILABLE', message, { 'Retry-After': String(retryAfterSeconds) });

/** A dependency (Redis, a queue) that fails mid-request is a 503 the client may retry, not a 500. */
export async function orUnavailable<T>(work: Promise<T>, message?: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw serviceUnavailable(message);
  }
}

// Node's errno codes for a peer that cannot be reached or went away mid-request.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/**
 * True when a backing store could not be reached or did not answer in time (refused, reset, timed out:
 * @clickhouse/client reports its request timeout as "Timeout error."), not when it answered with an error: a
 * ClickHouse or PostgreSQL exception carries its own code and stays a 500.
 */
export function isUnreachable(err: unknown, depth = 0): boolean {
  // Duck-typed: errors of Node's own modules need not share this realm's Error (under jest they do not).
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const { code, message, errors, cause } = err as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
    cause?: unknown;
  };
  if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
  if (message === 'Timeout error.' || message === 'socket hang up') return true;
  if (Array.isArray(errors) && errors.some((e) => isUnreachable(e, depth + 1))) return true; // AggregateError
  return isUnreachable(cause, depth + 1);
}

/** PostgreSQL unique_violation, for turning a lost insert race into a 409. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}
