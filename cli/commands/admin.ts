import { randomBytes } from 'node:crypto';
import { createInvite, inviteUrl } from '../../lib/accounts/invites';
import { email as emailSchema, password as passwordSchema, role as roleSchema } from '../../lib/accounts/schemas';
import { getTeam, setTeamLimits, setTeamPlan } from '../../lib/accounts/teams';
import { createUser, findUserByEmail, setPassword } from '../../lib/accounts/users';
import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { createLogger } from '../../lib/log';
import { sendInviteEmail } from '../../lib/notifications/inviteEmail';
import { PLANS, parsePlanName } from '../../lib/plans';
import { restampRetention } from '../../lib/retention';
import { type Context, type Io, parseWith, requireString, requireUuid, UsageError, type Values } from '../context';

export async function runPlan(v: Values, ctx: Context): Promise<void> {
  const team = requireUuid(v.team, '--team');
  const parsed = parsePlanName(requireString(v.plan, '--plan'));
  if (!parsed)
    throw new UsageError('--plan must be one of free, pro, scale, enterprise, unlimited (or starter, professional)');
  const pool = await ctx.pool();
  const updated = await setTeamPlan(pool, team, parsed.plan, parsed.label);
  ctx.io.out(
    `team ${updated.id} is now on plan ${parsed.label}${parsed.label !== parsed.plan ? ` (${parsed.plan})` : ''}`,
  );
  // Stored rows follow the new plan's retention.
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config));
  try {
    const websites = await restampRetention(clickhouse, pool, team, parsed.plan);
    ctx.io.out(`retention of ${websites} website(s) set to ${PLANS[parsed.plan].dataRetentionDays} days`);
  } finally {
    await clickhouse.close();
  }
}

export async function runLimits(v: Values, ctx: Context): Promise<void> {
  const team = requireUuid(v.team, '--team');
  const changes: Parameters<typeof setTeamLimits>[2] = {};
  for (const key of ['rpm', 'monthly', 'events'] as const) {
    if (v[key] !== undefined) changes[key] = parseLimit(String(v[key]), `--${key}`);
  }
  if (Object.keys(changes).length === 0) throw new UsageError('give at least one of --rpm, --monthly, --events');
  const updated = await setTeamLimits(await ctx.pool(), team, changes);
  ctx.io.out(`team ${updated.id} limit overrides: ${JSON.stringify(updated.limit_overrides)}`);
}

export async function runCreateUser(v: Values, ctx: Context): Promise<void> {
  const email = parseWith(emailSchema, requireString(v.email, '--email'), '--email');
  const { password, generated } = await choosePassword(v['password-stdin'] === true, ctx.io);
  const { user, team, instanceOwner } = await createUser(
    await ctx.pool(),
    { email, password, full_name: typeof v.name === 'string' ? v.name : undefined },
    { plan: ctx.config.DEFAULT_PLAN, owner: v.owner === true ? 'take' : 'first' },
  );
  ctx.io.out(
    `user ${user.id} <${user.email}> created with team ${team.id} (plan ${team.plan})${instanceOwner ? '; owner of this instance' : ''}`,
  );
  if (generated) ctx.io.out(`password: ${password}`);
}

export async function runResetPassword(v: Values, ctx: Context): Promise<void> {
  const email = parseWith(emailSchema, requireString(v.email, '--email'), '--email');
  const pool = await ctx.pool();
  const user = await findUserByEmail(pool, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const { password, generated } = await choosePassword(v['password-stdin'] === true, ctx.io);
  await setPassword(pool, user.id, password);
  ctx.io.out(`password of ${user.email} reset`);
  if (generated) ctx.io.out(`password: ${password}`);
}

export async function runInvite(v: Values, ctx: Context): Promise<void> {
  const teamId = requireUuid(v.team, '--team');
  const email = parseWith(emailSchema, requireString(v.email, '--email'), '--email');
  const role = parseWith(roleSchema, v.role ?? 'viewer', '--role');
  const pool = await ctx.pool();
  if (!(await getTeam(pool, teamId))) throw new UsageError(`no team ${teamId}`);
  // The operator acts with an owner's rights; the invite records no inviting user.
  const { invite, token } = await createInvite(pool, teamId, { role: 'owner', userId: null }, email, role);
  ctx.io.out(
    `invite for ${invite.email} to team ${invite.team.name} as ${invite.role}, valid until ${invite.expires_at}:`,
  );
  const url = inviteUrl(ctx.config.PUBLIC_URL, token);
  ctx.io.out(url);
  const emailed = await sendInviteEmail(ctx.config, createLogger('silent', 'cli'), invite, url);
  if (emailed.status === 'sent') ctx.io.out(`emailed to ${invite.email}`);
  else if (emailed.status === 'off')
    ctx.io.out('not emailed: email is off (SMTP_URL is not set); send the link yourself');
  else ctx.io.out(`not emailed (${emailed.reason}); send the link yourself`);
}

function parseLimit(value: string, flag: string): number | null | 'plan' {
  if (value === 'unlimited') return null;
  if (value === 'plan') return 'plan';
  if (!/^[1-9]\d{0,11}$/.test(value))
    throw new UsageError(`${flag} must be a positive whole number, "unlimited" or "plan"`);
  return Number(value);
}

async function choosePassword(fromStdin: boolean, io: Io): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomBytes(15).toString('base64url'), generated: true };
  const password = (await io.stdin()).replace(/\r?\n$/, '');
  return { password: parseWith(passwordSchema, password, 'password'), generated: false };
}
