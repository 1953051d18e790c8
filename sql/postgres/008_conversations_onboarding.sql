-- Conversations (spec "Conversation"): a team's chats with the assistant. Messages live in one jsonb array on
-- the conversation row so that an append is one UPDATE whose WHERE checks the per-conversation cap: the row
-- lock serialises concurrent appends (none is lost) without a separate ordering column.
CREATE TABLE conversations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id     uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  title       text NOT NULL,
  messages    jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(messages) = 'array'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_team_idx ON conversations (team_id, updated_at DESC);

-- Onboarding progress (spec "Onboarding record"), one row per user once they save any.
CREATE TABLE onboarding_progress (
  user_id       uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  current_step  integer NOT NULL DEFAULT 0,
  completed     boolean NOT NULL DEFAULT false,
  data          jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(data) = 'object'),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
