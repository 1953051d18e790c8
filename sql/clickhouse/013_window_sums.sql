-- Merged windows carry their days' sums too, and the attribute rows filtered questions read (`attrs`,
-- `s:attrs`): a 30-day question then reads one row per value instead of one per value and day. Reading the
-- daily rows was the costly part of a rollup read — their small granules (007) pack ~10 rows each, so the
-- 20,000 `s:attrs` rows of 28 days cost ~22 ms of CPU to sum and the 2,520 filtered `attrs` sketches ~37 ms
-- to merge (10M-event dataset).
-- Sums, unlike sketches, must not be read twice: a window made again for the same days (after a day was
-- rolled up again) must not be read beside its older copy, which a ReplacingMergeTree keeps until a merge.
-- So every making of a window is a `run` (random; its marker names it), in the sorting key so that no merge
-- folds one run's rows into another's, and readers read the rows of one run. Old runs go with the TTL.
-- Windows made before this carry run 0 and no sums: readers never use them, and the rollup job makes new ones.
ALTER TABLE window_rollups_v2 {{ON_CLUSTER}}
  ADD COLUMN IF NOT EXISTS pageviews UInt64 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS events UInt64 DEFAULT 0,
  ADD COLUMN IF NOT EXISTS a_country LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS a_browser LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS a_os LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS a_device LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS run UInt64,
  MODIFY ORDER BY (website_id, tz, last, first, dim, value, run);

-- The visit dimensions' windows (`s:…`: sums, no sketches) in a table of their own. A part's granule size
-- follows its average row, and beside a window's page sketches (~100 KB each) every granule of
-- window_rollups_v2 holds one row: the filtered aggregate's 720 `s:attrs` rows were 720 granule reads
-- (~25 ms of CPU); here they are one or two (measured: the whole question's store CPU 127–139 → 113–122 ms).
CREATE TABLE IF NOT EXISTS window_visits {{ON_CLUSTER}} (
  website_id   UUID,
  tz           LowCardinality(String),
  first        Date,
  last         Date,
  dim          LowCardinality(String),
  value        String,
  run          UInt64,
  visits       UInt64,
  bounces      UInt64,
  duration_s   UInt64,
  score_sum    Float64,
  a_country    LowCardinality(String),
  a_browser    LowCardinality(String),
  a_os         LowCardinality(String),
  a_device     LowCardinality(String),
  made_at      DateTime('UTC')
)
ENGINE = {{ENGINE:Replacing}}
ORDER BY (website_id, tz, last, first, dim, value, run)
TTL made_at + INTERVAL 3 DAY DELETE
SETTINGS min_age_to_force_merge_seconds = 21600, min_age_to_force_merge_on_partition_only = 1;
