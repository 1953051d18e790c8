-- Country, browser, device and OS are a visit's values (its first pageview's) for every event of the visit,
-- like source and utm_* (migration 014), in filters, breakdowns and metrics alike: a filter and a breakdown
-- over the same key then always add up (an event without a session keeps its own values). Sessions keep
-- them by their first pageview, as they keep the source; the old any() columns stay for the city and for
-- sessions written before this migration.
ALTER TABLE sessions {{ON_CLUSTER}}
  ADD COLUMN IF NOT EXISTS visit_country AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ADD COLUMN IF NOT EXISTS visit_browser AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ADD COLUMN IF NOT EXISTS visit_device AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ADD COLUMN IF NOT EXISTS visit_os AggregateFunction(argMin, String, DateTime64(3, 'UTC'));

-- A projection's SELECT * names the columns the table had when it was made: made again with the new ones.
ALTER TABLE sessions {{ON_CLUSTER}} DROP PROJECTION IF EXISTS by_start;

ALTER TABLE sessions {{ON_CLUSTER}} ADD PROJECTION IF NOT EXISTS by_start (SELECT * ORDER BY website_id, toDate(start_ts), session_id);

ALTER TABLE sessions {{ON_CLUSTER}} MATERIALIZE PROJECTION by_start;

DROP VIEW IF EXISTS sessions_mv {{ON_CLUSTER}};

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv {{ON_CLUSTER}} TO sessions AS
SELECT
  e.website_id AS website_id,
  e.session_id AS session_id,
  anyIf(e.visitor_id, e.visitor_id != '') AS visitor_id,
  min(e.ts) AS start_ts,
  max(e.ts) AS end_ts,
  argMinStateIf(e.pathname, e.ts, e.type = 'pageview') AS entry_page,
  argMaxStateIf(e.pathname, e.ts, e.type = 'pageview') AS exit_page,
  countIf(e.type = 'pageview') AS pageviews,
  count() AS events,
  countIf(e.type IN ('event', 'goal', 'click') OR (e.type = 'engagement' AND e.engagement_ms > 10000)) AS interactions,
  countIf(e.type = 'goal') AS goals,
  countIf(e.type = 'purchase' AND JSONExtractString(e.props, 'status') = 'succeeded') AS purchases,
  sumIf(toDecimal128(e.revenue, 4), e.type = 'purchase' AND JSONExtractString(e.props, 'status') = 'succeeded') AS revenue,
  sum(e.engagement_ms) AS engagement_ms,
  max(e.type = 'identify') AS identified,
  any(e.source) AS source,
  argMinStateIf(toString(e.referrer), e.ts, e.type = 'pageview') AS referrer,
  argMinStateIf(toString(e.source_name), e.ts, e.type = 'pageview') AS source_name,
  argMinStateIf(toString(e.utm_source), e.ts, e.type = 'pageview') AS utm_source,
  argMinStateIf(toString(e.utm_medium), e.ts, e.type = 'pageview') AS utm_medium,
  argMinStateIf(toString(e.utm_campaign), e.ts, e.type = 'pageview') AS utm_campaign,
  anyIf(e.device_type, e.device_type != '') AS device_type,
  anyIf(e.browser, e.browser != '') AS browser,
  anyIf(e.os, e.os != '') AS os,
  anyIf(e.country_code, e.country_code != '') AS country_code,
  anyIf(e.city, e.city != '') AS city,
  argMinStateIf(toString(e.country_code), e.ts, e.type = 'pageview') AS visit_country,
  argMinStateIf(toString(e.browser), e.ts, e.type = 'pageview') AS visit_browser,
  argMinStateIf(toString(e.device_type), e.ts, e.type = 'pageview') AS visit_device,
  argMinStateIf(toString(e.os), e.ts, e.type = 'pageview') AS visit_os,
  max(e.expire_at) AS expire_at
FROM events AS e
WHERE e.session_id != ''
GROUP BY e.website_id, e.session_id;

-- A filter on them finds a rolled-up day's sessions here, as it finds their source.
ALTER TABLE visit_values {{ON_CLUSTER}}
  ADD COLUMN IF NOT EXISTS country_code LowCardinality(String),
  ADD COLUMN IF NOT EXISTS browser LowCardinality(String),
  ADD COLUMN IF NOT EXISTS device_type LowCardinality(String),
  ADD COLUMN IF NOT EXISTS os LowCardinality(String);

-- A visit now has one combination of these four (its `attrs`, `s:attrs` rows): no visit is kept apart with
-- several any more.
DROP TABLE IF EXISTS mixed_visits {{ON_CLUSTER}};

-- Rollups made before this counted an event under its own country, browser, device and OS. Derived data:
-- dropped here and computed again by the clock's job; until then those days are read raw.
TRUNCATE TABLE IF EXISTS daily_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_visits {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS visit_values {{ON_CLUSTER}};

-- Rows of the new meaning say so (format 3): a job of the previous version still running writes none.
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} DROP CONSTRAINT IF EXISTS rollup_format;

ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} ADD CONSTRAINT IF NOT EXISTS rollup_format_3 CHECK format = 3;
