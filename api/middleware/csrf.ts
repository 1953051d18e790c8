// CSRF defence for cookie-authenticated writes (DESIGN §5): the session cookie is SameSite=Lax, and a write
// whose Origin is not PUBLIC_URL's is refused. Non-browser clients (the CLI, curl) send no Origin and pass.
import type { RequestHandler } from 'express';
import { forbidden } from '../../lib/errors';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses unsafe methods (POST, PUT, PATCH, DELETE) from another site: an Origin other than PUBLIC_URL's
 * (`null` included, which sandboxed frames and some redirects send), or `Sec-Fetch-Site: cross-site` from a
 * browser that sends fetch metadata. A request with neither header is a non-browser client's.
 */
export function sameOriginWrites(publicUrl: string): RequestHandler {
  const allowed = new URL(publicUrl).origin;
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== allowed) {
      return next(forbidden(`Cross-site request refused: Origin ${JSON.stringify(origin)} is not ${allowed}`));
    }
    if (req.headers['sec-fetch-site'] === 'cross-site') {
      return next(forbidden('Cross-site request refused (Sec-Fetch-Site: cross-site)'));
    }
    next();
  };
}
