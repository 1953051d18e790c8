// /api/teams/:teamId: API keys (admin), permissions, usage and members (any active member).
import { Router } from 'express';
import { apiKeyView, createApiKey, getTeamApiKey, listApiKeys, revokeApiKey } from '../../lib/accounts/apiKeys';
import { listMembers, memberView } from '../../lib/accounts/members';
import type { ApiKeyActivityView, DeletedView, TeamPermissionsView, TeamUsageView } from '../../lib/accounts/responses';
import { createApiKeyBody } from '../../lib/accounts/schemas';
import { countActiveMembers, countWebsites, hasRole, planLimits, requireTeamRole } from '../../lib/accounts/teams';
import { eventsStoredSince } from '../../lib/limits/eventsStored';
import { apiKeyActivity } from '../../lib/stats/reads/apiKeyActivity';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, pathUuid } from '../middleware/validate';

export function teamRoutes(deps: AppDeps): Router {
  const { pool } = deps;
  const router = Router();
  router.use(requireJwt(deps.config.JWT_SECRET, deps.pool));
  const team = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'teamId', 'Team');

  router.post('/:teamId/api-keys', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    const body = parseBody(createApiKeyBody, req);
    sendData(res, await createApiKey(pool, t.id, userId(res), body), 201);
  });

  router.get('/:teamId/api-keys', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    sendData(res, { api_keys: (await listApiKeys(pool, t.id)).map(apiKeyView) });
  });

  router.delete('/:teamId/api-keys/:keyId', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    await revokeApiKey(pool, t.id, pathUuid(req, 'keyId', 'API key'));
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  // The key's activity panel (spec): accepted events only, 24 h / 7 d counts, top types, the 20 latest.
  router.get('/:teamId/api-keys/:keyId/activity', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'admin');
    const key = await getTeamApiKey(pool, t.id, pathUuid(req, 'keyId', 'API key'));
    sendData(res, {
      api_key: apiKeyView(key),
      ...(await apiKeyActivity(deps.clickhouse, key.id)),
    } satisfies ApiKeyActivityView);
  });

  router.get('/:teamId/permissions', async (req, res) => {
    const { team: t, role } = await requireTeamRole(pool, team(req), userId(res), 'viewer');
    const limits = planLimits(t);
    sendData(res, {
      team_id: t.id,
      role,
      plan: t.plan_label ?? t.plan,
      plan_limits: {
        maxWebsites: limits.maxWebsites,
        maxTeamMembers: limits.maxTeamMembers,
        eventsPerMonth: limits.eventsPerMonth,
        dataRetentionDays: limits.dataRetentionDays,
      },
      current_usage: { websites: await countWebsites(pool, t.id), team_members: await countActiveMembers(pool, t.id) },
      permissions: {
        can_manage_billing: role === 'owner',
        can_manage_team: hasRole(role, 'admin'),
        can_edit_settings: hasRole(role, 'editor'),
        can_view: true,
      },
    } satisfies TeamPermissionsView);
  });

  router.get('/:teamId/usage', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'viewer');
    const limits = planLimits(t);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    sendData(res, {
      team_id: t.id,
      plan: t.plan_label ?? t.plan,
      period: { start: start.toISOString(), end: now.toISOString() },
      usage: {
        events: await eventsStoredSince(deps.clickhouse, pool, t.id, start),
        events_limit: limits.eventsPerMonth,
        websites: await countWebsites(pool, t.id),
        websites_limit: limits.maxWebsites,
        team_members: await countActiveMembers(pool, t.id),
        team_members_limit: limits.maxTeamMembers,
      },
    } satisfies TeamUsageView);
  });

  router.get('/:teamId/members', async (req, res) => {
    const { team: t } = await requireTeamRole(pool, team(req), userId(res), 'viewer');
    sendData(
      res,
      (await listMembers(pool, t.id)).map((m) => memberView(m, true)),
    );
  });
  return router;
}
