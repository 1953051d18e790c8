// Teams, memberships and role checks. A non-member is told "not found", never "forbidden", so team and
// website ids leak nothing (DESIGN §3).
import type { Pool, PoolClient } from 'pg';
import { forbidden, HttpError, notFound } from '../errors';
import { type LimitOverrides, limitOverridesSchema, PLANS, type PlanName, ROLE_RANK, type Role } from '../plans';

export interface TeamRow {
  id: string;
  name: string;
  plan: PlanName;
  plan_label: string | null;
  limit_overrides: LimitOverrides;
  created_at: Date;
}

type Queryable = Pool | PoolClient;

export async function getTeam(db: Queryable, teamId: string): Promise<TeamRow | undefined> {
  const { rows } = await db.query<TeamRow>(
    'SELECT id, name, plan, plan_label, limit_overrides, created_at FROM teams WHERE id = $1',
    [teamId],
  );
  return rows[0] && { ...rows[0], limit_overrides: limitOverridesSchema.parse(rows[0].limit_overrides) };
}

export async function activeRole(db: Queryable, teamId: string, userId: string): Promise<Role | undefined> {
  const { rows } = await db.query<{ role: Role }>(
    'SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2 AND deactivated_at IS NULL',
    [teamId, userId],
  );
  return rows[0]?.role;
}

export function hasRole(role: Role, minimum: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[minimum];
}

export function requireRole(role: Role, minimum: Role): void {
  if (!hasRole(role, minimum)) throw forbidden(`This action needs the ${minimum} role or higher`);
}

/** The caller's role in the team: 404 when not an active member, 403 when below `minimum`. */
export async function requireTeamRole(db: Queryable, teamId: string, userId: string, minimum: Role) {
  const role = await activeRole(db, teamId, userId);
  const team = role && (await getTeam(db, teamId));
  if (!role || !team) throw notFound('Team not found');
  requireRole(role, minimum);
  return { team, role };
}

/** How the operator of a self-hosted server lifts a team's plan limits, for refusals to quote. */
export function liftHint(teamId: string): string {
  return `the server's operator lifts it with \`tidemark admin plan --team ${teamId} --plan unlimited\` (or pro, scale, enterprise)`;
}

export function planLimitReached(team: Pick<TeamRow, 'id' | 'plan'>, what: string, limit: number): HttpError {
  return new HttpError(
    403,
    'PLAN_LIMIT_REACHED',
    `The ${team.plan} plan allows ${limit} ${what}; ${liftHint(team.id)}`,
  );
}

export async function countWebsites(db: Queryable, teamId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM websites WHERE team_id = $1', [teamId]);
  return Number(rows[0].n);
}

export async function countActiveMembers(db: Queryable, teamId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM team_members WHERE team_id = $1 AND deactivated_at IS NULL',
    [teamId],
  );
  return Number(rows[0].n);
}

/** Locks the team row for the rest of the transaction, so cap checks and inserts cannot interleave. */
export async function lockTeam(client: PoolClient, teamId: string): Promise<TeamRow> {
  await client.query('SELECT 1 FROM teams WHERE id = $1 FOR UPDATE', [teamId]);
  const team = await getTeam(client, teamId);
  if (!team) throw notFound('Team not found');
  return team;
}

export function planLimits(team: TeamRow) {
  return PLANS[team.plan];
}

export async function setTeamPlan(pool: Pool, teamId: string, plan: PlanName, label: string): Promise<TeamRow> {
  const { rowCount } = await pool.query(
    'UPDATE teams SET plan = $2, plan_label = $3, updated_at = now() WHERE id = $1',
    [teamId, plan, label],
  );
  if (!rowCount) throw notFound(`Team ${teamId} not found`);
  return (await getTeam(pool, teamId))!;
}

/** Merges operator overrides: a number sets the limit, null means unlimited, 'plan' restores the plan's value. */
export async function setTeamLimits(
  pool: Pool,
  teamId: string,
  changes: Partial<Record<keyof LimitOverrides, number | null | 'plan'>>,
): Promise<TeamRow> {
  const team = await getTeam(pool, teamId);
  if (!team) throw notFound(`Team ${teamId} not found`);
  const next: LimitOverrides = { ...team.limit_overrides };
  for (const [key, value] of Object.entries(changes) as [keyof LimitOverrides, number | null | 'plan'][]) {
    if (value === 'plan') delete next[key];
    else next[key] = value;
  }
  await pool.query('UPDATE teams SET limit_overrides = $2, updated_at = now() WHERE id = $1', [
    teamId,
    JSON.stringify(next),
  ]);
  return (await getTeam(pool, teamId))!;
}
