-- The instance (DESIGN §5, issue 21): one row whose id every ClickHouse database the instance writes records
-- (lib/db/instance.ts), so a role pointed at another instance's store refuses to start instead of writing into
-- it; and its owner, the first account registered, whose team is on the `unlimited` plan.
CREATE TABLE instance (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  one_row         boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row),
  owner_user_id   uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
INSERT INTO instance DEFAULT VALUES;

ALTER TABLE teams DROP CONSTRAINT teams_plan_check;
ALTER TABLE teams ADD CONSTRAINT teams_plan_check CHECK (plan IN ('free', 'pro', 'scale', 'enterprise', 'unlimited'));

-- One-time links that let a person join a team (and register, when they have no account). Only the SHA-256
-- of the link's token is kept.
CREATE TABLE team_invites (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id      uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  token_hash   text NOT NULL UNIQUE,
  invited_by   uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  accepted_by  uuid REFERENCES users(id) ON DELETE SET NULL,
  revoked_at   timestamptz
);
CREATE INDEX team_invites_team_idx ON team_invites (team_id, created_at);
