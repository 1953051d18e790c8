// Chart annotations (spec "Annotations"; issue 23). Created and deleted by editors, listed by viewers, under
// the free plan's monthly cap and the 5-minute same-type rule. Both checks run under the team's row lock, so
// concurrent requests cannot both pass them.
import type { Pool } from 'pg';
import { forbidden, HttpError, notFound } from '../errors';
import type { Role } from '../plans';
import {
  type AnnotationType,
  type AnnotationView,
  type CreateAnnotationBody,
  MAX_LISTED_ANNOTATIONS,
  SAME_TYPE_WINDOW_MS,
} from './annotationSchemas';
import { activeRole, liftHint, lockTeam, planLimits, requireRole } from './teams';
import { getWebsite, type WebsiteRow } from './websites';

export interface AnnotationRow {
  id: string;
  website_id: string;
  team_id: string;
  type: AnnotationType;
  message: string;
  occurred_at: Date;
  created_by: string | null;
  metadata_json: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = 'id, website_id, team_id, type, message, occurred_at, created_by, metadata_json, created_at';

export function annotationView(a: AnnotationRow): AnnotationView {
  return {
    id: a.id,
    website_id: a.website_id,
    team_id: a.team_id,
    type: a.type,
    message: a.message,
    occurred_at: a.occurred_at.toISOString(),
    created_by: a.created_by,
    metadata_json: a.metadata_json,
    created_at: a.created_at.toISOString(),
  };
}

/**
 * The website for an annotation request. The spec separates "website not found" (404) from "no access to the
 * website" (403) here, unlike the other dashboard APIs, which answer 404 to non-members.
 */
export async function annotationWebsite(
  pool: Pool,
  websiteId: string,
  userId: string,
  minimum: Role,
): Promise<WebsiteRow> {
  const website = await getWebsite(pool, websiteId);
  if (!website) throw notFound('Website not found');
  const role = await activeRole(pool, website.team_id, userId);
  if (!role) throw forbidden('You have no access to this website');
  requireRole(role, minimum);
  return website;
}

/** First instant of `now`'s calendar month in UTC: the monthly cap counts from here. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

function sameTypeConflict(type: AnnotationType): HttpError {
  return new HttpError(
    409,
    'CONFLICT',
    `A ${type} annotation already exists within 5 minutes of this occurredAt; change occurredAt or the type`,
  );
}

function monthlyCapReached(teamId: string, plan: string, limit: number): HttpError {
  return new HttpError(
    402,
    'PAYMENT_REQUIRED',
    `The ${plan} plan allows ${limit} annotations per calendar month (UTC), all used; ${liftHint(teamId)}`,
  );
}

/** Creates an annotation; `now` is the request's clock (the default occurredAt and the month counted). */
export async function createAnnotation(
  pool: Pool,
  website: Pick<WebsiteRow, 'id' | 'team_id'>,
  userId: string,
  body: CreateAnnotationBody,
  now: Date,
): Promise<AnnotationRow> {
  const occurredAt = body.occurredAt ? new Date(body.occurredAt) : now;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const team = await lockTeam(client, website.team_id);
    const near = await client.query(
      `SELECT 1 FROM annotations WHERE website_id = $1 AND type = $2 AND occurred_at BETWEEN $3 AND $4 LIMIT 1`,
      [
        website.id,
        body.type,
        new Date(occurredAt.getTime() - SAME_TYPE_WINDOW_MS),
        new Date(occurredAt.getTime() + SAME_TYPE_WINDOW_MS),
      ],
    );
    if (near.rowCount) throw sameTypeConflict(body.type);
    const month = monthStart(now);
    // Counted for every plan, so a team that moves to free mid-month keeps what it already created.
    const { rows: usage } = await client.query<{ created: number }>(
      `INSERT INTO annotation_usage (team_id, month, created) VALUES ($1, $2::date, 1)
       ON CONFLICT (team_id, month) DO UPDATE SET created = annotation_usage.created + 1 RETURNING created`,
      [team.id, month.toISOString().slice(0, 10)],
    );
    const limit = planLimits(team).annotationsPerMonth;
    if (limit !== null && usage[0].created > limit) throw monthlyCapReached(team.id, team.plan, limit);
    const { rows } = await client.query<AnnotationRow>(
      `INSERT INTO annotations (website_id, team_id, type, message, occurred_at, created_by, metadata_json, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [website.id, team.id, body.type, body.message, occurredAt, userId, JSON.stringify(body.metadata ?? {}), now],
    );
    await client.query('COMMIT');
    return rows[0];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** A website's annotations with occurred_at in [from, to] (either end open when absent), newest first, at most 500. */
export async function listAnnotations(pool: Pool, websiteId: string, from?: Date, to?: Date): Promise<AnnotationRow[]> {
  const { rows } = await pool.query<AnnotationRow>(
    `SELECT ${COLUMNS} FROM annotations
     WHERE website_id = $1 AND ($2::timestamptz IS NULL OR occurred_at >= $2) AND ($3::timestamptz IS NULL OR occurred_at <= $3)
     ORDER BY occurred_at DESC, id DESC LIMIT $4`,
    [websiteId, from ?? null, to ?? null, MAX_LISTED_ANNOTATIONS],
  );
  return rows;
}

/**
 * Deletes an annotation for good (editor or higher in its website's team). An id the user's teams do not hold
 * answers 404, like one that names nothing.
 */
export async function deleteAnnotation(pool: Pool, annotationId: string, userId: string): Promise<void> {
  const { rows } = await pool.query<{ role: Role | null }>(
    `SELECT m.role FROM annotations a JOIN websites w ON w.id = a.website_id
     LEFT JOIN team_members m ON m.team_id = w.team_id AND m.user_id = $2 AND m.deactivated_at IS NULL
     WHERE a.id = $1`,
    [annotationId, userId],
  );
  const role = rows[0]?.role;
  if (!role) throw notFound('Annotation not found');
  requireRole(role, 'editor');
  const { rowCount } = await pool.query('DELETE FROM annotations WHERE id = $1', [annotationId]);
  if (!rowCount) throw notFound('Annotation not found');
}
