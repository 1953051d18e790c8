-- Daily rollups per website, bucketed in the website's time zone (DESIGN §2 rule 5: the stats query model
-- reads them for whole closed days and the raw tables for the rest). The clock's `rollup-daily` job writes
-- a day once it can no longer change (26 h after it ends: 24 h of accepted ts skew plus queue lag).
--   dim '', page, country, device, browser, os, source, utm_source, utm_medium, utm_campaign
--                     event metrics (visitors, pageviews, events) of that day's events by that event column
--                     ('' = totals; page counts pageviews only)
--   dim 's:' + country, device, browser, os, source, utm_*, entry_page, exit_page ('s:' = totals)
--                     visits that began that day by the visit's value:
--                     visits, bounces, duration, value scores, and the visits' visitors, pageviews, events
--   dim page_scores   by page: the visits that began that day and viewed it, and the sum of their scores
--   dim _             one marker per computed day: the day is complete even when it had no traffic
-- `tz` is part of the key: a website whose time zone changes simply has no rollups in the new zone yet.
-- Rewriting a day deletes its rows first, so each (day, dim, value) has one row and readers need no FINAL.
CREATE TABLE IF NOT EXISTS daily_rollups {{ON_CLUSTER}} (
  website_id   UUID,
  tz           LowCardinality(String),
  date         Date,
  dim          LowCardinality(String),
  value        String,
  visitors     AggregateFunction(uniq, String),
  -- the same visitors counted: a day's own figure needs no sketch read
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
TTL expire_at DELETE;

-- Visitor sketches already merged over the closed days of the standard ranges (7, 30, 90 and 365 days
-- ending today): a merged uniq sketch holds at most 65,536 hashes, so reading one per value is far cheaper
-- than merging a sketch per day. Keyed by the exact days they cover; dim '_' marks a complete window.
-- They serve a day or two, then expire.
CREATE TABLE IF NOT EXISTS window_rollups {{ON_CLUSTER}} (
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
