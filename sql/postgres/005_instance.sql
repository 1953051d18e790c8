-- The instance's identity: one row, made with the instance's database. Every ClickHouse database the instance
-- writes records the same id (lib/db/instance.ts), so a role pointed at another instance's store refuses to
-- start instead of writing into it.
CREATE TABLE instance (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  one_row boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO instance DEFAULT VALUES;
