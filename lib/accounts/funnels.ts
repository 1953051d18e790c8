// Saved funnels of a website (issue 22, migration 007): 2 to 8 ordered steps, each a goal of the website or a
// pageview path pattern. Deleting a goal deletes the funnels that use it (a trigger of the migration).
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../db/pool';
import { badRequest, conflict, isUniqueViolation, notFound } from '../errors';
import type { CreateFunnelBody, FunnelStepBody, FunnelView, UpdateFunnelBody } from './funnelSchemas';
import type { GoalKind } from './schemas';

/** A step as stored, with its goal's definition when it is a goal step. */
export interface FunnelStepRow {
  goal_id: string | null;
  path: string | null;
  goal_name: string | null;
  goal_kind: GoalKind | null;
  goal_path: string | null;
}

export interface FunnelRow {
  id: string;
  website_id: string;
  name: string;
  steps: FunnelStepRow[];
  created_at: Date;
  updated_at: Date;
}

/** The code of every refused step list: wrong count, repeated step, bad pattern, a goal not of the website. */
export const INVALID_FUNNEL_STEPS = 'INVALID_FUNNEL_STEPS';

const SELECT = `SELECT f.id, f.website_id, f.name, f.created_at, f.updated_at,
    COALESCE(json_agg(json_build_object('goal_id', s.goal_id, 'path', s.path, 'goal_name', g.name,
      'goal_kind', g.kind, 'goal_path', g.path) ORDER BY s.position) FILTER (WHERE s.position IS NOT NULL), '[]') AS steps
  FROM funnels f
  LEFT JOIN funnel_steps s ON s.funnel_id = f.id
  LEFT JOIN goals g ON g.id = s.goal_id`;

export function funnelView(f: FunnelRow): FunnelView {
  return {
    id: f.id,
    website_id: f.website_id,
    name: f.name,
    steps: f.steps.map((s) => ({
      goal_id: s.goal_id,
      path: s.path,
      name: s.goal_name ?? s.path ?? '',
      kind: s.goal_kind ?? 'path',
    })),
    created_at: f.created_at.toISOString(),
    updated_at: f.updated_at.toISOString(),
  };
}

const duplicate = () => conflict('A funnel with this name already exists on this website');

export async function listFunnels(pool: Pool, websiteId: string): Promise<FunnelRow[]> {
  const { rows } = await pool.query<FunnelRow>(
    `${SELECT} WHERE f.website_id = $1 GROUP BY f.id ORDER BY f.created_at, f.id`,
    [websiteId],
  );
  return rows;
}

export async function getFunnel(pool: Pool | PoolClient, websiteId: string, funnelId: string): Promise<FunnelRow> {
  const { rows } = await pool.query<FunnelRow>(`${SELECT} WHERE f.website_id = $1 AND f.id = $2 GROUP BY f.id`, [
    websiteId,
    funnelId,
  ]);
  if (!rows[0]) throw notFound('Funnel not found');
  return rows[0];
}

/**
 * Writes a funnel's steps in order after checking every goal step names a goal of the website; the goals
 * are locked (FOR SHARE) until the transaction ends, so none is deleted between the check and the insert.
 */
async function writeSteps(client: PoolClient, websiteId: string, funnelId: string, steps: FunnelStepBody[]) {
  const goalIds = steps.flatMap((s) => (s.goal_id ? [s.goal_id.toLowerCase()] : []));
  const { rows } = await client.query<{ id: string }>(
    'SELECT id FROM goals WHERE website_id = $1 AND id = ANY($2::uuid[]) FOR SHARE',
    [websiteId, goalIds],
  );
  const known = new Set(rows.map((r) => r.id));
  const unknown = steps.findIndex((s) => s.goal_id !== undefined && !known.has(s.goal_id.toLowerCase()));
  if (unknown >= 0) throw badRequest(`steps.${unknown}.goal_id: not a goal of this website`, INVALID_FUNNEL_STEPS);
  await client.query('DELETE FROM funnel_steps WHERE funnel_id = $1', [funnelId]);
  await client.query(
    `INSERT INTO funnel_steps (funnel_id, position, goal_id, path)
     SELECT $1, p, g, NULLIF(s, '') FROM unnest($2::int[], $3::uuid[], $4::text[]) AS t(p, g, s)`,
    [funnelId, steps.map((_, i) => i + 1), steps.map((s) => s.goal_id ?? null), steps.map((s) => s.path ?? '')],
  );
}

export async function createFunnel(
  pool: Pool,
  websiteId: string,
  userId: string,
  body: CreateFunnelBody,
): Promise<FunnelRow> {
  try {
    return await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        'INSERT INTO funnels (website_id, name, created_by) VALUES ($1, $2, $3) RETURNING id',
        [websiteId, body.name, userId],
      );
      await writeSteps(client, websiteId, rows[0].id, body.steps);
      return getFunnel(client, websiteId, rows[0].id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function updateFunnel(
  pool: Pool,
  websiteId: string,
  funnelId: string,
  body: UpdateFunnelBody,
): Promise<FunnelRow> {
  try {
    return await withTransaction(pool, async (client) => {
      const { rowCount } = await client.query(
        'UPDATE funnels SET name = COALESCE($3, name), updated_at = now() WHERE id = $1 AND website_id = $2',
        [funnelId, websiteId, body.name ?? null],
      );
      if (!rowCount) throw notFound('Funnel not found');
      if (body.steps) await writeSteps(client, websiteId, funnelId, body.steps);
      return getFunnel(client, websiteId, funnelId);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function deleteFunnel(pool: Pool, websiteId: string, funnelId: string): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM funnels WHERE id = $1 AND website_id = $2', [funnelId, websiteId]);
  if (!rowCount) throw notFound('Funnel not found');
}
