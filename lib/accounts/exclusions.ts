// IP and path exclusions of a website (spec "Website settings"): 201 on create, 409 when already excluded or
// when the website already holds the most exclusions of that kind (every event is matched against them all).
import type { Pool } from 'pg';
import { withTransaction } from '../db/pool';
import { conflict, isUniqueViolation, notFound } from '../errors';
import { MAX_IP_EXCLUSIONS, MAX_PATH_EXCLUSIONS } from '../ingest/accept/exclusions';
import type { ExclusionsView, IpExclusionView, PathExclusionView } from './responses';

interface ExclusionRow {
  id: string;
  website_id: string;
  description: string | null;
  created_at: Date;
}
export interface IpExclusionRow extends ExclusionRow {
  ip_address: string;
}
export interface PathExclusionRow extends ExclusionRow {
  path_pattern: string;
}

const view = <T extends ExclusionRow>(r: T) => ({ ...r, created_at: r.created_at.toISOString() });

export async function listExclusions(pool: Pool, websiteId: string): Promise<ExclusionsView> {
  const [ips, paths] = await Promise.all([
    pool.query<IpExclusionRow>(
      'SELECT id, website_id, ip_address, description, created_at FROM ip_exclusions WHERE website_id = $1 ORDER BY created_at, id',
      [websiteId],
    ),
    pool.query<PathExclusionRow>(
      'SELECT id, website_id, path_pattern, description, created_at FROM path_exclusions WHERE website_id = $1 ORDER BY created_at, id',
      [websiteId],
    ),
  ]);
  return { ip_exclusions: ips.rows.map(view), path_exclusions: paths.rows.map(view) };
}

// Table and column names come from this map only, never from a request.
const KINDS = {
  ip: { table: 'ip_exclusions', column: 'ip_address', max: MAX_IP_EXCLUSIONS, what: 'IP address' },
  path: { table: 'path_exclusions', column: 'path_pattern', max: MAX_PATH_EXCLUSIONS, what: 'path pattern' },
} as const;

/**
 * Inserts under the per-website cap. The website row is locked (FOR NO KEY UPDATE: concurrent adds queue up,
 * foreign-key checks elsewhere do not) so two adds cannot both pass the count.
 */
async function addCapped<R extends ExclusionRow>(
  pool: Pool,
  kind: keyof typeof KINDS,
  websiteId: string,
  value: string,
  description?: string,
) {
  const { table, column, max, what } = KINDS[kind];
  try {
    const row = await withTransaction(pool, async (client) => {
      const locked = await client.query('SELECT 1 FROM websites WHERE id = $1 FOR NO KEY UPDATE', [websiteId]);
      if (!locked.rowCount) throw notFound('Website not found');
      const {
        rows: [held],
      } = await client.query<{ n: number; dup: boolean }>(
        `SELECT count(*)::int AS n, coalesce(bool_or(${column} = $2), false) AS dup FROM ${table} WHERE website_id = $1`,
        [websiteId, value],
      );
      if (held.dup) throw conflict(`This ${what} is already excluded`);
      if (held.n >= max) throw conflict(`A website may hold at most ${max} ${what} exclusions; delete one first`);
      const { rows } = await client.query<R>(
        `INSERT INTO ${table} (website_id, ${column}, description) VALUES ($1, $2, $3) RETURNING id, website_id, ${column}, description, created_at`,
        [websiteId, value, description ?? null],
      );
      return rows[0];
    });
    return view(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`This ${what} is already excluded`);
    throw err;
  }
}

export const addIpExclusion = (
  pool: Pool,
  websiteId: string,
  ip: string,
  description?: string,
): Promise<IpExclusionView> => addCapped<IpExclusionRow>(pool, 'ip', websiteId, ip, description);

export const addPathExclusion = (
  pool: Pool,
  websiteId: string,
  pattern: string,
  description?: string,
): Promise<PathExclusionView> => addCapped<PathExclusionRow>(pool, 'path', websiteId, pattern, description);

export async function deleteExclusion(pool: Pool, kind: 'ip' | 'path', websiteId: string, id: string): Promise<void> {
  const table = kind === 'ip' ? 'ip_exclusions' : 'path_exclusions';
  const { rowCount } = await pool.query(`DELETE FROM ${table} WHERE id = $1 AND website_id = $2`, [id, websiteId]);
  if (!rowCount) throw notFound('Exclusion not found');
}

/** What browser ingestion needs to decide, read in one round trip. */
export async function exclusionRules(pool: Pool, websiteId: string): Promise<{ ips: string[]; paths: string[] }> {
  const { rows } = await pool.query<{ kind: string; value: string }>(
    `SELECT 'ip' AS kind, ip_address AS value FROM ip_exclusions WHERE website_id = $1
     UNION ALL SELECT 'path', path_pattern FROM path_exclusions WHERE website_id = $1`,
    [websiteId],
  );
  return {
    ips: rows.filter((r) => r.kind === 'ip').map((r) => r.value),
    paths: rows.filter((r) => r.kind === 'path').map((r) => r.value),
  };
}
