// Deleting one's own account (DELETE /api/users/me). The user goes with their memberships, sessions and
// onboarding (foreign keys cascade); a team left without any other active member — their personal team, as a
// rule — goes with every record it holds (websites and their analytics, API keys, invites, conversations). A
// team that others still use stays, so the account cannot be deleted while it is such a team's last owner.
import type { Pool } from 'pg';
import type { LoginThrottle } from '../auth/throttle';
import type { ClickHouseClient } from '../clickhouse/client';
import { purgeWebsiteData } from '../clickhouse/purge';
import { withTransaction } from '../db/pool';
import { HttpError, notFound } from '../errors';
import { requireCurrentPassword } from './users';

interface TeamStanding {
  id: string;
  name: string;
  role: string;
  other_members: string;
  other_owners: string;
}

export interface DeletedAccount {
  /** Teams deleted with the account. */
  teamIds: string[];
  /** Tracking codes of the websites deleted with them, for the callers' caches. */
  trackingCodes: string[];
}

export async function deleteAccount(
  pool: Pool,
  clickhouse: ClickHouseClient,
  throttle: LoginThrottle,
  userId: string,
  password: string,
): Promise<DeletedAccount> {
  await requireCurrentPassword(pool, throttle, userId, password);
  return withTransaction(pool, async (client) => {
    const user = await client.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
    if (!user.rowCount) throw notFound('User not found');
    // With no owner recorded, the next person to sign up would become the instance owner (plan unlimited).
    const owner = await client.query('SELECT 1 FROM instance WHERE owner_user_id = $1', [userId]);
    if (owner.rowCount) {
      throw new HttpError(
        409,
        'INSTANCE_OWNER',
        'The instance owner’s account cannot be deleted; make another account the owner first (`tidemark admin create-user --owner`)',
      );
    }
    // The teams are locked (in id order, so two deletions cannot deadlock) before anyone is counted: no member
    // can join or be promoted between the decision and the delete.
    const { rows: locked } = await client.query<{ id: string }>(
      `SELECT t.id FROM teams t JOIN team_members m ON m.team_id = t.id
       WHERE m.user_id = $1 AND m.deactivated_at IS NULL ORDER BY t.id FOR UPDATE OF t`,
      [userId],
    );
    const { rows: teams } = await client.query<TeamStanding>(
      `SELECT t.id, t.name, m.role,
         (SELECT count(*) FROM team_members o
            WHERE o.team_id = t.id AND o.user_id <> $1 AND o.deactivated_at IS NULL) AS other_members,
         (SELECT count(*) FROM team_members o
            WHERE o.team_id = t.id AND o.user_id <> $1 AND o.deactivated_at IS NULL AND o.role = 'owner') AS other_owners
       FROM teams t JOIN team_members m ON m.team_id = t.id AND m.user_id = $1
       WHERE t.id = ANY($2::uuid[]) ORDER BY t.id`,
      [userId, locked.map((t) => t.id)],
    );
    const stranded = teams.filter(
      (t) => t.role === 'owner' && Number(t.other_members) > 0 && Number(t.other_owners) === 0,
    );
    if (stranded.length > 0) {
      throw new HttpError(
        409,
        'LAST_OWNER',
        `You are the last owner of ${stranded.map((t) => `"${t.name}" (${t.id})`).join(', ')}, which other members use; make one of them an owner or remove them first`,
      );
    }
    const teamIds = teams.filter((t) => Number(t.other_members) === 0).map((t) => t.id);
    const { rows: websites } = await client.query<{ id: string; tracking_code: string }>(
      'SELECT id, tracking_code FROM websites WHERE team_id = ANY($1::uuid[]) ORDER BY id',
      [teamIds],
    );
    // Analytics before the rows, inside the transaction: if ClickHouse fails, nothing is deleted in PostgreSQL
    // and the request can simply be repeated.
    for (const w of websites) await purgeWebsiteData(clickhouse, w.id);
    await client.query('DELETE FROM teams WHERE id = ANY($1::uuid[])', [teamIds]);
    await client.query('DELETE FROM users WHERE id = $1', [userId]);
    return { teamIds, trackingCodes: websites.map((w) => w.tracking_code) };
  });
}
