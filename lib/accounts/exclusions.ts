// IP and path exclusions of a website (spec "Website settings"): 201 on create, 409 when already excluded.
import type { Pool } from 'pg';
import { conflict, isUniqueViolation, notFound } from '../errors';

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

export async function listExclusions(pool: Pool, websiteId: string) {
  const [ips, paths] = await Promise.all([
    pool.query<IpExclusionRow>('SELECT id, website_id, ip_address, description, created_at FROM ip_exclusions WHERE website_id = $1 ORDER BY created_at, id', [websiteId]),
    pool.query<PathExclusionRow>('SELECT id, website_id, path_pattern, description, created_at FROM path_exclusions WHERE website_id = $1 ORDER BY created_at, id', [websiteId]),
  ]);
  return { ip_exclusions: ips.rows.map(view), path_exclusions: paths.rows.map(view) };
}

export async function addIpExclusion(pool: Pool, websiteId: string, ip: string, description?: string) {
  try {
    const { rows } = await pool.query<IpExclusionRow>(
      'INSERT INTO ip_exclusions (website_id, ip_address, description) VALUES ($1, $2, $3) RETURNING id, website_id, ip_address, description, created_at',
      [websiteId, ip, description ?? null],
    );
    return view(rows[0]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('This IP address is already excluded');
    throw err;
  }
}

export async function addPathExclusion(pool: Pool, websiteId: string, pattern: string, description?: string) {
  try {
    const { rows } = await pool.query<PathExclusionRow>(
      'INSERT INTO path_exclusions (website_id, path_pattern, description) VALUES ($1, $2, $3) RETURNING id, website_id, path_pattern, description, created_at',
      [websiteId, pattern, description ?? null],
    );
    return view(rows[0]);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('This path pattern is already excluded');
    throw err;
  }
}

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
  return { ips: rows.filter((r) => r.kind === 'ip').map((r) => r.value), paths: rows.filter((r) => r.kind === 'path').map((r) => r.value) };
}
