// Users and their personal teams.
import type { Pool, PoolClient } from 'pg';
import { burnVerifyTime, hashPassword, verifyPassword } from '../auth/passwords';
import type { LoginThrottle } from '../auth/throttle';
import { withTransaction } from '../db/pool';
import { conflict, isUniqueViolation, notFound, orUnavailable, unauthorized } from '../errors';
import type { PlanName } from '../plans';
import type { UserView } from './responses';
import type { RegisterBody, UpdateProfileBody } from './schemas';

export interface UserRow {
  id: string;
  email: string;
  full_name: string | null;
  avatar_url: string | null;
  default_team_id: string | null;
  created_at: Date;
  updated_at: Date;
  /** Version every JWT of the user carries; raised to revoke them (lib/auth/tokens.ts). */
  token_version: number;
}

const USER_COLUMNS = 'id, email, full_name, avatar_url, default_team_id, created_at, updated_at, token_version';

export function publicUser(u: UserRow): UserView {
  return {
    id: u.id,
    email: u.email,
    full_name: u.full_name,
    avatar_url: u.avatar_url,
    default_team_id: u.default_team_id,
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
  };
}

export interface NewUserOptions {
  /** The plan of the user's personal team (DEFAULT_PLAN), unless they become the instance owner. */
  plan: PlanName;
  /**
   * `first`: the user becomes the instance owner when there is none yet (the first account registered);
   * `take`: the user becomes the owner whoever was (`tidemark admin create-user --owner`). The owner's team is
   * on the `unlimited` plan.
   */
  owner?: 'first' | 'take';
}

/** Creates a user with a personal team, where they are the owner. */
export async function createUser(pool: Pool, input: RegisterBody, options: NewUserOptions) {
  const passwordHash = await hashPassword(input.password);
  try {
    return await withTransaction(pool, async (client) => {
      const user = (
        await client.query<UserRow>(
          `INSERT INTO users (email, password_hash, full_name) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`,
          [input.email, passwordHash, input.full_name ?? null],
        )
      ).rows[0];
      const instanceOwner = options.owner ? await claimInstance(client, user.id, options.owner) : false;
      const team = await createPersonalTeam(client, user, instanceOwner ? 'unlimited' : options.plan);
      const updated = (
        await client.query<UserRow>(`UPDATE users SET default_team_id = $2 WHERE id = $1 RETURNING ${USER_COLUMNS}`, [
          user.id,
          team.id,
        ])
      ).rows[0];
      return { user: updated, team, instanceOwner };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('An account with this email already exists');
    throw err;
  }
}

/** Whether the instance has its owner yet (the dashboard's first-run screen creates one when not). */
export async function instanceHasOwner(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ owned: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM instance WHERE owner_user_id IS NOT NULL) AS owned',
  );
  return rows[0].owned;
}

/** Makes the user the instance owner; with `first`, only when nobody is (one row updated, so two sign-ups cannot both win). */
async function claimInstance(client: PoolClient, userId: string, how: 'first' | 'take'): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE instance SET owner_user_id = $1 ${how === 'first' ? 'WHERE owner_user_id IS NULL' : ''}`,
    [userId],
  );
  return (rowCount ?? 0) > 0;
}

async function createPersonalTeam(client: PoolClient, user: UserRow, plan: PlanName) {
  const name = user.full_name ? `${user.full_name}'s team` : `${user.email.split('@')[0]}'s team`;
  const team = (
    await client.query<{ id: string; name: string; plan: string; created_at: Date }>(
      'INSERT INTO teams (name, plan) VALUES ($1, $2) RETURNING id, name, plan, created_at',
      [name, plan],
    )
  ).rows[0];
  await client.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')`, [team.id, user.id]);
  return team;
}

/** Same error for an unknown email and a wrong password, and the same time taken. */
export async function authenticateUser(pool: Pool, email: string, password: string): Promise<UserRow> {
  const { rows } = await pool.query<UserRow & { password_hash: string }>(
    `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`,
    [email],
  );
  const found = rows[0];
  if (!found) {
    await burnVerifyTime(password);
    throw unauthorized('Invalid email or password');
  }
  if (!(await verifyPassword(found.password_hash, password))) throw unauthorized('Invalid email or password');
  const { password_hash: _omit, ...user } = found;
  return user;
}

export async function getUser(pool: Pool, userId: string): Promise<UserRow | undefined> {
  const { rows } = await pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [userId]);
  return rows[0];
}

export async function findUserByEmail(db: Pool | PoolClient, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email]);
  return rows[0];
}

export async function updateProfile(pool: Pool, userId: string, body: UpdateProfileBody): Promise<UserRow> {
  const { rows } = await pool.query<UserRow>(
    `UPDATE users SET
       full_name = CASE WHEN $2 THEN $3 ELSE full_name END,
       avatar_url = CASE WHEN $4 THEN $5 ELSE avatar_url END,
       updated_at = now()
     WHERE id = $1 RETURNING ${USER_COLUMNS}`,
    [
      userId,
      body.full_name !== undefined,
      body.full_name ?? null,
      body.avatar_url !== undefined,
      body.avatar_url ?? null,
    ],
  );
  if (!rows[0]) throw notFound('User not found');
  return rows[0];
}

/**
 * Sets a new password, ends every other session of the user and revokes every JWT issued so far. Returns
 * the new token version, so the caller can be handed a fresh token.
 */
export async function setPassword(
  pool: Pool,
  userId: string,
  newPassword: string,
  keepSessionHash?: string,
): Promise<number> {
  const hash = await hashPassword(newPassword);
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ token_version: number }>(
      'UPDATE users SET password_hash = $2, token_version = token_version + 1, updated_at = now() WHERE id = $1 RETURNING token_version',
      [userId, hash],
    );
    if (!rows[0]) throw notFound('User not found');
    await client.query('DELETE FROM user_sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [
      userId,
      keepSessionHash ?? null,
    ]);
    return rows[0].token_version;
  });
}

export async function changePassword(
  pool: Pool,
  throttle: LoginThrottle,
  userId: string,
  current: string,
  next: string,
  keepSessionHash?: string,
): Promise<number> {
  await requireCurrentPassword(pool, throttle, userId, current);
  return setPassword(pool, userId, next, keepSessionHash);
}

/**
 * 401 unless `password` is the user's current password (a password change, deleting the account); 429 once
 * the user has guessed wrong too often (a stolen token must not become a way to guess the password), even
 * for the right password until the window passes.
 */
export async function requireCurrentPassword(
  pool: Pool,
  throttle: LoginThrottle,
  userId: string,
  password: string,
): Promise<void> {
  const { rows } = await pool.query<{ password_hash: string; email: string }>(
    'SELECT password_hash, email FROM users WHERE id = $1',
    [userId],
  );
  if (!rows[0]) throw unauthorized('Current password is incorrect');
  await orUnavailable(throttle.reauthAttempt(userId, rows[0].email));
  if (!(await verifyPassword(rows[0].password_hash, password))) throw unauthorized('Current password is incorrect');
  await throttle.reauthSucceed(userId, rows[0].email).catch(() => undefined);
}
