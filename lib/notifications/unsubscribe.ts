// Unsubscribe links (docs/notifications.md): a token naming (website, address), signed with a key derived from
// JWT_SECRET, so that the link works without signing in and cannot be made up for another address.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import { UUID } from '../checks';

const key = (secret: string) => createHmac('sha256', secret).update('tidemark unsubscribe v1').digest();

const mac = (secret: string, websiteId: string, email: string) =>
  createHmac('sha256', key(secret)).update(`${websiteId}\n${email}`).digest('base64url');

export function unsubscribeToken(secret: string, websiteId: string, email: string): string {
  const address = email.toLowerCase();
  return `${websiteId}.${Buffer.from(address).toString('base64url')}.${mac(secret, websiteId, address)}`;
}

/** The (website, address) a token names, or undefined when it is malformed or not ours. */
export function readUnsubscribeToken(secret: string, token: string): { websiteId: string; email: string } | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !UUID.test(parts[0]) || !/^[A-Za-z0-9_-]{1,700}$/.test(parts[1])) return undefined;
  const email = Buffer.from(parts[1], 'base64url').toString('utf8');
  const expected = Buffer.from(mac(secret, parts[0], email));
  const given = Buffer.from(parts[2]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { websiteId: parts[0].toLowerCase(), email };
}

export function unsubscribeUrl(publicUrl: string, secret: string, websiteId: string, email: string): string {
  return new URL(`/unsubscribe/${unsubscribeToken(secret, websiteId, email)}`, publicUrl).href;
}

export async function unsubscribe(pool: Pool, websiteId: string, email: string): Promise<void> {
  await pool.query(
    `INSERT INTO notification_unsubscribes (website_id, email)
     SELECT id, $2 FROM websites WHERE id = $1 ON CONFLICT DO NOTHING`,
    [websiteId, email.toLowerCase()],
  );
}

/** The addresses that unsubscribed from a website's email. */
export async function unsubscribed(pool: Pool, websiteId: string): Promise<Set<string>> {
  const { rows } = await pool.query<{ email: string }>(
    'SELECT email FROM notification_unsubscribes WHERE website_id = $1',
    [websiteId],
  );
  return new Set(rows.map((r) => r.email));
}
