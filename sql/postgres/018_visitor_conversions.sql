-- A visitor's first succeeded purchase (webhook visitor.converted, issue 26): at most one row per (website,
-- visitor), claimed by the transaction that stores the purchase (lib/ingest/store/pgWriter.ts), so concurrent
-- flushes and retried jobs agree on which purchase was the first. "First" is the first stored: a purchase
-- sent later with an earlier timestamp does not take it over.
CREATE TABLE visitor_conversions (
  website_id        uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  visitor_id        text NOT NULL,
  payment_event_id  uuid NOT NULL UNIQUE,
  converted_at      timestamptz NOT NULL,
  PRIMARY KEY (website_id, visitor_id)
);

-- Visitors who bought before this table existed have converted already.
INSERT INTO visitor_conversions (website_id, visitor_id, payment_event_id, converted_at)
SELECT DISTINCT ON (website_id, visitor_id) website_id, visitor_id, event_id, occurred_at
FROM payments
WHERE status = 'succeeded' AND visitor_id IS NOT NULL
ORDER BY website_id, visitor_id, occurred_at, event_id;
