-- Browser-only data (DESIGN §3 "Browser ingestion decisions"). Every click and error is also a row of
-- `events`; these tables hold what heatmaps, error views and replays read. ReplacingMergeTree keyed by the
-- event (or chunk) id lets a retried job's rows collapse; readers count distinct ids.
CREATE TABLE IF NOT EXISTS interactions {{ON_CLUSTER}} (
  website_id       UUID,
  event_id         UUID,
  ts               DateTime64(3, 'UTC'),
  session_id       String,
  visitor_id       String,
  pathname         String,
  x                UInt32,
  y                UInt32,
  viewport_width   UInt16,
  viewport_height  UInt16,
  page_height      UInt32,
  selector         String,
  device_type      LowCardinality(String),
  expire_at        DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(ts)
ORDER BY (website_id, pathname, event_id)
TTL expire_at DELETE;

CREATE TABLE IF NOT EXISTS error_events {{ON_CLUSTER}} (
  website_id   UUID,
  event_id     UUID,
  ts           DateTime64(3, 'UTC'),
  session_id   String,
  visitor_id   String,
  pathname     String,
  fingerprint  String,
  error_type   LowCardinality(String),
  message      String,
  stack        String CODEC(ZSTD(3)),
  browser      LowCardinality(String),
  os           LowCardinality(String),
  device_type  LowCardinality(String),
  expire_at    DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(ts)
ORDER BY (website_id, fingerprint, event_id)
TTL expire_at DELETE;

CREATE TABLE IF NOT EXISTS replay_chunks {{ON_CLUSTER}} (
  website_id  UUID,
  session_id  String,
  seq         UInt32,
  ts          DateTime64(3, 'UTC'),
  visitor_id  String,
  pathname    String,
  data        String CODEC(ZSTD(3)),
  expire_at   DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(ts)
ORDER BY (website_id, session_id, seq)
TTL expire_at DELETE
