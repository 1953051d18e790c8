// Dashboard credentials: short-lived HS256 JWTs and the server-side session behind the cookie.
import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Pool } from 'pg';

export const JWT_ISSUER = 'tidemark';
export const JWT_AUDIENCE = 'tidemark-dashboard';
export const JWT_TTL_SECONDS = 3600;
export const SESSION_COOKIE = 'tidemark_session';
export const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function signJwt(secret: string, userId: string): string {
  return jwt.sign({}, secret, {
    algorithm: 'HS256',
    subject: userId,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: JWT_TTL_SECONDS,
  });
}

/** Returns the user id, or undefined for any token that is not ours: other algorithm, signature, audience, expired. */
export function verifyJwt(secret: string, token: string): string | undefined {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
    return typeof payload === 'object' && typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
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
