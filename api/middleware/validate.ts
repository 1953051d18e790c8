// Zod at the edge: a failed parse becomes 400 VALIDATION_ERROR naming the field.
import type { Request, RequestHandler } from 'express';
import { UUID } from '../../lib/checks';
import { badRequest, notFound } from '../../lib/errors';
import type { z } from '../../lib/zod';

export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue.path.join('.');
  return field ? `${field}: ${issue.message}` : issue.message;
}

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeZodError(result.error));
  return result.data;
}

export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  if (req.body === undefined || req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    throw badRequest('Request body must be a JSON object');
  }
  return parse(schema, req.body);
}

/** Unknown query parameters are ignored: the schemas are plain (stripping) objects. */
export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  return parse(schema, req.query);
}

/** A path id that is not a UUID cannot name anything: 404, like an id that names nothing. */
export function pathUuid(req: Request, name: string, what: string): string {
  const value = req.params[name];
  if (typeof value !== 'string' || !UUID.test(value)) throw notFound(`${what} not found`);
  return value.toLowerCase();
}

// C0 controls and DEL: no route names anything with them, and PostgreSQL refuses NUL in text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a request path is unreadable (not valid percent-encoded UTF-8, or decodes to a control character), if it is. */
export function pathProblem(path: string): string | undefined {
  // Node's HTTP parser already refuses raw control characters in a request line.
  if (!path.includes('%')) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return 'Request path is not valid percent-encoded UTF-8';
  }
  return CONTROL.test(decoded) ? 'Request path holds a control character' : undefined;
}

/**
 * Refuses a request whose path is not valid percent-encoded UTF-8 (`%C0%AF`, a lone `%`) or decodes to a
 * control character (`%00`), before any route decodes its parameters: 400 in the envelope on every route,
 * rather than a URIError or a PostgreSQL encoding error deep inside one.
 */
export function pathGuard(): RequestHandler {
  return (req, _res, next) => {
    const problem = pathProblem(req.path);
    next(problem ? badRequest(problem) : undefined);
  };
}
