// Conversations (issue 23): request bodies, caps and the records as the API shows them. Routes
// validate with these, lib returns their inferred types, lib/openapi documents them.
import { queryPlan } from '../nlquery/plan';
import { MAX_QUESTION, queryBody, queryData } from '../nlquery/schemas';
import { z } from '../zod';
import { uuid } from './schemas';
import { text } from './storable';

export const MAX_TITLE_LENGTH = 200;
export const MAX_CONTENT_LENGTH = 20_000;
export const MAX_MESSAGES = 200;
export const MAX_ROLE_LENGTH = 32;
/** Conversations a team may keep: with the caps above, a bound on what one team stores; the list shows them all. */
export const MAX_CONVERSATIONS_PER_TEAM = 500;

const title = text().trim().min(1).max(MAX_TITLE_LENGTH);
const role = text()
  .trim()
  .max(MAX_ROLE_LENGTH)
  .regex(
    /^[a-z][a-z0-9_-]*$/,
    'must be a lowercase word such as user or assistant (letters, digits, _ and -, starting with a letter)',
  );
// Not trimmed: leading and trailing white space can matter in a message (code, lists).
const content = text().min(1).max(MAX_CONTENT_LENGTH);

export const listConversationsQuery = z.object({
  team_id: uuid.optional().openapi({ description: 'A team of the caller; default: the caller’s personal team.' }),
});
export const createConversationBody = z.object({
  title,
  team_id: uuid.optional().openapi({ description: 'A team of the caller; default: the caller’s personal team.' }),
});
export const appendMessageBody = z.object({ role, content });
export const updateConversationBody = z.object({
  title: title.optional(),
  messages: z
    .array(
      appendMessageBody.extend({
        timestamp: z
          .string()
          .datetime({ offset: true })
          // Years past 9999 in UTC would not read back as ISO 8601's four-digit years.
          .refine((v) => new Date(v).getUTCFullYear() <= 9999, 'must be a time before the year 10000')
          .optional()
          .openapi({ description: 'Kept when given (as UTC); the server’s time when left out.' }),
      }),
    )
    .max(MAX_MESSAGES, `a conversation holds at most ${MAX_MESSAGES} messages`)
    .optional()
    .openapi({ description: 'Replaces every message of the conversation.' }),
});

/** POST /conversations/:id/ask: a question about one of the team's websites (the query endpoint's body). */
export const askBody = queryBody.extend({
  website_id: uuid.openapi({ description: 'A website of the conversation’s team.' }),
  question: text()
    .trim()
    .min(1)
    .max(MAX_QUESTION)
    .openapi({
      description: `Plain-English question, 1-${MAX_QUESTION} characters; a follow-up ("and last month?", "only mobile") changes the previous answer's plan.`,
    }),
});

export type AppendMessageBody = z.infer<typeof appendMessageBody>;
export type UpdateConversationBody = z.infer<typeof updateConversationBody>;

const isoTime = z.string().datetime();

export const messageView = z.object({
  role: z.string(),
  content: z.string(),
  timestamp: isoTime,
  website_id: z.string().optional().openapi({ description: 'The website a question asked about (POST …/ask).' }),
  result: queryData.optional().openapi({ description: 'An answer’s result object, as POST /query returns it.' }),
  plan: queryPlan.optional().openapi({ description: 'The query plan an answer ran; follow-ups change it.' }),
});
export const conversationSummaryView = z.object({
  id: z.string(),
  team_id: z.string(),
  title: z.string(),
  created_at: isoTime,
  updated_at: isoTime,
});
export const conversationView = conversationSummaryView.extend({ messages: z.array(messageView) });

export type MessageView = z.infer<typeof messageView>;
export type ConversationSummaryView = z.infer<typeof conversationSummaryView>;
export type ConversationView = z.infer<typeof conversationView>;
