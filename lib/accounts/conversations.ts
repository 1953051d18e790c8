// Conversations of a team (spec "Conversation"): every active member of the team reads and writes all of
// them. Each statement on one conversation checks the caller's membership of its team in its own WHERE, so
// another team's conversation and an unknown id answer alike (404).
import type { Pool } from 'pg';
import { withTransaction } from '../db/pool';
import { HttpError, notFound } from '../errors';
import {
  type AppendMessageBody,
  type ConversationSummaryView,
  type ConversationView,
  MAX_CONVERSATIONS_PER_TEAM,
  MAX_MESSAGES,
  type MessageView,
  type UpdateConversationBody,
} from './conversationSchemas';
import { lockTeam } from './teams';

interface ConversationRow {
  id: string;
  team_id: string;
  title: string;
  messages: MessageView[];
  created_at: Date;
  updated_at: Date;
}

const SUMMARY = 'c.id, c.team_id, c.title, c.created_at, c.updated_at';
const FULL = `${SUMMARY}, c.messages`;
const MEMBER = `EXISTS (SELECT 1 FROM team_members m
  WHERE m.team_id = c.team_id AND m.user_id = $2 AND m.deactivated_at IS NULL)`;
// The server's clock as the API writes times (toISOString), read at the moment the row is written.
const NOW_ISO = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

function summaryView(row: Omit<ConversationRow, 'messages'>): ConversationSummaryView {
  return {
    id: row.id,
    team_id: row.team_id,
    title: row.title,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function conversationView(row: ConversationRow): ConversationView {
  return { ...summaryView(row), messages: row.messages };
}

const conversationNotFound = () => notFound('Conversation not found');
const conversationFull = () =>
  new HttpError(
    409,
    'CONVERSATION_FULL',
    `A conversation holds at most ${MAX_MESSAGES} messages; start a new conversation`,
  );

/** The team's conversations (all of them: a team keeps at most the cap) without their messages, most recently updated first. */
export async function listConversations(pool: Pool, teamId: string): Promise<ConversationSummaryView[]> {
  const { rows } = await pool.query<ConversationRow>(
    `SELECT ${SUMMARY} FROM conversations c WHERE c.team_id = $1 ORDER BY c.updated_at DESC, c.id LIMIT $2`,
    [teamId, MAX_CONVERSATIONS_PER_TEAM],
  );
  return rows.map(summaryView);
}

/** A new conversation, unless the team already keeps its maximum (the team row is locked while counting). */
export async function createConversation(pool: Pool, teamId: string, title: string): Promise<ConversationView> {
  return withTransaction(pool, async (client) => {
    await lockTeam(client, teamId);
    const { rows: count } = await client.query<{ n: string }>(
      'SELECT count(*) AS n FROM conversations WHERE team_id = $1',
      [teamId],
    );
    if (Number(count[0].n) >= MAX_CONVERSATIONS_PER_TEAM) {
      throw new HttpError(
        409,
        'CONVERSATION_LIMIT_REACHED',
        `A team keeps at most ${MAX_CONVERSATIONS_PER_TEAM} conversations; delete some to start new ones`,
      );
    }
    const { rows } = await client.query<ConversationRow>(
      `INSERT INTO conversations AS c (team_id, title) VALUES ($1, $2) RETURNING ${FULL}`,
      [teamId, title],
    );
    return conversationView(rows[0]);
  });
}

export async function getConversation(pool: Pool, id: string, userId: string): Promise<ConversationView> {
  const { rows } = await pool.query<ConversationRow>(
    `SELECT ${FULL} FROM conversations c WHERE c.id = $1 AND ${MEMBER}`,
    [id, userId],
  );
  if (!rows[0]) throw conversationNotFound();
  return conversationView(rows[0]);
}

/** Renames and/or replaces every message; a message without a timestamp gets the server's time. */
export async function updateConversation(
  pool: Pool,
  id: string,
  userId: string,
  body: UpdateConversationBody,
): Promise<ConversationView> {
  const now = new Date().toISOString();
  const messages = body.messages?.map((m) => ({
    role: m.role,
    content: m.content,
    timestamp: m.timestamp ? new Date(m.timestamp).toISOString() : now,
  }));
  const { rows } = await pool.query<ConversationRow>(
    `UPDATE conversations c SET
       title = coalesce($3, c.title),
       messages = coalesce($4::jsonb, c.messages),
       updated_at = now()
     WHERE c.id = $1 AND ${MEMBER} RETURNING ${FULL}`,
    [id, userId, body.title ?? null, messages ? JSON.stringify(messages) : null],
  );
  if (!rows[0]) throw conversationNotFound();
  return conversationView(rows[0]);
}

export async function deleteConversation(pool: Pool, id: string, userId: string): Promise<void> {
  const { rowCount } = await pool.query(`DELETE FROM conversations c WHERE c.id = $1 AND ${MEMBER}`, [id, userId]);
  if (!rowCount) throw conversationNotFound();
}

/**
 * Appends one message stamped with the server's time. One UPDATE does it: the row lock makes concurrent
 * appends wait for each other and each re-reads the array the previous one wrote, so none is lost, and the
 * cap is checked in the same WHERE, so no race can take a conversation past it.
 */
export async function appendMessage(
  pool: Pool,
  id: string,
  userId: string,
  message: AppendMessageBody,
): Promise<ConversationView> {
  const { rows } = await pool.query<ConversationRow>(
    `UPDATE conversations c SET
       messages = c.messages || jsonb_build_array(jsonb_build_object(
         'role', $3::text, 'content', $4::text, 'timestamp', ${NOW_ISO})),
       updated_at = clock_timestamp()
     WHERE c.id = $1 AND ${MEMBER} AND jsonb_array_length(c.messages) < $5
     RETURNING ${FULL}`,
    [id, userId, message.role, message.content, MAX_MESSAGES],
  );
  if (rows[0]) return conversationView(rows[0]);
  await getConversation(pool, id, userId); // 404 when it is not the caller's to see
  throw conversationFull();
}

/**
 * Appends a question and its answer in one UPDATE (both, or neither when the conversation is full), each
 * stamped with the server's time; `extra` fields (the website, the answer's result and plan) are kept as given.
 */
export async function appendTurn(
  pool: Pool,
  id: string,
  userId: string,
  turn: [Record<string, unknown> & AppendMessageBody, Record<string, unknown> & AppendMessageBody],
): Promise<ConversationView> {
  const { rows } = await pool.query<ConversationRow>(
    `UPDATE conversations c SET
       messages = c.messages || (SELECT jsonb_agg(m || jsonb_build_object('timestamp', ${NOW_ISO}))
                                   FROM jsonb_array_elements($3::jsonb) m),
       updated_at = clock_timestamp()
     WHERE c.id = $1 AND ${MEMBER} AND jsonb_array_length(c.messages) + 2 <= $4
     RETURNING ${FULL}`,
    [id, userId, JSON.stringify(turn), MAX_MESSAGES],
  );
  if (rows[0]) return conversationView(rows[0]);
  await getConversation(pool, id, userId);
  throw conversationFull();
}
