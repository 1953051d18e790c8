-- One wide table of every tracked event (DESIGN §1). Written only by workers, in batches, with a
-- deterministic insert_deduplication_token so a retried insert never doubles rows.
-- ORDER BY puts a website's day together: every stats query filters on website_id and a time range, and
-- most group by visitor or session inside it. Rows expire by the team's retention, stamped at write time.
CREATE TABLE IF NOT EXISTS events {{ON_CLUSTER}} (
  website_id        UUID,
  event_id          UUID,
  type              LowCardinality(String),
  name              String,
  source            LowCardinality(String),
  ts                DateTime64(3, 'UTC'),
  received_at       DateTime64(3, 'UTC'),
  session_id        String,
  visitor_id        String,
  url               String,
  hostname          LowCardinality(String),
  pathname          String,
  referrer          String,
  referrer_domain   LowCardinality(String),
  source_name       LowCardinality(String),
  utm_source        LowCardinality(String),
  utm_medium        LowCardinality(String),
  utm_campaign      LowCardinality(String),
  utm_content       String,
  utm_term          String,
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  browser_version   LowCardinality(String),
  os                LowCardinality(String),
  os_version        LowCardinality(String),
  country_code      LowCardinality(String),
  region            LowCardinality(String),
  city              String,
  screen_width      UInt16,
  screen_height     UInt16,
  language          LowCardinality(String),
  ip_hash           String,
  engagement_ms     UInt32,
  scroll_depth      UInt8,
  revenue           Decimal(18, 4),
  currency          LowCardinality(String),
  props             String,
  idempotency_key   String,
  api_key_id        String,
  expire_at         DateTime('UTC'),
  -- Visitor timelines and per-key activity look up values that are not in the sort key.
  INDEX idx_visitor visitor_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_api_key api_key_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_event_id event_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = {{ENGINE}}
PARTITION BY toYYYYMM(ts)
ORDER BY (website_id, toDate(ts), type, visitor_id, ts)
TTL expire_at DELETE
SETTINGS non_replicated_deduplication_window = 10000, ttl_only_drop_parts = 0
