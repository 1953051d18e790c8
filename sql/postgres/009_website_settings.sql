-- Website settings of issue 23: notification preferences, the revenue provider, and domain verification.

-- One row per website once someone saves preferences; no row means none set (GET answers {website_id}).
-- Reports and alerts are delivered by later work that reads these columns.
CREATE TABLE website_notifications (
  website_id            uuid PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
  weekly_report         boolean NOT NULL DEFAULT false,
  monthly_report        boolean NOT NULL DEFAULT false,
  report_recipients     text[] NOT NULL DEFAULT '{}',
  anomaly_alerts        boolean NOT NULL DEFAULT false,
  anomaly_min_severity  text NOT NULL DEFAULT 'warning' CHECK (anomaly_min_severity IN ('info', 'warning', 'critical')),
  -- A Slack-compatible incoming-webhook URL: a bearer secret, so the API never shows it back in full.
  slack_webhook_url     text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- The payment provider whose purchases the website reports (DESIGN §3 "Payment providers"); null = not chosen.
-- The list is PAYMENT_PROVIDERS of lib/ingest/accept/serverSchemas.ts; a new provider changes both.
ALTER TABLE websites ADD COLUMN revenue_provider text
  CHECK (revenue_provider IN ('stripe', 'paddle', 'lemonsqueezy', 'server'));

-- Domain verification: set once, by browser ingestion, when the tracker first reports a page on the primary
-- domain or an allowed one. The status and the time always agree.
ALTER TABLE websites ADD COLUMN verified_at timestamptz;
UPDATE websites SET verified_at = updated_at WHERE verification_status = 'verified';
UPDATE websites SET verification_status = 'unverified' WHERE verification_status NOT IN ('unverified', 'verified');
ALTER TABLE websites
  ADD CONSTRAINT websites_verification_status CHECK (verification_status IN ('unverified', 'verified')),
  ADD CONSTRAINT websites_verified_at CHECK ((verification_status = 'verified') = (verified_at IS NOT NULL));

-- A website whose primary domain changes has not been seen on the new one yet: whichever route changes it
-- (PUT /general, PUT /domains), verification starts over.
CREATE FUNCTION reset_verification_on_domain_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.domain IS DISTINCT FROM OLD.domain THEN
    NEW.verification_status := 'unverified';
    NEW.verified_at := NULL;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER websites_reset_verification BEFORE UPDATE OF domain ON websites
  FOR EACH ROW EXECUTE FUNCTION reset_verification_on_domain_change();
