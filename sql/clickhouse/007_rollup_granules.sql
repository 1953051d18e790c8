-- The rollup tables again (same columns and keys as 004), with small granules. A granule is the unit
-- ClickHouse reads, and with the default 8,192 rows a granule of these tables held thousands of visitor
-- sketches: reading the one total sketch of a 30-day window deserialised every page's sketch beside it
-- (~50 ms for one row). index_granularity_bytes is fixed at creation, hence new tables; with 64 KiB
-- granules the same read takes ~9 ms and small rows still pack up to 8,192 a granule.
-- Rollups are derived data: the new tables start empty and the clock's rollup job computes them again
-- (62 days per website per run, every 10 minutes); until a range is covered it is read raw, with the
-- same numbers. The old tables are dropped so that nothing reads stale copies.
CREATE TABLE IF NOT EXISTS daily_rollups_v2 {{ON_CLUSTER}} (
  website_id   UUID,
  tz           LowCardinality(String),
  date         Date,
  dim          LowCardinality(String),
  value        String,
  visitors     AggregateFunction(uniq, String),
  visitors_n   UInt64,
  pageviews    UInt64,
  events       UInt64,
  visits       UInt64,
  bounces      UInt64,
  duration_s   UInt64,
  score_sum    Float64,
  scored       UInt64,
  expire_at    DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(date)
ORDER BY (website_id, tz, date, dim, value)
TTL expire_at DELETE
SETTINGS index_granularity_bytes = 65536;

CREATE TABLE IF NOT EXISTS window_rollups_v2 {{ON_CLUSTER}} (
  website_id   UUID,
  tz           LowCardinality(String),
  first        Date,
  last         Date,
  dim          LowCardinality(String),
  value        String,
  visitors     AggregateFunction(uniq, String),
  made_at      DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
ORDER BY (website_id, tz, last, first, dim, value)
TTL made_at + INTERVAL 3 DAY DELETE
SETTINGS index_granularity_bytes = 65536;

DROP TABLE IF EXISTS daily_rollups {{ON_CLUSTER}};

DROP TABLE IF EXISTS window_rollups {{ON_CLUSTER}};
