-- A website's shared dashboard (websites.public_dashboard turns it on): an optional password, stored only as
-- an argon2id hash, and a version carried by every share token. The version goes up whenever the password is
-- set or cleared and whenever sharing is turned off (however it is turned off: the trigger below), which
-- revokes every share token issued before.
CREATE TABLE website_shares (
  website_id     uuid PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
  password_hash  text,
  version        integer NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION revoke_share_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.public_dashboard AND NOT NEW.public_dashboard THEN
    INSERT INTO website_shares (website_id, version) VALUES (NEW.id, 1)
    ON CONFLICT (website_id) DO UPDATE SET version = website_shares.version + 1, updated_at = now();
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER websites_revoke_share_tokens AFTER UPDATE OF public_dashboard ON websites
  FOR EACH ROW EXECUTE FUNCTION revoke_share_tokens();
