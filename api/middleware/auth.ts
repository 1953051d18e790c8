// Credentials per surface (spec "Authentication"): Bearer JWT for dashboard APIs, API keys (X-API-Key or
// Bearer) for the External API and server ingestion, the session cookie for annotations and token renewal.
import type { Request, RequestHandler, Response } from 'express';
import type { Pool } from 'pg';
import { authenticateApiKey, paidPlanRequired, type ApiKeyPrincipal } from '../../lib/accounts/apiKeys';
import { currentTokenVersion, SESSION_COOKIE, sessionUser, verifyJwt } from '../../lib/auth/tokens';
import { unauthorized } from '../../lib/errors';

export function bearer(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function userId(res: Response): string {
  return res.locals.userId as string;
}

export function apiKey(res: Response): ApiKeyPrincipal {
  return res.locals.apiKey as ApiKeyPrincipal;
}

/** The user of the request's Bearer JWT when it is valid and not revoked (its token version is still the user's). */
export async function jwtUser(secret: string, pool: Pool, req: Request): Promise<string | undefined> {
  const token = bearer(req);
  const claims = token ? verifyJwt(secret, token) : undefined;
  if (!claims || (await currentTokenVersion(pool, claims.userId)) !== claims.tokenVersion) return undefined;
  return claims.userId;
}

/** A valid Bearer JWT whose token version is still the user's (logout and password change revoke). */
export function requireJwt(secret: string, pool: Pool): RequestHandler {
  return async (req, res, next) => {
    const id = await jwtUser(secret, pool, req);
    if (!id) throw unauthorized('A valid Bearer token is required');
    res.locals.userId = id;
    next();
  };
}

export function requireSession(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    const token = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    const id = token && (await sessionUser(pool, token));
    if (!id) throw unauthorized('A valid session cookie is required');
    res.locals.userId = id;
    res.locals.sessionToken = token;
    next();
  };
}

/** API key from X-API-Key or Authorization: Bearer. `allowBearer` is false where the spec names one header. */
export function requireApiKey(pool: Pool, opts: { allowHeader: boolean } = { allowHeader: true }): RequestHandler {
  return async (req, res, next) => {
    const headerKey = opts.allowHeader ? req.headers['x-api-key'] : undefined;
    const presented = (typeof headerKey === 'string' && headerKey.trim()) || bearer(req);
    const principal = presented ? await authenticateApiKey(pool, presented) : undefined;
    if (!principal) throw unauthorized('Missing or invalid API key');
    // Spec rule 1: keys are for paid plans; a team that dropped to free keeps its keys but cannot use them.
    if (principal.plan === 'free') throw paidPlanRequired(principal.teamId);
    res.locals.apiKey = principal;
    next();
  };
}
