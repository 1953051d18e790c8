// /api/conversations: a team's conversations (spec "Dashboard APIs"), for any active member of the team.
import { Router } from 'express';
import {
  appendMessageBody,
  askBody,
  createConversationBody,
  listConversationsQuery,
  updateConversationBody,
} from '../../lib/accounts/conversationSchemas';
import {
  appendMessage,
  appendTurn,
  createConversation,
  deleteConversation,
  getConversation,
  listConversations,
  updateConversation,
} from '../../lib/accounts/conversations';
import type { DeletedView } from '../../lib/accounts/responses';
import { requireTeamRole } from '../../lib/accounts/teams';
import { getUser } from '../../lib/accounts/users';
import { getWebsite, requireWebsiteRole } from '../../lib/accounts/websites';
import { badRequest, notFound } from '../../lib/errors';
import { askWebsite } from '../../lib/nlquery/service';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';
import { askDeps, requireQueryPlan } from './external/query';

export function conversationRoutes(deps: AppDeps): Router {
  const { pool, config } = deps;
  const ask = askDeps(deps);
  const router = Router();
  router.use(requireJwt(config.JWT_SECRET, pool));
  const conversation = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'conversationId', 'Conversation');

  /** The team named, else the caller's personal team; 404 unless the caller is an active member. */
  async function memberTeam(caller: string, teamId: string | undefined): Promise<string> {
    const id = teamId ?? (await getUser(pool, caller))?.default_team_id;
    if (!id) throw badRequest('team_id: required (the account has no default team)');
    return (await requireTeamRole(pool, id, caller, 'viewer')).team.id;
  }

  router.get('/', async (req, res) => {
    const query = parseQuery(listConversationsQuery, req);
    sendData(res, await listConversations(pool, await memberTeam(userId(res), query.team_id)));
  });

  router.post('/', async (req, res) => {
    const body = parseBody(createConversationBody, req);
    const teamId = await memberTeam(userId(res), body.team_id);
    sendData(res, await createConversation(pool, teamId, body.title), 201);
  });

  router.get('/:conversationId', async (req, res) => {
    sendData(res, await getConversation(pool, conversation(req), userId(res)));
  });

  router.put('/:conversationId', async (req, res) => {
    const id = conversation(req);
    sendData(res, await updateConversation(pool, id, userId(res), parseBody(updateConversationBody, req)));
  });

  router.delete('/:conversationId', async (req, res) => {
    await deleteConversation(pool, conversation(req), userId(res));
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  router.post('/:conversationId/messages', async (req, res) => {
    const id = conversation(req);
    sendData(res, await appendMessage(pool, id, userId(res), parseBody(appendMessageBody, req)), 201);
  });

  // A question about one of the team's websites: the question and its answer (the /query result, with the
  // plan it ran) are appended together; a follow-up changes the conversation's last plan for that website.
  router.post('/:conversationId/ask', async (req, res) => {
    const id = conversation(req);
    const body = parseBody(askBody, req);
    const current = await getConversation(pool, id, userId(res));
    const w = await getWebsite(pool, body.website_id);
    if (!w || w.team_id !== current.team_id) throw notFound('Website not found');
    await requireWebsiteRole(pool, w.id, userId(res), 'viewer');
    await requireQueryPlan(pool, w.team_id);
    const previous = [...current.messages]
      .reverse()
      .find((m) => m.role === 'assistant' && m.plan && m.website_id === w.id)?.plan;
    const answer = await askWebsite(ask, w, body, previous);
    const turn = await appendTurn(pool, id, userId(res), [
      { role: 'user', content: body.question, website_id: w.id },
      { role: 'assistant', content: answer.data.summary, website_id: w.id, result: answer.data, plan: answer.plan },
    ]);
    sendData(res, turn, 201);
  });

  return router;
}
