// Invitations (DESIGN §5): a one-time link that lets the person with that email join a team, registering on the
// way when they have no account (even with ALLOW_SIGNUP=false: an invite is how a closed server lets people in).
// Only the SHA-256 of the link's token is kept; the link is shown once, to whoever created it.
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { sha256Hex } from '../auth/tokens';
import { withTransaction } from '../db/pool';
import { forbidden, HttpError, notFound } from '../errors';
import type { PlanName, Role } from '../plans';
import { joinTeam, ownerOnly } from './members';
import type { InvitePreviewView, InviteView } from './responses';
import { lockTeam } from './teams';
import { createUser, findUserByEmail, type UserRow } from './users';

export const INVITE_TTL_DAYS = 7;

interface InviteRow {
  id: string;
  team_id: string;
  team_name: string;
  email: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const SELECT = `SELECT i.id, i.team_id, t.name AS team_name, i.email, i.role, i.created_at, i.expires_at, i.accepted_at, i.revoked_at
  FROM team_invites i JOIN teams t ON t.id = i.team_id`;

export function inviteView(i: InviteRow): InviteView {
  return {
    id: i.id,
    team: { id: i.team_id, name: i.team_name },
    email: i.email,
    role: i.role,
    created_at: i.created_at.toISOString(),
    expires_at: i.expires_at.toISOString(),
    status: i.accepted_at
      ? 'accepted'
      : i.revoked_at
        ? 'revoked'
        : i.expires_at.getTime() <= Date.now()
          ? 'expired'
          : 'pending',
  };
}

/** The link a person opens; the dashboard's /invite page reads the token from it. */
export function inviteUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/invite/${token}`;
}

/** Creates an invite; the token is returned once and never stored. */
export async function createInvite(
  pool: Pool,
  teamId: string,
  actor: { role: Role; userId: string | null },
  email: string,
  role: Role,
): Promise<{ invite: InviteView; token: string }> {
  ownerOnly(actor.role, role);
  const token = randomBytes(32).toString('base64url');
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO team_invites (team_id, email, role, token_hash, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(days => $6)) RETURNING id`,
    [teamId, email, role, sha256Hex(token), actor.userId, INVITE_TTL_DAYS],
  );
  return { invite: inviteView(await getInvite(pool, rows[0].id)), token };
}

async function getInvite(db: Pool | PoolClient, id: string): Promise<InviteRow> {
  const { rows } = await db.query<InviteRow>(`${SELECT} WHERE i.id = $1`, [id]);
  if (!rows[0]) throw notFound('Invite not found');
  return rows[0];
}

export async function listInvites(pool: Pool, teamId: string): Promise<InviteView[]> {
  const { rows } = await pool.query<InviteRow>(`${SELECT} WHERE i.team_id = $1 ORDER BY i.created_at DESC, i.id`, [
    teamId,
  ]);
  return rows.map(inviteView);
}

export async function revokeInvite(pool: Pool, teamId: string, inviteId: string): Promise<void> {
  const { rowCount } = await pool.query(
    'UPDATE team_invites SET revoked_at = now() WHERE id = $1 AND team_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL',
    [inviteId, teamId],
  );
  if (!rowCount) throw notFound('Invite not found');
}

/** The open invite a token belongs to (404 for anything else: unknown, used, revoked or expired look alike). */
async function openInvite(db: Pool | PoolClient, token: string, lock = false): Promise<InviteRow> {
  const { rows } = await db.query<InviteRow>(
    `${SELECT} WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()${lock ? ' FOR UPDATE OF i' : ''}`,
    [sha256Hex(token)],
  );
  if (!rows[0]) throw notFound('This invite link is unknown, used, revoked or expired');
  return rows[0];
}

/** What the invite page shows before the person accepts, and whether they must register. */
export async function previewInvite(pool: Pool, token: string): Promise<InvitePreviewView> {
  const invite = await openInvite(pool, token);
  return { ...inviteView(invite), registered: (await findUserByEmail(pool, invite.email)) !== undefined };
}

export type Acceptor =
  | { kind: 'user'; user: Pick<UserRow, 'id' | 'email'> }
  | { kind: 'register'; password: string; full_name?: string; plan: PlanName };

/**
 * Uses the invite once: a signed-in user whose email is the invite's joins the team; a person without an
 * account registers with the invite's email and joins. Returns the user and their membership.
 */
export async function acceptInvite(pool: Pool, token: string, acceptor: Acceptor) {
  const invite = await openInvite(pool, token);
  let userId: string;
  let created: Awaited<ReturnType<typeof createUser>> | undefined;
  if (acceptor.kind === 'user') {
    if (acceptor.user.email.toLowerCase() !== invite.email.toLowerCase()) {
      throw forbidden(`This invite is for ${invite.email}; sign in with that account to accept it`);
    }
    userId = acceptor.user.id;
  } else {
    if (await findUserByEmail(pool, invite.email)) {
      throw new HttpError(
        409,
        'CONFLICT',
        `An account with ${invite.email} exists; sign in with it to accept the invite`,
      );
    }
    created = await createUser(
      pool,
      { email: invite.email, password: acceptor.password, full_name: acceptor.full_name },
      { plan: acceptor.plan },
    );
    userId = created.user.id;
  }
  const member = await withTransaction(pool, async (client) => {
    // Locked and re-read: of two accepts racing with one token, one joins and the other gets 404.
    const open = await openInvite(client, token, true);
    const team = await lockTeam(client, open.team_id);
    const joined = await joinTeam(client, team, userId, open.role);
    await client.query('UPDATE team_invites SET accepted_at = now(), accepted_by = $2 WHERE id = $1', [
      open.id,
      userId,
    ]);
    return joined;
  });
  return { userId, created, member, teamId: invite.team_id };
}
