// System-of-record writes of the ingest worker (DESIGN §1): identify upserts and payments, through COPY into
// a temporary table and one INSERT … ON CONFLICT each. Both are idempotent, so a retried job is harmless.

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool, PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { withTransaction } from '../../db/pool';
import type { IdentityRecord, PaymentRecord } from '../job/rows';
import { cleanJson, cleanText } from '../job/sanitize';

/** COPY text format: tab-separated, \N for null, with backslash, tab and newlines escaped. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  const s = typeof v === 'string' ? cleanText(v) : typeof v === 'object' ? JSON.stringify(cleanJson(v)) : String(v);
  return s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

async function copyRows(client: PoolClient, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const lines = rows.map((r) => `${r.map(copyField).join('\t')}\n`);
  await pipeline(Readable.from(lines), client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)));
}

const IDENTITY_COLUMNS = [
  'website_id',
  'visitor_id',
  'email',
  'name',
  'customer_id',
  'phone',
  'company',
  'attributes',
  'first_seen_at',
  'last_seen_at',
];

export type MergedIdentity = Omit<IdentityRecord, 'seen_at' | 'event_id'> & {
  first_seen_at: string;
  last_seen_at: string;
};

/** One row per (website, visitor): later identifies win field by field; attributes merge; seen times span. */
export function mergeIdentities(records: IdentityRecord[]): MergedIdentity[] {
  const merged = new Map<string, MergedIdentity>();
  const sorted = [...records].sort((a, b) => a.seen_at.localeCompare(b.seen_at));
  for (const { seen_at, event_id: _id, ...r } of sorted) {
    const key = `${r.website_id}\u0000${r.visitor_id}`;
    const prev = merged.get(key);
    merged.set(
      key,
      prev
        ? {
            ...r,
            email: r.email ?? prev.email,
            name: r.name ?? prev.name,
            customer_id: r.customer_id ?? prev.customer_id,
            phone: r.phone ?? prev.phone,
            company: r.company ?? prev.company,
            attributes: { ...prev.attributes, ...r.attributes },
            first_seen_at: prev.first_seen_at,
            last_seen_at: seen_at,
          }
        : { ...r, first_seen_at: seen_at, last_seen_at: seen_at },
    );
  }
  return [...merged.values()];
}

export async function writeIdentities(pool: Pool, records: IdentityRecord[]): Promise<void> {
  if (records.length === 0) return;
  const rows = mergeIdentities(records).map((r) => [
    r.website_id,
    r.visitor_id,
    r.email,
    r.name,
    r.customer_id,
    r.phone,
    r.company,
    r.attributes,
    r.first_seen_at,
    r.last_seen_at,
  ]);
  await withTransaction(pool, async (client) => {
    await client.query(`CREATE TEMP TABLE identify_in (
      website_id uuid, visitor_id text, email text, name text, customer_id text, phone text, company text,
      attributes jsonb, first_seen_at timestamptz, last_seen_at timestamptz) ON COMMIT DROP`);
    await copyRows(client, 'identify_in', IDENTITY_COLUMNS, rows);
    // A website deleted meanwhile has no row to join: its identifies are dropped with it.
    await client.query(`
      INSERT INTO identified_users AS u (website_id, visitor_id, email, name, customer_id, phone, company, attributes, first_seen_at, last_seen_at)
      SELECT i.website_id, i.visitor_id, i.email, i.name, i.customer_id, i.phone, i.company, i.attributes, i.first_seen_at, i.last_seen_at
      FROM identify_in i JOIN websites w ON w.id = i.website_id
      ON CONFLICT (website_id, visitor_id) DO UPDATE SET
        -- The later identify wins field by field, whichever write arrives first (flushes run in parallel).
        email = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN COALESCE(EXCLUDED.email, u.email) ELSE COALESCE(u.email, EXCLUDED.email) END,
        name = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN COALESCE(EXCLUDED.name, u.name) ELSE COALESCE(u.name, EXCLUDED.name) END,
        customer_id = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN COALESCE(EXCLUDED.customer_id, u.customer_id) ELSE COALESCE(u.customer_id, EXCLUDED.customer_id) END,
        phone = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN COALESCE(EXCLUDED.phone, u.phone) ELSE COALESCE(u.phone, EXCLUDED.phone) END,
        company = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN COALESCE(EXCLUDED.company, u.company) ELSE COALESCE(u.company, EXCLUDED.company) END,
        attributes = CASE WHEN EXCLUDED.last_seen_at >= u.last_seen_at THEN u.attributes || EXCLUDED.attributes ELSE EXCLUDED.attributes || u.attributes END,
        first_seen_at = LEAST(u.first_seen_at, EXCLUDED.first_seen_at),
        last_seen_at = GREATEST(u.last_seen_at, EXCLUDED.last_seen_at),
        updated_at = now()`);
  });
}

const PAYMENT_COLUMNS = [
  'event_id',
  'website_id',
  'visitor_id',
  'session_id',
  'amount',
  'currency',
  'payment_provider',
  'status',
  'provider_event_id',
  'customer_email',
  'plan_name',
  'props',
  'source',
  'occurred_at',
] as const;

export async function writePayments(pool: Pool, records: PaymentRecord[]): Promise<void> {
  if (records.length === 0) return;
  await withTransaction(pool, async (client) => {
    await client.query('CREATE TEMP TABLE payments_in (LIKE payments INCLUDING DEFAULTS) ON COMMIT DROP');
    await copyRows(
      client,
      'payments_in',
      [...PAYMENT_COLUMNS],
      records.map((r) => PAYMENT_COLUMNS.map((c) => r[c])),
    );
    await client.query(`
      INSERT INTO payments (${PAYMENT_COLUMNS.join(', ')})
      SELECT ${PAYMENT_COLUMNS.map((c) => `p.${c}`).join(', ')} FROM payments_in p JOIN websites w ON w.id = p.website_id
      ON CONFLICT (event_id) DO NOTHING`);
    // The visitor's first succeeded purchase, claimed once (visitor.converted; sql/postgres/019): the
    // primary key serialises concurrent flushes, and a retried job finds its own claim again.
    await client.query(`
      INSERT INTO visitor_conversions (website_id, visitor_id, payment_event_id, converted_at)
      SELECT DISTINCT ON (p.website_id, p.visitor_id) p.website_id, p.visitor_id, p.event_id, p.occurred_at
      FROM payments_in p JOIN websites w ON w.id = p.website_id
      WHERE p.status = 'succeeded' AND p.visitor_id IS NOT NULL
      ORDER BY p.website_id, p.visitor_id, p.occurred_at, p.event_id
      ON CONFLICT DO NOTHING`);
  });
}
