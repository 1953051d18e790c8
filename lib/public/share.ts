// Shared dashboards (issue 24 point 5, DESIGN §3 "Public endpoints"): while a website's public_dashboard is
// on, anyone with its link may read its aggregates through POST /api/v2/query, with a short-lived share token
// got from POST /api/share/:websiteId/token (the password first, when one is set). The token's audience is
// its own, so the dashboard's JWT checks (lib/auth/tokens.ts verifyJwt) refuse it everywhere else.
import jwt from 'jsonwebtoken';
import type { Pool } from 'pg';
import { getWebsite, type WebsiteRow } from '../accounts/websites';
import { hashPassword } from '../auth/passwords';
import { JWT_ISSUER } from '../auth/tokens';
import { UUID } from '../checks';
import { withTransaction } from '../db/pool';
import { notFound } from '../errors';
import type { ShareInfoView, SharingBody, SharingView } from './shareSchemas';

const SHARE_AUDIENCE = 'tidemark-share';
/** Short: a password change or sharing turned off revokes at once anyway (the version), this bounds a leak. */
export const SHARE_TOKEN_TTL_SECONDS = 3600;

export interface Share {
  website: WebsiteRow;
  passwordHash: string | null;
  version: number;
  updatedAt: Date | null;
}

/** The website with its share settings; undefined for an unknown or malformed id. */
export async function getShare(pool: Pool, websiteId: string): Promise<Share | undefined> {
  if (!UUID.test(websiteId)) return undefined;
  const website = await getWebsite(pool, websiteId.toLowerCase());
  if (!website) return undefined;
  const { rows } = await pool.query<{ password_hash: string | null; version: number; updated_at: Date }>(
    'SELECT password_hash, version, updated_at FROM website_shares WHERE website_id = $1',
    [website.id],
  );
  return {
    website,
    passwordHash: rows[0]?.password_hash ?? null,
    version: rows[0]?.version ?? 0,
    updatedAt: rows[0]?.updated_at ?? null,
  };
}

/** The share of a website whose public dashboard is on; 404 otherwise, so an unshared website is not revealed. */
export async function requireShared(pool: Pool, websiteId: string): Promise<Share> {
  const share = await getShare(pool, websiteId);
  if (!share?.website.public_dashboard) throw notFound('This dashboard is not shared');
  return share;
}

export function sharingView(share: Share): SharingView {
  return {
    website_id: share.website.id,
    public_dashboard: share.website.public_dashboard,
    password_set: share.passwordHash !== null,
    share_path: `/share/${share.website.id}`,
    updated_at: share.updatedAt?.toISOString() ?? null,
  };
}

export function shareInfoView(share: Share): ShareInfoView {
  const w = share.website;
  return {
    website_id: w.id,
    name: w.name,
    domain: w.domain,
    timezone: w.timezone,
    password_required: share.passwordHash !== null,
  };
}

/**
 * Turns sharing on or off and sets or clears the password. A new or removed password raises the version
 * (earlier tokens stop working); turning sharing off raises it through the websites trigger (migration 011).
 */
export async function updateSharing(pool: Pool, websiteId: string, body: SharingBody): Promise<void> {
  // Hashed before the transaction: argon2 takes tens of milliseconds that no row lock should wait for.
  const hash = typeof body.password === 'string' ? await hashPassword(body.password) : null;
  await withTransaction(pool, async (client) => {
    if (body.public_dashboard !== undefined) {
      await client.query('UPDATE websites SET public_dashboard = $2, updated_at = now() WHERE id = $1', [
        websiteId,
        body.public_dashboard,
      ]);
    }
    if (body.password !== undefined) {
      await client.query(
        `INSERT INTO website_shares (website_id, password_hash, version) VALUES ($1, $2, 1)
         ON CONFLICT (website_id) DO UPDATE
           SET password_hash = $2, version = website_shares.version + 1, updated_at = now()`,
        [websiteId, hash],
      );
    }
  });
}

export function signShareToken(secret: string, share: Share): string {
  return jwt.sign({ ver: share.version, scope: 'share' }, secret, {
    algorithm: 'HS256',
    subject: share.website.id,
    issuer: JWT_ISSUER,
    audience: SHARE_AUDIENCE,
    expiresIn: SHARE_TOKEN_TTL_SECONDS,
  });
}

export interface ShareClaims {
  websiteId: string;
  version: number;
}

/** The claims of a share token of ours, or undefined for anything else (a dashboard JWT, an API key, expired). */
export function verifyShareToken(secret: string, token: string): ShareClaims | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: SHARE_AUDIENCE });
    if (typeof payload !== 'object' || typeof payload.sub !== 'string' || !UUID.test(payload.sub)) return undefined;
    const ver: unknown = payload.ver;
    if (payload.scope !== 'share' || typeof ver !== 'number' || !Number.isSafeInteger(ver)) return undefined;
    return { websiteId: payload.sub.toLowerCase(), version: ver };
  } catch {
    return undefined;
  }
}

/** The share a token still reads: sharing on and the token's version current (no password change since). */
export async function shareOfToken(pool: Pool, claims: ShareClaims): Promise<Share | undefined> {
  const share = await getShare(pool, claims.websiteId);
  return share?.website.public_dashboard && share.version === claims.version ? share : undefined;
}
