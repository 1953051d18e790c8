// Websites: creation under the plan cap, the general settings, and access checks by role.
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../db/pool';
import { isUniqueViolation, notFound } from '../errors';
import type { WebsiteDetail, WebsiteSettings, WebsiteSummary } from '../external/schemas';
import type { Role } from '../plans';
import { usableTimeZone } from '../stats/timeZones';
import type { GeneralSettingsView, TrackingSettingsView } from './responses';
import type { CreateWebsiteBody, UpdateGeneralBody } from './schemas';
import { activeRole, countWebsites, lockTeam, planLimitReached, planLimits, requireRole } from './teams';

export interface WebsiteRow {
  id: string;
  team_id: string;
  user_id: string | null;
  domain: string;
  name: string;
  tracking_code: string;
  is_active: boolean;
  timezone: string;
  primary_color: string | null;
  kpi_goal: number | null;
  public_dashboard: boolean;
  allowed_domains: string[];
  verification_status: string;
  settings: WebsiteSettings;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, team_id, user_id, domain, name, tracking_code, is_active, timezone, primary_color, kpi_goal,
  public_dashboard, allowed_domains, verification_status, settings, created_at, updated_at`;

/** A row as every reader sees it: a stored zone that is not usable (written before zones were checked against
 *  ClickHouse, e.g. `US/Pacific-New`) reads as UTC, and one in another letter case in ClickHouse's spelling. */
function readable(w: WebsiteRow): WebsiteRow;
function readable(w: WebsiteRow | undefined): WebsiteRow | undefined;
function readable(w: WebsiteRow | undefined): WebsiteRow | undefined {
  if (!w) return w;
  const timezone = usableTimeZone(w.timezone);
  return timezone === w.timezone ? w : { ...w, timezone };
}

/** The list view of the spec's Website resource. */
export function websiteSummary(w: WebsiteRow): WebsiteSummary {
  return {
    id: w.id,
    domain: w.domain,
    name: w.name,
    tracking_code: w.tracking_code,
    is_active: w.is_active,
    created_at: w.created_at.toISOString(),
    team_id: w.team_id,
  };
}

/** The detail view: the summary plus creator and settings. */
export function websiteDetail(w: WebsiteRow): WebsiteDetail {
  return {
    ...websiteSummary(w),
    user_id: w.user_id,
    timezone: w.timezone,
    primary_color: w.primary_color,
    kpi_goal: w.kpi_goal,
    public_dashboard: w.public_dashboard,
    allowed_domains: w.allowed_domains,
    settings: w.settings,
    updated_at: w.updated_at.toISOString(),
  };
}

const CODE_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789'; // no look-alikes (l/1, o/0)

export function newTrackingCode(): string {
  const bytes = randomBytes(12);
  let code = 'tm-';
  for (const b of bytes) code += CODE_ALPHABET[b % CODE_ALPHABET.length];
  return code;
}

/** Creates a website in the team; the caller has checked the creator's right to do so. */
export async function createWebsite(pool: Pool, teamId: string, userId: string | null, body: CreateWebsiteBody) {
  return withTransaction(pool, async (client) => {
    const team = await lockTeam(client, teamId);
    const cap = planLimits(team).maxWebsites;
    if (cap !== null && (await countWebsites(client, teamId)) >= cap) throw planLimitReached(team, 'websites', cap);
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query('SAVEPOINT create_website');
        const { rows } = await client.query<WebsiteRow>(
          `INSERT INTO websites (team_id, user_id, domain, name, tracking_code, timezone)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
          [teamId, userId, body.domain, body.name, newTrackingCode(), body.timezone ?? 'UTC'],
        );
        return readable(rows[0]);
      } catch (err) {
        // A tracking-code collision is astronomically rare; try a fresh code rather than fail.
        if (!isUniqueViolation(err) || attempt >= 3) throw err;
        await client.query('ROLLBACK TO SAVEPOINT create_website');
      }
    }
  });
}

export async function getWebsite(db: Pool | PoolClient, websiteId: string): Promise<WebsiteRow | undefined> {
  const { rows } = await db.query<WebsiteRow>(`SELECT ${COLUMNS} FROM websites WHERE id = $1`, [websiteId]);
  return readable(rows[0]);
}

export async function getWebsiteByTrackingCode(db: Pool, code: string): Promise<WebsiteRow | undefined> {
  const { rows } = await db.query<WebsiteRow>(`SELECT ${COLUMNS} FROM websites WHERE tracking_code = $1`, [code]);
  return readable(rows[0]);
}

