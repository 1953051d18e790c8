-- Provisional rollups (lib/stats/rollups.ts): a day is rolled up soon after it ends instead of 26 h later,
-- so that the raw tail a question reads is under a day instead of up to two. Exactness comes from two
-- things kept here.
--
-- Versions: a day may be rolled up again (a late event arrived, or it closed for good). Each run's rows
-- carry its version (the store's clock in ms when the run began reading) and its marker names it; readers
-- take the marker's version of the newest days, so a reader planned before a re-roll reads the rows it
-- planned with, never two versions added up. Superseded versions are deleted minutes later. `version` joins
-- the sorting keys so that ReplacingMergeTree never folds one version's row into another's.
-- `final` (markers only): 1 once the day was rolled up after it closed (26 h after its end); rows of
-- before this migration are all final. (A column joining a sorting key may not have a default expression:
-- `version` is 0 on them.)
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS version UInt64, ADD COLUMN IF NOT EXISTS final UInt8 DEFAULT 1, MODIFY ORDER BY (website_id, tz, date, dim, value, version);

ALTER TABLE mixed_visits {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS version UInt64, MODIFY ORDER BY (website_id, tz, date, session_id, version);

-- Late marks: every insert of events whose ts is more than 5 minutes old at insert time marks their
-- 15-minute buckets (UTC; every time zone's midnight falls on one) with the insert's time. A rolled-up
-- day is read raw while a mark on it (or on the next 24 h, where its visits may continue) is newer than
-- its version, until the clock's job rolls it up again. Events arrive in time almost always: the view
-- writes nothing for them.
CREATE TABLE IF NOT EXISTS late_marks {{ON_CLUSTER}} (
  website_id   UUID,
  bucket       DateTime('UTC'),
  marked       SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = {{ENGINE:Aggregating}}
ORDER BY (website_id, bucket)
TTL toDateTime(marked) + INTERVAL 8 DAY DELETE;

CREATE MATERIALIZED VIEW IF NOT EXISTS late_marks_mv {{ON_CLUSTER}} TO late_marks AS
SELECT e.website_id AS website_id, toStartOfFifteenMinutes(e.ts) AS bucket, max(now64(3, 'UTC')) AS marked
FROM events AS e
WHERE e.ts < now64(3, 'UTC') - INTERVAL 5 MINUTE
GROUP BY e.website_id, bucket;
