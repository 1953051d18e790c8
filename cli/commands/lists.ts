// `tidemark admin users|teams|websites list`: what the instance holds, as a table or JSON.
import { type Context, printRows, type Values } from '../context';

export async function runUsersList(v: Values, ctx: Context): Promise<void> {
  const { rows } = await (await ctx.pool()).query(
    `SELECT u.id, u.email, u.full_name AS name, (i.owner_user_id = u.id) AS instance_owner,
            (SELECT count(*)::int FROM team_members m WHERE m.user_id = u.id AND m.deactivated_at IS NULL) AS teams,
            u.created_at
     FROM users u CROSS JOIN instance i ORDER BY u.created_at, u.id`,
  );
  printRows(ctx.io, rows, v.json === true, ['id', 'email', 'name', 'instance_owner', 'teams', 'created_at']);
}

export async function runTeamsList(v: Values, ctx: Context): Promise<void> {
  const { rows } = await (await ctx.pool()).query(
    `SELECT t.id, t.name, coalesce(t.plan_label, t.plan) AS plan,
            (SELECT count(*)::int FROM team_members m WHERE m.team_id = t.id AND m.deactivated_at IS NULL) AS members,
            (SELECT count(*)::int FROM websites w WHERE w.team_id = t.id) AS websites,
            t.limit_overrides AS overrides, t.created_at
     FROM teams t ORDER BY t.created_at, t.id`,
  );
  const shown = rows.map((r) => ({
    ...r,
    overrides: Object.keys(r.overrides).length ? JSON.stringify(r.overrides) : null,
  }));
  printRows(ctx.io, v.json === true ? rows : shown, v.json === true, [
    'id',
    'name',
    'plan',
    'members',
    'websites',
    'overrides',
    'created_at',
  ]);
}

export async function runWebsitesList(v: Values, ctx: Context): Promise<void> {
  const { rows } = await (await ctx.pool()).query(
    `SELECT w.id, w.domain, w.name, w.tracking_code, w.team_id, t.name AS team, w.timezone, w.is_active AS active, w.created_at
     FROM websites w JOIN teams t ON t.id = w.team_id ORDER BY w.created_at, w.id`,
  );
  printRows(ctx.io, rows, v.json === true, [
    'id',
    'domain',
    'name',
    'tracking_code',
    'team',
    'timezone',
    'active',
    'created_at',
  ]);
}