/** Websites of every team the user is an active member of, newest first. */
export async function listWebsitesForUser(pool: Pool, userId: string): Promise<WebsiteRow[]> {
  const { rows } = await pool.query<WebsiteRow>(
    `SELECT ${COLUMNS.replace(/(\w+)/g, 'w.$1')} FROM websites w
     JOIN team_members m ON m.team_id = w.team_id AND m.user_id = $1 AND m.deactivated_at IS NULL
     ORDER BY w.created_at DESC, w.id`,
    [userId],
  );
  return rows.map((w) => readable(w));
}

export async function listWebsitesForTeam(
  pool: Pool,
  teamId: string,
  onlyWebsiteId?: string | null,
): Promise<WebsiteRow[]> {
  const { rows } = await pool.query<WebsiteRow>(
    `SELECT ${COLUMNS} FROM websites WHERE team_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY created_at DESC, id`,
    [teamId, onlyWebsiteId ?? null],
  );
  return rows.map((w) => readable(w));
}

/** The website and the caller's role in its team: 404 when the caller is not a member, 403 below `minimum`. */
export async function requireWebsiteRole(pool: Pool, websiteId: string, userId: string, minimum: Role) {
  const website = await getWebsite(pool, websiteId);
  const role = website && (await activeRole(pool, website.team_id, userId));
  if (!website || !role) throw notFound('Website not found');
  requireRole(role, minimum);
  return { website, role };
}

export async function updateGeneral(pool: Pool, websiteId: string, body: UpdateGeneralBody): Promise<WebsiteRow> {
  const sets: string[] = [];
  const values: unknown[] = [websiteId];
  // Column names come from this fixed list, never from the request.
  const columns = [
    'domain',
    'name',
    'timezone',
    'primary_color',
    'kpi_goal',
    'public_dashboard',
    'allowed_domains',
  ] as const;
  for (const column of columns) {
    if (body[column] === undefined) continue;
    values.push(body[column]);
    sets.push(`${column} = $${values.length}`);
  }
  const { rows } = await pool.query<WebsiteRow>(
    `UPDATE websites SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`,
    values,
  );
  if (!rows[0]) throw notFound('Website not found');
  return readable(rows[0]);
}

export function generalSettingsView(w: WebsiteRow): GeneralSettingsView {
  return {
    id: w.id,
    domain: w.domain,
    name: w.name,
    timezone: w.timezone,
    primary_color: w.primary_color,
    kpi_goal: w.kpi_goal,
    public_dashboard: w.public_dashboard,
    allowed_domains: w.allowed_domains,
    updated_at: w.updated_at.toISOString(),
  };
}

export function trackingSettingsView(w: WebsiteRow): TrackingSettingsView {
  return { id: w.id, settings: w.settings, updated_at: w.updated_at.toISOString() };
}

/** Merges the tracking booleans into the website's settings. */
export async function updateTrackingSettings(
  pool: Pool,
  websiteId: string,
  changes: Partial<WebsiteSettings>,
): Promise<WebsiteRow> {
  const { rows } = await pool.query<WebsiteRow>(
    `UPDATE websites SET settings = settings || $2::jsonb, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [websiteId, JSON.stringify(changes)],
  );
  if (!rows[0]) throw notFound('Website not found');
  return readable(rows[0]);
}

export async function deleteWebsiteRow(pool: Pool, websiteId: string): Promise<void> {
  await pool.query('DELETE FROM websites WHERE id = $1', [websiteId]);
}

/**
 * Ids of the websites with a domain (letter case aside) that a team owns, or that the teams of a user (an
 * active member) own: how an API that names websites by domain, as Plausible's does, finds one.
 */
export async function websiteIdsByDomain(
  pool: Pool,
  domain: string,
  owner: { teamId: string } | { userId: string },
): Promise<string[]> {
  const { rows } =
    'teamId' in owner
      ? await pool.query<{ id: string }>('SELECT id FROM websites WHERE team_id = $1 AND lower(domain) = lower($2)', [
          owner.teamId,
          domain,
        ])
      : await pool.query<{ id: string }>(
          `SELECT w.id FROM websites w
           JOIN team_members m ON m.team_id = w.team_id AND m.user_id = $1 AND m.deactivated_at IS NULL
           WHERE lower(w.domain) = lower($2)`,
          [owner.userId, domain],
        );
  return rows.map((r) => r.id);
}
