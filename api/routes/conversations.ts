// /api/conversations: a team's conversations (spec "Dashboard APIs"), for any active member of the team.
import { Router } from 'express';
import {
  appendMessageBody,
  createConversationBody,
  listConversationsQuery,
  updateConversationBody,
} from '../../lib/accounts/conversationSchemas';
import {
  appendMessage,
  createConversation,
  deleteConversation,
  getConversation,
  listConversations,
  updateConversation,
} from '../../lib/accounts/conversations';
import type { DeletedView } from '../../lib/accounts/responses';
import { requireTeamRole } from '../../lib/accounts/teams';
import { getUser } from '../../lib/accounts/users';
import { badRequest } from '../../lib/errors';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';

export function conversationRoutes({ pool, config }: AppDeps): Router {
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

  return router;
}
