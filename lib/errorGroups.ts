// Error groups (spec "Error group"): one PostgreSQL row per (website, fingerprint), counted by the ingest
// writer (lib/ingest/store/browserWriter.ts) and triaged by people (status unresolved | resolved | ignored).
import type { Pool } from 'pg';
import { checkInt } from './checks';
import { notFound } from './errors';
import type { ErrorGroup, ErrorGroupStatus, ErrorGroupsData } from './external/schemas';

interface ErrorGroupRow {
  id: string;
  fingerprint: string;
  message: string;
  type: string;
  status: ErrorGroupStatus;
  occurrence_count: string;
  first_seen_at: Date;
  last_seen_at: Date;
  affected_users_count: string;
}

const COLUMNS =
  'id, fingerprint, message, type, status, occurrence_count, first_seen_at, last_seen_at, affected_users_count';

export function errorGroupView(r: ErrorGroupRow): ErrorGroup {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    message: r.message,
    type: r.type,
    status: r.status,
    occurrence_count: Number(r.occurrence_count),
    first_seen_at: r.first_seen_at.toISOString(),
    last_seen_at: r.last_seen_at.toISOString(),
    affected_users_count: Number(r.affected_users_count),
  };
}

/** A website's groups, most recently seen first (ties by id); `total` counts every group the filter matches. */
export async function listErrorGroups(
  pool: Pool,
  websiteId: string,
  opts: { limit: number; status?: ErrorGroupStatus },
): Promise<ErrorGroupsData> {
  checkInt(opts.limit, 'limit', 1, 10_000);
  const status = opts.status ?? null;
  const [rows, total] = await Promise.all([
    pool.query<ErrorGroupRow>(
      `SELECT ${COLUMNS} FROM error_groups
       WHERE website_id = $1 AND ($2::text IS NULL OR status = $2)
       ORDER BY last_seen_at DESC, id ASC
       LIMIT $3`,
      [websiteId, status, opts.limit],
    ),
    pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM error_groups WHERE website_id = $1 AND ($2::text IS NULL OR status = $2)`,
      [websiteId, status],
    ),
  ]);
  return { error_groups: rows.rows.map(errorGroupView), total: Number(total.rows[0].n) };
}

/** Moves a group to `status` (any status to any other); 404 when the group is not this website's. */
export async function setErrorGroupStatus(
  pool: Pool,
  websiteId: string,
  groupId: string,
  status: ErrorGroupStatus,
): Promise<ErrorGroup> {
  const res = await pool.query<ErrorGroupRow>(
    `UPDATE error_groups SET status = $3, updated_at = now()
     WHERE website_id = $1 AND id = $2
     RETURNING ${COLUMNS}`,
    [websiteId, groupId, status],
  );
  if (res.rows.length === 0) throw notFound('Error group not found');
  return errorGroupView(res.rows[0]);
}
