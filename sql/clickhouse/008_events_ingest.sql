-- The ingest writer's door to `events`. Parsing text straight into LowCardinality columns is the costliest
-- part of an insert in the engine: every value is deserialised on its own and looked up in the dictionary
-- (measured on chDB with the benchmark's rows: 16.5 µs of CPU per row to parse into `events`' types, 9.5 into
-- plain strings). Rows inserted here are parsed as plain strings and the view converts whole columns at once
-- into `events` (20.0 instead of 24.6 µs per row for the whole insert with the sessions view, 17 % less).
-- A Null table stores nothing; the view writes to `events` exactly what a direct insert writes, and its
-- sessions view runs as before. An insert's deduplication token carries through the view
-- (deduplicate_blocks_in_dependent_materialized_views), so a retried insert is still stored once.
CREATE TABLE IF NOT EXISTS events_ingest {{ON_CLUSTER}} (
  website_id       UUID,
  event_id         UUID,
  type             String,
  name             String,
  source           String,
  ts               DateTime64(3, 'UTC'),
  received_at      DateTime64(3, 'UTC'),
  session_id       String,
  visitor_id       String,
  url              String,
  hostname         String,
  pathname         String,
  referrer         String,
  referrer_domain  String,
  source_name      String,
  utm_source       String,
  utm_medium       String,
  utm_campaign     String,
  utm_content      String,
  utm_term         String,
  device_type      String,
  browser          String,
  browser_version  String,
  os               String,
  os_version       String,
  country_code     String,
  region           String,
  city             String,
  screen_width     UInt16,
  screen_height    UInt16,
  language         String,
  ip_hash          String,
  engagement_ms    UInt32,
  scroll_depth     UInt8,
  revenue          Decimal(18, 4),
  currency         String,
  props            String,
  idempotency_key  String,
  api_key_id       String,
  expire_at        DateTime('UTC')
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_mv {{ON_CLUSTER}} TO events AS
SELECT
  website_id, event_id, type, name, source, ts, received_at, session_id,
  visitor_id, url, hostname, pathname, referrer, referrer_domain, source_name, utm_source,
  utm_medium, utm_campaign, utm_content, utm_term, device_type, browser, browser_version, os,
  os_version, country_code, region, city, screen_width, screen_height, language, ip_hash,
  engagement_ms, scroll_depth, revenue, currency, props, idempotency_key, api_key_id, expire_at
FROM events_ingest
