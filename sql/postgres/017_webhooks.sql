-- Webhooks (DESIGN §3 "Webhooks", docs/webhooks.md): a website's registered receivers and the log of what was
-- delivered to them. The secret is kept as given (or as generated): every delivery is signed with it, so it
-- must be recoverable; it is shown once, at registration, and never again nor logged.
CREATE TABLE webhooks (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id           uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  url                  text NOT NULL,
  events               text[] NOT NULL CHECK (cardinality(events) > 0),
  -- For event.tracked: only events with one of these names ('' = pageviews); null = every tracked event.
  event_names          text[],
  secret               text NOT NULL,
  is_active            boolean NOT NULL DEFAULT true,
  -- Consecutive failed attempts and when that run began; a success resets both. A long enough run disables.
  failure_streak       integer NOT NULL DEFAULT 0,
  failing_since        timestamptz,
  disabled_at          timestamptz,
  disabled_reason      text,
  -- Set by whoever told the owner that the webhook was disabled (the notifications worker); null = not yet told.
  disabled_notified_at timestamptz,
  created_by           uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_website_idx ON webhooks (website_id);
CREATE INDEX webhooks_disabled_untold_idx ON webhooks (disabled_at) WHERE disabled_at IS NOT NULL AND disabled_notified_at IS NULL;

-- One row per (webhook, event): its id is the X-Tidemark-Delivery header, the same on every attempt.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  webhook_id       uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event            text NOT NULL,
  event_key        text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  response_status  integer,
  last_error       text,
  duration_ms      integer,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_attempt_at  timestamptz,
  next_attempt_at  timestamptz,
  completed_at     timestamptz,
  UNIQUE (webhook_id, event_key)
);
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC, id);
