// Goal definitions: a custom event by name, a pageview path pattern, or the website's purchases (issue 22).
// Ingestion accepts `goal` events only for an active event goal of the website (spec).
import type { Pool } from 'pg';
import { conflict, isUniqueViolation, notFound } from '../errors';
import type { GoalView } from './responses';
import type { CreateGoalBody, GoalKind, UpdateGoalBody } from './schemas';

export interface GoalRow {
  id: string;
  website_id: string;
  name: string;
  kind: GoalKind;
  /** The path pattern of a page goal; null for the other kinds. */
  path: string | null;
  is_active: boolean;
  created_via: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, website_id, name, kind, path, is_active, created_via, created_at, updated_at';

export function goalView(g: GoalRow): GoalView {
  return {
    id: g.id,
    website_id: g.website_id,
    name: g.name,
    kind: g.kind,
    path: g.path,
    is_active: g.is_active,
    created_via: g.created_via,
    created_at: g.created_at.toISOString(),
    updated_at: g.updated_at.toISOString(),
  };
}

const duplicate = () => conflict('A goal with this name already exists on this website');

export async function createGoal(
  pool: Pool,
  websiteId: string,
  userId: string,
  body: CreateGoalBody,
): Promise<GoalRow> {
  try {
    const { rows } = await pool.query<GoalRow>(
      `INSERT INTO goals (website_id, name, kind, path, is_active, created_by) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [websiteId, body.name ?? `Visit ${body.path}`, body.kind, body.path ?? null, body.is_active ?? true, userId],
    );
    return rows[0];
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function listGoals(pool: Pool, websiteId: string): Promise<GoalRow[]> {
  const { rows } = await pool.query<GoalRow>(
    `SELECT ${COLUMNS} FROM goals WHERE website_id = $1 ORDER BY created_at, id`,
    [websiteId],
  );
  return rows;
}

export async function updateGoal(
  pool: Pool,
  websiteId: string,
  goalId: string,
  body: UpdateGoalBody,
): Promise<GoalRow> {
  try {
    const { rows } = await pool.query<GoalRow>(
      `UPDATE goals SET name = COALESCE($3, name), is_active = COALESCE($4, is_active),
         path = CASE WHEN kind = 'page' THEN COALESCE($5, path) ELSE path END, updated_at = now()
       WHERE id = $1 AND website_id = $2 RETURNING ${COLUMNS}`,
      [goalId, websiteId, body.name ?? null, body.is_active ?? null, body.path ?? null],
    );
    if (!rows[0]) throw notFound('Goal not found');
    return rows[0];
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate();
    throw err;
  }
}

export async function deleteGoal(pool: Pool, websiteId: string, goalId: string): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM goals WHERE id = $1 AND website_id = $2', [goalId, websiteId]);
  if (!rowCount) throw notFound('Goal not found');
}

/** Names of the website's active event goals (the ingest check reads this through a cache). */
export async function activeGoalNames(pool: Pool, websiteId: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT name FROM goals WHERE website_id = $1 AND is_active AND kind = 'event'",
    [websiteId],
  );
  return rows.map((r) => r.name);
}

/** What conversion reports read of a website: its goals (active or not: history stays readable) and currency. */
export async function conversionContext(
  pool: Pool,
  websiteId: string,
): Promise<{ goals: GoalRow[]; currency: string }> {
  const [goals, site] = await Promise.all([
    listGoals(pool, websiteId),
    pool.query<{ revenue_currency: string }>('SELECT revenue_currency FROM websites WHERE id = $1', [websiteId]),
  ]);
  return { goals, currency: site.rows[0]?.revenue_currency ?? 'USD' };
}
