// Account fixtures through the real HTTP API.
import { setTeamPlan } from '../../lib/accounts/teams';
import type { PlanName } from '../../lib/plans';
import type { TestContext } from './context';
import { client } from './http';

export interface TestUser {
  id: string;
  email: string;
  token: string;
  teamId: string;
}

let counter = 0;

export async function registerUser(ctx: TestContext, plan: PlanName = 'free', label = 'user'): Promise<TestUser> {
  const email = `${label}-${++counter}-${Date.now()}@example.com`;
  const res = await client(ctx.baseUrl)('POST', '/api/auth/register', { body: { email, password: 'password-123' } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  const user = { id: res.body.data.user.id, email, token: res.body.data.token, teamId: res.body.data.team.id };
  // The first account of a fresh instance owns it (plan `unlimited`); a test's users get the plan it asks for.
  if (res.body.data.team.plan !== plan) await setTeamPlan(ctx.pool, user.teamId, plan, plan);
  return user;
}

export async function createWebsite(ctx: TestContext, user: TestUser, domain = 'example.com', teamId?: string) {
  const res = await client(ctx.baseUrl)('POST', '/api/websites', {
    token: user.token,
    body: { domain, name: `Site ${domain}`, ...(teamId ? { team_id: teamId } : {}) },
  });
  if (res.status !== 201) throw new Error(`create website failed: ${res.status} ${res.text}`);
  return res.body.data.website as { id: string; tracking_code: string; team_id: string };
}

export async function createApiKey(
  ctx: TestContext,
  user: TestUser,
  permission: 'full_access' | 'site_access' = 'full_access',
  websiteId?: string,
) {
  const res = await client(ctx.baseUrl)('POST', `/api/teams/${user.teamId}/api-keys`, {
    token: user.token,
    body: { name: 'test key', permission, ...(websiteId ? { website_id: websiteId } : {}) },
  });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body.data as { id: string; key: string; prefix: string };
}
