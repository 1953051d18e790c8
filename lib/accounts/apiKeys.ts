// API keys (DESIGN §3): paid plans only, bound to one team, full_access or site_access; the plaintext is
// returned once and only its SHA-256 is stored, beside a short visible prefix.
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { sha256Hex } from '../auth/tokens';
import { forbidden, notFound } from '../errors';
import { type LimitOverrides, limitOverridesSchema, type PlanName } from '../plans';
import type { ApiKeyView, CreatedApiKeyView } from './responses';
import type { CreateApiKeyBody } from './schemas';
import { getTeam, liftHint } from './teams';
import { getWebsite, type WebsiteRow } from './websites';

export const KEY_PREFIX = 'tmk_';
const VISIBLE_CHARS = 12;

export interface ApiKeyRow {
  id: string;
  team_id: string;
  name: string;
  permission: 'full_access' | 'site_access';
  website_id: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, team_id, name, permission, website_id, prefix, created_at, last_used_at, revoked_at';

export function apiKeyView(k: ApiKeyRow): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    permission: k.permission,
    website_id: k.website_id,
    prefix: k.prefix,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}

export function paidPlanRequired(teamId: string) {
  return forbidden(`API keys need a plan other than free; ${liftHint(teamId)}`, 'API_PAID_PLAN_REQUIRED');
}

export async function createApiKey(
  pool: Pool,
  teamId: string,
  userId: string,
  body: CreateApiKeyBody,
): Promise<CreatedApiKeyView> {
  const team = await getTeam(pool, teamId);
  if (!team) throw notFound('Team not found');
  if (team.plan === 'free') throw paidPlanRequired(team.id);
  if (body.website_id) {
    const website = await getWebsite(pool, body.website_id);
    if (!website || website.team_id !== teamId) throw notFound('Website not found');
  }
  const key = KEY_PREFIX + randomBytes(30).toString('base64url');
  const { rows } = await pool.query<ApiKeyRow>(
    `INSERT INTO api_keys (team_id, name, permission, website_id, prefix, key_hash, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [teamId, body.name, body.permission, body.website_id ?? null, key.slice(0, VISIBLE_CHARS), sha256Hex(key), userId],
  );
  return { ...apiKeyView(rows[0]), key };
}

export async function listApiKeys(pool: Pool, teamId: string): Promise<ApiKeyRow[]> {
  const { rows } = await pool.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE team_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id`,
    [teamId],
  );
  return rows;
}

/** A key of the team (revoked ones included: their history stays readable); 404 otherwise. */
export async function getTeamApiKey(pool: Pool, teamId: string, keyId: string): Promise<ApiKeyRow> {
  const { rows } = await pool.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND team_id = $2`, [
    keyId,
    teamId,
  ]);
  if (!rows[0]) throw notFound('API key not found');
  return rows[0];
}

export async function revokeApiKey(pool: Pool, teamId: string, keyId: string): Promise<void> {
  const { rowCount } = await pool.query(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND team_id = $2 AND revoked_at IS NULL',
    [keyId, teamId],
  );
  if (!rowCount) throw notFound('API key not found');
}

export interface ApiKeyPrincipal {
  keyId: string;
  keyName: string;
  teamId: string;
  permission: 'full_access' | 'site_access';
  websiteId: string | null;
  plan: PlanName;
  planLabel: string;
  limitOverrides: LimitOverrides;
}

/** How stale last_used_at may get: a busy key writes its row at most once per this many seconds. */
const LAST_USED_RESOLUTION_SECONDS = 60;

/** Records that a key was used (the settings list shows it), at most once per resolution. */
async function touchApiKey(pool: Pool, keyId: string): Promise<void> {
  await pool.query(
    `UPDATE api_keys SET last_used_at = now()
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
    [keyId, LAST_USED_RESOLUTION_SECONDS],
  );
}

/** The live, unrevoked key for a presented secret, with its team's plan; undefined for anything else. */
export async function authenticateApiKey(pool: Pool, presented: string): Promise<ApiKeyPrincipal | undefined> {
  if (!presented.startsWith(KEY_PREFIX) || presented.length > 200) return undefined;
  const { rows } = await pool.query<
    ApiKeyRow & { plan: PlanName; plan_label: string | null; limit_overrides: unknown }
  >(
    `SELECT k.id, k.team_id, k.name, k.permission, k.website_id, k.last_used_at, t.plan, t.plan_label, t.limit_overrides
     FROM api_keys k JOIN teams t ON t.id = k.team_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [sha256Hex(presented)],
  );
  const row = rows[0];
  if (!row) return undefined;
  // Checked here first so a busy key costs no extra round trip on most requests.
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() >= LAST_USED_RESOLUTION_SECONDS * 1000)
    await touchApiKey(pool, row.id);
  return {
    keyId: row.id,
    keyName: row.name,
    teamId: row.team_id,
    permission: row.permission,
    websiteId: row.website_id,
    plan: row.plan,
    planLabel: row.plan_label ?? row.plan,
    limitOverrides: limitOverridesSchema.parse(row.limit_overrides),
  };
}

/**
 * The website an API key asks about: 404 when it does not exist or is another team's (no existence leak),
 * 403 FORBIDDEN when a site_access key names another website of its own team.
 */
export async function websiteForApiKey(pool: Pool, key: ApiKeyPrincipal, websiteId: string): Promise<WebsiteRow> {
  const website = await getWebsite(pool, websiteId);
  if (!website || website.team_id !== key.teamId) throw notFound('Website not found');
  if (key.permission === 'site_access' && key.websiteId !== website.id)
    throw forbidden('This API key is bound to another website');
  return website;
}
