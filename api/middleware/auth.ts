// Credentials per surface (spec "Authentication"): Bearer JWT for dashboard APIs, API keys (X-API-Key or
// Bearer) for the External API and server ingestion, the session cookie for annotations and token renewal.
import type { Request, RequestHandler, Response } from 'express';
import type { Pool } from 'pg';
import {
  type ApiKeyPrincipal,
  authenticateApiKey,
  paidPlanRequired,
  websiteForApiKey,
} from '../../lib/accounts/apiKeys';
import { requireWebsiteRole, type WebsiteRow } from '../../lib/accounts/websites';
import { currentTokenVersion, SESSION_COOKIE, sessionUser, verifyJwt } from '../../lib/auth/tokens';
import { forbidden, unauthorized } from '../../lib/errors';

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

/**
 * Where only the session cookie is a credential (annotations): a request that presents an API key or a Bearer
 * token is refused outright rather than having the credential ignored, so a script learns why at once.
 */
export function requireSessionOnly(pool: Pool): RequestHandler {
  const session = requireSession(pool);
  return (req, res, next) => {
    const headerKey = req.headers['x-api-key'];
    if ((typeof headerKey === 'string' && headerKey.trim()) || req.headers.authorization !== undefined) {
      throw unauthorized(
        'API keys and Bearer tokens are not accepted here; a session cookie is required (sign in with POST /api/auth/login)',
      );
    }
    return session(req, res, next);
  };
}

/**
 * Who reads the External and Stats APIs (DESIGN §5): an API key, or a signed-in user (the dashboard's Bearer
 * JWT or session cookie), who may read the websites of their teams at role viewer or higher, without credits
 * or API rate limits.
 */
export type Reader = { kind: 'key'; key: ApiKeyPrincipal } | { kind: 'user'; userId: string };

export function reader(res: Response): Reader {
  return res.locals.reader as Reader;
}

// A JWT is three base64url segments; an API key is one token without dots.
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** An API key (X-API-Key or Bearer), else the dashboard's Bearer JWT, else its session cookie. */
export function requireReader(secret: string, pool: Pool): RequestHandler {
  const keys = requireApiKey(pool);
  return async (req, res, next) => {
    const headerKey = req.headers['x-api-key'];
    const token = bearer(req);
    if ((typeof headerKey === 'string' && headerKey.trim()) || (token && !JWT_SHAPE.test(token))) {
      return keys(req, res, (err?: unknown) => {
        if (err) return next(err);
        res.locals.reader = { kind: 'key', key: apiKey(res) } satisfies Reader;
        next();
      });
    }
    let id: string | undefined;
    if (token) {
      id = await jwtUser(secret, pool, req);
      if (!id) throw unauthorized('Missing or invalid API key or token');
    } else {
      const cookie = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
      id = cookie ? await sessionUser(pool, cookie) : undefined;
      if (!id) throw unauthorized('Missing or invalid API key');
    }
    res.locals.userId = id;
    res.locals.reader = { kind: 'user', userId: id } satisfies Reader;
    next();
  };
}

/** The website a reader may see: a key's (404 another team's, 403 outside a site key), or one of the user's teams'. */
export async function readableWebsite(pool: Pool, res: Response, websiteId: string): Promise<WebsiteRow> {
  const r = reader(res);
  if (r.kind === 'key') return websiteForApiKey(pool, r.key, websiteId);
  return (await requireWebsiteRole(pool, websiteId, r.userId, 'viewer')).website;
}

/** For endpoints that act on an API key's behalf (its usage, creating websites): a signed-in user is refused. */
export function requireKeyReader(res: Response): ApiKeyPrincipal {
  const r = reader(res);
  if (r.kind !== 'key') throw forbidden('This endpoint needs an API key');
  return r.key;
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
