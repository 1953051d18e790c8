// The one place errors become responses (DESIGN §2 rule 6): typed errors keep their status and code,
// body-parser failures become 400/413, anything else is a logged 500 with no internals in the body.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { errorBody } from './envelope';

interface BodyParserError {
  type?: string;
  status?: number;
}

export function notFoundHandler(): RequestHandler {
  return (_req, res) => {
    res.status(404).json(errorBody('NOT_FOUND', 'No such endpoint'));
  };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const requestId = res.locals.requestId as string | undefined;
    if (err instanceof HttpError) {
      logger.warn({ requestId, status: err.status, code: err.code, path: req.path }, err.message);
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      res.status(err.status).json(errorBody(err.code, err.message));
      return;
    }
    const bodyError = err as BodyParserError;
    if (bodyError.type === 'entity.parse.failed') {
      res.status(400).json(errorBody('VALIDATION_ERROR', 'Request body is not valid JSON'));
      return;
    }
    if (bodyError.type === 'entity.too.large') {
      res.status(413).json(errorBody('PAYLOAD_TOO_LARGE', 'Request body is too large'));
      return;
    }
    if (bodyError.type && bodyError.status && bodyError.status < 500) {
      res.status(400).json(errorBody('VALIDATION_ERROR', 'Request body could not be read'));
      return;
    }
    logger.error({ requestId, path: req.path, err }, 'unhandled error');
    res.status(500).json(errorBody('INTERNAL_ERROR', 'Internal server error'));
  };
}
