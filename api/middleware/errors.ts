// The one place errors become responses (DESIGN §2 rule 6): typed errors keep their status and code,
// unreadable requests (bodies, paths) become 4xx, an unreachable store a 503 the client may retry, anything else
// a logged 500 with no internals in the body.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError, isUnreachable, serviceUnavailable } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { errorBody } from './envelope';

/** What body-parser and raw-body attach to their errors (http-errors): `expose` marks a client error. */
interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  code?: string;
}

export function notFoundHandler(): RequestHandler {
  return (_req, res) => {
    res.status(404).json(errorBody('NOT_FOUND', 'No such endpoint'));
  };
}

/** A client error body-parser raised while reading a body, as the HttpError it is answered with. */
function bodyError(err: BodyParserError, compressed: boolean): HttpError | undefined {
  if (err.type === 'entity.parse.failed')
    return new HttpError(400, 'VALIDATION_ERROR', 'Request body is not valid JSON');
  if (err.type === 'entity.too.large') return new HttpError(413, 'PAYLOAD_TOO_LARGE', 'Request body is too large');
  if (err.type === 'encoding.unsupported') {
    return new HttpError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'Content-Encoding is not supported; send gzip, deflate, br or an uncompressed body',
    );
  }
  if (err.type === 'charset.unsupported')
    return new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Request body charset is not supported');
  // Other read failures (aborted, size mismatch) carry a type; a corrupt or truncated gzip/deflate/br body is
  // zlib's own error, which body-parser passes on with status 400 and no type.
  const typed = err.type !== undefined && typeof err.status === 'number' && err.status >= 400 && err.status < 500;
  if (typed || (err.status === 400 && err.expose === true)) {
    return new HttpError(
      400,
      'VALIDATION_ERROR',
      compressed ? 'Request body could not be decompressed' : 'Request body could not be read',
    );
  }
  return undefined;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const requestId = res.locals.requestId as string | undefined;
    let typed: HttpError | undefined;
    if (err instanceof HttpError) typed = err;
    // Express decodes path parameters; a `%C0%AF` there is a URIError (api/middleware/validate.ts pathGuard
    // refuses such paths first, this is the fallback).
    else if ((err as Error | undefined)?.name === 'URIError')
      typed = new HttpError(400, 'VALIDATION_ERROR', 'Request path is not valid percent-encoded UTF-8');
    else
      typed = bodyError(
        err as BodyParserError,
        (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity',
      );
    if (!typed && isUnreachable(err)) {
      typed = serviceUnavailable();
      logger.error(
        { requestId, path: req.path, err: (err as Error).message, code: (err as BodyParserError).code },
        'backing store unreachable',
      );
    } else if (typed) {
      logger.warn({ requestId, status: typed.status, code: typed.code, path: req.path }, typed.message);
    }
    if (typed) {
      for (const [name, value] of Object.entries(typed.headers)) res.setHeader(name, value);
      res.status(typed.status).json(errorBody(typed.code, typed.message));
      return;
    }
    logger.error({ requestId, path: req.path, err }, 'unhandled error');
    res.status(500).json(errorBody('INTERNAL_ERROR', 'Internal server error'));
  };
}
