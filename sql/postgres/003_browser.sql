-- Browser ingestion settings and error groups.

CREATE TABLE ip_exclusions (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id   uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  -- An address or CIDR range the owner asked to exclude: configuration, not visitor data.
  ip_address   text NOT NULL,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (website_id, ip_address)
);

CREATE TABLE path_exclusions (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id    uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  path_pattern  text NOT NULL,
  description   text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (website_id, path_pattern)
);

-- One row per (website, fingerprint); counters move only for occurrences not seen before, so a retried
-- ingest job never counts an error twice.
CREATE TABLE error_groups (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id            uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  fingerprint           text NOT NULL,
  message               text NOT NULL,
  type                  text NOT NULL,
  status                text NOT NULL DEFAULT 'unresolved' CHECK (status IN ('unresolved', 'resolved', 'ignored')),
  occurrence_count      bigint NOT NULL DEFAULT 0,
  affected_users_count  bigint NOT NULL DEFAULT 0,
  first_seen_at         timestamptz NOT NULL,
  last_seen_at          timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (website_id, fingerprint)
);
CREATE INDEX error_groups_website_idx ON error_groups (website_id, last_seen_at DESC);

CREATE TABLE error_occurrences_seen (
  event_id    uuid PRIMARY KEY,
  website_id  uuid NOT NULL,
  seen_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE error_group_visitors (
  website_id   uuid NOT NULL,
  fingerprint  text NOT NULL,
  visitor_id   text NOT NULL,
  PRIMARY KEY (website_id, fingerprint, visitor_id)
);
