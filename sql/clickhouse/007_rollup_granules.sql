-- The rollup tables again (same columns and keys as 004, plus the attributes filtered questions read, below),
-- with small granules. A granule is the unit ClickHouse reads, and with the default 8,192 rows a granule of
-- these tables held thousands of visitor sketches: reading the one total sketch of a 30-day window
-- deserialised every page's sketch beside it (~50 ms for one row). With 8 KiB granules the same read takes
-- ~9 ms, a filter reads only the sketches of granules holding matching rows (rows sorted by value cluster),
-- and small rows still pack many a granule. index_granularity_bytes is fixed at creation: hence new tables.
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
  expire_at    DateTime('UTC'),
  -- dims `attrs` and `s:attrs` only: the row's country, browser, os and device (its value: them as a JSON array)
  a_country    LowCardinality(String),
  a_browser    LowCardinality(String),
  a_os         LowCardinality(String),
  a_device     LowCardinality(String)
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(date)
ORDER BY (website_id, tz, date, dim, value)
TTL expire_at DELETE
SETTINGS index_granularity_bytes = 8192;

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
SETTINGS index_granularity_bytes = 8192;

-- Filtered questions over closed days (country, browser, os and device filters): a visit counts when it
-- holds a pageview that matches every filter. Most visits have one combination of the four on all their
-- pageviews; for them the match is the visit's own, so the daily rollups keep their session metrics summed
-- by combination (dim `s:attrs`, the four in the a_* columns) and the events' metrics likewise (dim
-- `attrs`). A visit whose pageviews (up to a day after its day, as the raw fold reads them) show several
-- combinations is kept whole here, with all of them, and matched one by one. Written with the day's other
-- rollups, deleted with them when a day is recomputed.
CREATE TABLE IF NOT EXISTS mixed_visits {{ON_CLUSTER}} (
  website_id   UUID,
  tz           LowCardinality(String),
  date         Date,
  session_id   String,
  duration_s   UInt32,
  bounce       UInt8,
  score        UInt8,
  combos       Array(Tuple(country LowCardinality(String), browser LowCardinality(String), os LowCardinality(String), device LowCardinality(String))),
  expire_at    DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(date)
ORDER BY (website_id, tz, date, session_id)
TTL expire_at DELETE;

DROP TABLE IF EXISTS daily_rollups {{ON_CLUSTER}};

DROP TABLE IF EXISTS window_rollups {{ON_CLUSTER}};
