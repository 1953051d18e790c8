// The success envelope of every JSON API except the bare ingest result: {success, data, timestamp}.
import type { RequestHandler, Response } from 'express';

export function sendData(res: Response, data: unknown, status = 200): void {
  res.status(status).json({ success: true, data, timestamp: new Date().toISOString() });
}

export function errorBody(code: string, message: string) {
  return { success: false as const, error: { message, code, timestamp: new Date().toISOString() } };
}

/**
 * Plausible's error shape, `{error: message}` (plus this API's code), for the routes that answer as Plausible
 * does: every error the request meets — authentication, limits, validation — is written through res.json in
 * the envelope above and rewritten here.
 */
export function plausibleErrorShape(): RequestHandler {
  return (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const failure = body as { success?: unknown; error?: { message?: unknown; code?: unknown } } | null;
      if (failure?.success === false && failure.error)
        return json({ error: failure.error.message, code: failure.error.code });
      return json(body);
    };
    next();
  };
}
