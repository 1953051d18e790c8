// Dashboard credentials: short-lived HS256 JWTs and the server-side session behind the cookie.
import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Pool, PoolClient } from 'pg';
import { UUID } from '../checks';

type Queryable = Pool | PoolClient;

export const JWT_ISSUER = 'tidemark';
export const JWT_AUDIENCE = 'tidemark-dashboard';
export const JWT_TTL_SECONDS = 3600;
export const SESSION_COOKIE = 'tidemark_session';
export const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * `ver` is the user's token version when the token was issued: logout and a password change raise it, which
 * revokes every token issued before, even one issued in the same second (iat has whole seconds only).
 */
export function signJwt(secret: string, userId: string, tokenVersion: number): string {
  return jwt.sign({ ver: tokenVersion }, secret, {
    algorithm: 'HS256',
    subject: userId,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: JWT_TTL_SECONDS,
  });
}

export interface JwtClaims {
  userId: string;
  tokenVersion: number;
}

/** The claims, or undefined for any token that is not ours: other algorithm, signature, audience, expired. */
export function verifyJwt(secret: string, token: string): JwtClaims | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
    // sub is looked up as a uuid column: anything else is not a token of ours.
    if (typeof payload !== 'object' || typeof payload.sub !== 'string' || !UUID.test(payload.sub)) return undefined;
    const ver: unknown = payload.ver;
    return typeof ver === 'number' && Number.isSafeInteger(ver)
      ? { userId: payload.sub, tokenVersion: ver }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The user's current token version; undefined when the user no longer exists. */
export async function currentTokenVersion(db: Queryable, userId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ token_version: number }>('SELECT token_version FROM users WHERE id = $1', [userId]);
  return rows[0]?.token_version;
}

/** Revokes every JWT issued to the user so far; returns the new version (for a token issued right after). */
export async function revokeTokens(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ token_version: number }>(
    'UPDATE users SET token_version = token_version + 1 WHERE id = $1 RETURNING token_version',
    [userId],
  );
  return rows[0]?.token_version ?? 0;
}

export async function createSession(pool: Pool, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await pool.query('INSERT INTO user_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
    sha256Hex(token),
    userId,
    expiresAt,
  ]);
  return { token, expiresAt };
}

export async function sessionUser(pool: Pool, token: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ user_id: string }>(
    'SELECT user_id FROM user_sessions WHERE token_hash = $1 AND expires_at > now()',
    [sha256Hex(token)],
  );
  return rows[0]?.user_id;
}

export async function deleteSession(pool: Pool, token: string): Promise<void> {
  await pool.query('DELETE FROM user_sessions WHERE token_hash = $1', [sha256Hex(token)]);
}
