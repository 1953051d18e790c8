// Conversations' and onboarding's part of the OpenAPI document (issue 23; Bearer JWT).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  appendMessageBody,
  askBody,
  conversationSummaryView,
  conversationView,
  createConversationBody,
  listConversationsQuery,
  MAX_CONVERSATIONS_PER_TEAM,
  MAX_MESSAGES,
  updateConversationBody,
} from '../accounts/conversationSchemas';
import { onboardingBody, onboardingView } from '../accounts/onboarding';
import { deletedView } from '../accounts/responses';
import { z } from '../zod';
import { DASHBOARD_PARAMS, DASHBOARD_STATUS_TEXT, dashboardErrors as errors, operations, SECURITY } from './common';

const PARAMS = { ...DASHBOARD_PARAMS, conversationId: 'Conversation UUID.' };
const NOT_A_MEMBER =
  'Not found (NOT_FOUND): an unknown or malformed id, or a conversation or team_id of a team the caller is not an active member of.';

export function registerConversations(r: OpenAPIRegistry): void {
  const register = operations(
    r,
    {
      ...DASHBOARD_STATUS_TEXT,
      404: NOT_A_MEMBER,
      409: `The conversation already holds ${MAX_MESSAGES} messages (CONVERSATION_FULL); creating one, the team already keeps ${MAX_CONVERSATIONS_PER_TEAM} (CONVERSATION_LIMIT_REACHED).`,
    },
    PARAMS,
  );
  const op = (o: Omit<Parameters<typeof register>[0], 'tag' | 'security'>) =>
    register({ ...o, tag: 'Conversations', security: SECURITY.jwt });
  const summary = conversationSummaryView.openapi('ConversationSummary');
  const full = conversationView.openapi('Conversation');
  const C = '/api/conversations';

  op({
    method: 'get',
    path: C,
    summary: 'The team’s conversations without messages, most recently updated first (any member)',
    query: listConversationsQuery,
    data: z.array(summary),
    errors: errors([401, 404]),
  });
  op({
    method: 'post',
    path: C,
    summary: 'Start a conversation in a team of the caller (default: their personal team)',
    body: createConversationBody,
    data: full,
    status: 201,
    errors: errors([401, 404, 409], true),
  });
  op({
    method: 'get',
    path: `${C}/{conversationId}`,
    summary: 'A conversation with its messages',
    data: full,
    errors: errors([401, 404]),
  });
  op({
    method: 'put',
    path: `${C}/{conversationId}`,
    summary: 'Rename a conversation and/or replace its messages',
    body: updateConversationBody,
    data: full,
    errors: errors([401, 404], true),
  });
  op({
    method: 'delete',
    path: `${C}/{conversationId}`,
    summary: 'Delete a conversation',
    data: deletedView,
    errors: errors([401, 404]),
  });
  op({
    method: 'post',
    path: `${C}/{conversationId}/messages`,
    summary: 'Append a message, stamped with the server’s time; answers the whole conversation',
    body: appendMessageBody,
    data: full,
    status: 201,
    errors: errors([401, 404, 409], true),
  });

  const asking = operations(
    r,
    {
      ...DASHBOARD_STATUS_TEXT,
      403: 'The website’s team is below the Scale plan (PLAN_REQUIRED).',
      404: `${NOT_A_MEMBER} Also a website_id that is not one of the conversation’s team’s websites.`,
      409: `The conversation cannot take two more messages (at most ${MAX_MESSAGES}; CONVERSATION_FULL).`,
      422: 'The question cannot be interpreted (QUERY_UNPROCESSABLE); the message names questions that can. Nothing is appended.',
      503: 'A backing store or the answering worker did not answer in time (SERVICE_UNAVAILABLE); retry after Retry-After.',
    },
    PARAMS,
  );
  asking({
    method: 'post',
    path: `${C}/{conversationId}/ask`,
    summary:
      'Ask a question about one of the team’s websites (Scale or higher): appends the question and the answer, whose result is the POST /query answer; follow-ups change the previous plan',
    tag: 'Conversations',
    security: SECURITY.jwt,
    body: askBody,
    data: full,
    status: 201,
    errors: errors([401, 403, 404, 409, 422], true),
  });

  const onboarding = operations(r, DASHBOARD_STATUS_TEXT, PARAMS);
  const progress = { tag: 'Onboarding', security: SECURITY.jwt, path: '/api/onboarding/progress' };
  const record = onboardingView.openapi('OnboardingProgress');
  onboarding({
    ...progress,
    method: 'get',
    summary: 'The caller’s onboarding progress; step 0, not completed and empty data until first saved',
    data: record,
    errors: errors([401]),
  });
  onboarding({
    ...progress,
    method: 'post',
    summary: 'Save the caller’s onboarding progress (upsert: only the fields given change)',
    body: onboardingBody,
    data: record,
    errors: errors([401], true),
  });
}
