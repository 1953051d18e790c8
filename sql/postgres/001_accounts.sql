-- Accounts, teams, websites, API keys and goals (DESIGN §3 "Accounts", "Plans").

CREATE TABLE users (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email          text NOT NULL,
  password_hash  text NOT NULL,
  full_name      text,
  avatar_url     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));

-- Server-side sessions behind the HttpOnly cookie; only the SHA-256 of the cookie value is kept.
CREATE TABLE user_sessions (
  token_hash    text PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX user_sessions_user_idx ON user_sessions (user_id);

CREATE TABLE teams (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name             text NOT NULL,
  plan             text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro', 'scale', 'enterprise')),
  -- Operator overrides of the plan's limits (`tidemark admin limits`): a key that is absent means the plan's
  -- value, a JSON null means unlimited. Keys: rpm, monthly, events.
  limit_overrides  jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The plan name as the operator gave it (legacy names such as starter are reported back by usage).
  plan_label       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE team_members (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id         uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id         uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role            text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  deactivated_at  timestamptz,
  UNIQUE (team_id, user_id)
);
CREATE INDEX team_members_user_idx ON team_members (user_id);

-- The team a user's unqualified requests default to (their personal "organization").
ALTER TABLE users ADD COLUMN default_team_id uuid REFERENCES teams(id) ON DELETE SET NULL;

CREATE TABLE websites (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id              uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id              uuid REFERENCES users(id) ON DELETE SET NULL,
  domain               text NOT NULL,
  name                 text NOT NULL,
  tracking_code        text NOT NULL UNIQUE,
  is_active            boolean NOT NULL DEFAULT true,
  timezone             text NOT NULL DEFAULT 'UTC',
  primary_color        text,
  kpi_goal             double precision,
  public_dashboard     boolean NOT NULL DEFAULT false,
  allowed_domains      text[] NOT NULL DEFAULT '{}',
  verification_status  text NOT NULL DEFAULT 'unverified',
  settings             jsonb NOT NULL DEFAULT
    '{"track_outbound_links": true, "track_downloads": true, "session_replay": false, "heatmaps": false}'::jsonb,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX websites_team_idx ON websites (team_id, created_at);

CREATE TABLE api_keys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id       uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name          text NOT NULL,
  permission    text NOT NULL CHECK (permission IN ('full_access', 'site_access')),
  website_id    uuid REFERENCES websites(id) ON DELETE CASCADE,
  -- The first characters of the key, shown in listings so a person can tell keys apart.
  prefix        text NOT NULL,
  -- SHA-256 (hex) of the whole key; the plaintext is shown once at creation and never stored.
  key_hash      text NOT NULL UNIQUE,
  created_by    uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  CHECK ((permission = 'site_access') = (website_id IS NOT NULL))
);
CREATE INDEX api_keys_team_idx ON api_keys (team_id);

CREATE TABLE goals (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id   uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  name         text NOT NULL,
  is_active    boolean NOT NULL DEFAULT true,
  created_via  text NOT NULL DEFAULT 'dashboard',
  created_by   uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX goals_website_name_key ON goals (website_id, name);
