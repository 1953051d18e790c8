-- Chart annotations (spec "Annotation"): a deploy, release, campaign, incident or custom note on a website's
-- timeline, created with the session cookie. Deletion is permanent.
CREATE TABLE annotations (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id     uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  team_id        uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  type           text NOT NULL CHECK (type IN ('deploy', 'release', 'campaign', 'incident', 'custom')),
  message        text NOT NULL CHECK (char_length(message) BETWEEN 1 AND 500),
  occurred_at    timestamptz NOT NULL,
  created_by     uuid REFERENCES users(id) ON DELETE SET NULL,
  metadata_json  jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);
-- The list, the 5-minute same-type check and the timeseries overlay all read a website's window by time.
CREATE INDEX annotations_website_time_idx ON annotations (website_id, occurred_at DESC);

-- Annotations a team created per calendar month (UTC), for the free plan's monthly cap. A counter rather than
-- a count of rows, so deleting annotations does not give the month's allowance back.
CREATE TABLE annotation_usage (
  team_id  uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  month    date NOT NULL,
  created  integer NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, month)
);
