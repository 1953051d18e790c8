// Team members (spec "Website settings" team-member rows, DESIGN §3): add by email, change role, soft delete.
// Only an owner grants or removes the owner role, and a team always keeps at least one active owner.
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../db/pool';
import { conflict, forbidden, notFound } from '../errors';
import type { Role } from '../plans';
import type { MemberView } from './responses';
import { countActiveMembers, lockTeam, planLimitReached, planLimits, type TeamRow } from './teams';
import { findUserByEmail } from './users';

interface MemberRow {
  id: string;
  team_id: string;
  user_id: string;
  role: Role;
  created_at: Date;
  deactivated_at: Date | null;
  email: string;
  full_name: string | null;
  avatar_url: string | null;
}

const SELECT = `SELECT m.id, m.team_id, m.user_id, m.role, m.created_at, m.deactivated_at,
  u.email, u.full_name, u.avatar_url FROM team_members m JOIN users u ON u.id = m.user_id`;

export function memberView(m: MemberRow, withName = false): MemberView {
  return {
    id: m.id,
    user_id: m.user_id,
    role: m.role,
    created_at: m.created_at.toISOString(),
    deactivated_at: m.deactivated_at?.toISOString() ?? null,
    user: {
      id: m.user_id,
      email: m.email,
      full_name: m.full_name,
      avatar_url: m.avatar_url,
      ...(withName ? { name: m.full_name ?? m.email } : {}),
    },
  };
}

export async function listMembers(db: Pool | PoolClient, teamId: string): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(`${SELECT} WHERE m.team_id = $1 ORDER BY m.created_at, m.id`, [teamId]);
  return rows;
}

async function getMember(db: PoolClient, teamId: string, memberId: string): Promise<MemberRow> {
  const { rows } = await db.query<MemberRow>(`${SELECT} WHERE m.team_id = $1 AND m.id = $2`, [teamId, memberId]);
  if (!rows[0]) throw notFound('Team member not found');
  return rows[0];
}

export function ownerOnly(actorRole: Role, ...roles: Role[]): void {
  if (roles.includes('owner') && actorRole !== 'owner')
    throw forbidden('Only an owner can grant or remove the owner role');
}

async function activeOwners(db: PoolClient, teamId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM team_members WHERE team_id = $1 AND role = 'owner' AND deactivated_at IS NULL`,
    [teamId],
  );
  return Number(rows[0].n);
}

/**
 * Adds (or reactivates) a registered user. The answers are ordered so that they say no more about an email
 * than the spec makes an admin's 404 say: "already a member" (which the member list shows anyway), then the
 * plan's cap — so a team that cannot grow (every free team) learns nothing about whether the email is
 * registered — and only then 404 for an unknown email.
 */
export async function addMember(pool: Pool, teamId: string, actorRole: Role, email: string, role: Role = 'viewer') {
  ownerOnly(actorRole, role);
  return withTransaction(pool, async (client) => {
    const team = await lockTeam(client, teamId);
    const user = await findUserByEmail(client, email);
    if (user) return joinTeam(client, team, user.id, role);
    await requireRoomFor(client, team);
    throw notFound('No registered user has this email');
  });
}

/**
 * Adds (or reactivates) `userId` in a team locked by the caller: 409 when already an active member, then the
 * plan's member cap.
 */
export async function joinTeam(client: PoolClient, team: TeamRow, userId: string, role: Role) {
  const existing = (
    await client.query<{ id: string; deactivated_at: Date | null }>(
      'SELECT id, deactivated_at FROM team_members WHERE team_id = $1 AND user_id = $2',
      [team.id, userId],
    )
  ).rows[0];
  if (existing && !existing.deactivated_at) throw conflict('This user is already a member of the team');
  await requireRoomFor(client, team);
  const { rows } = existing
    ? await client.query<{ id: string }>(
        'UPDATE team_members SET role = $2, deactivated_at = NULL WHERE id = $1 RETURNING id',
        [existing.id, role],
      )
    : await client.query<{ id: string }>(
        'INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3) RETURNING id',
        [team.id, userId, role],
      );
  return getMember(client, team.id, rows[0].id);
}

async function requireRoomFor(client: PoolClient, team: TeamRow): Promise<void> {
  const cap = planLimits(team).maxTeamMembers;
  if (cap !== null && (await countActiveMembers(client, team.id)) >= cap)
    throw planLimitReached(team, 'team members', cap);
}

export async function changeMemberRole(pool: Pool, teamId: string, actorRole: Role, memberId: string, role: Role) {
  return withTransaction(pool, async (client) => {
    await lockTeam(client, teamId);
    const member = await getMember(client, teamId, memberId);
    if (member.deactivated_at) throw notFound('Team member not found');
    ownerOnly(actorRole, role, member.role);
    if (member.role === 'owner' && role !== 'owner' && (await activeOwners(client, teamId)) <= 1) {
      throw conflict('The last owner of a team cannot be demoted');
    }
    await client.query('UPDATE team_members SET role = $2 WHERE id = $1', [memberId, role]);
    return getMember(client, teamId, memberId);
  });
}

export async function deactivateMember(pool: Pool, teamId: string, actorRole: Role, memberId: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    await lockTeam(client, teamId);
    const member = await getMember(client, teamId, memberId);
    if (member.deactivated_at) throw notFound('Team member not found');
    ownerOnly(actorRole, member.role);
    if (member.role === 'owner' && (await activeOwners(client, teamId)) <= 1) {
      throw conflict('The last owner of a team cannot be removed');
    }
    await client.query('UPDATE team_members SET deactivated_at = now() WHERE id = $1', [memberId]);
  });
}
