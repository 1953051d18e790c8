-- Sessions kept by ClickHouse itself: a materialized view folds every inserted block of events into partial
-- session rows, merged in the background by AggregatingMergeTree; queries finish the fold with GROUP BY
-- session_id. Inserts deduplicated by their token are deduplicated here too
-- (deduplicate_blocks_in_dependent_materialized_views), so sessions never count a retried insert twice.
CREATE TABLE IF NOT EXISTS sessions {{ON_CLUSTER}} (
  website_id     UUID,
  session_id     String,
  visitor_id     SimpleAggregateFunction(any, String),
  start_ts       SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  end_ts         SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  entry_page     AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  exit_page      AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
  pageviews      SimpleAggregateFunction(sum, UInt64),
  events         SimpleAggregateFunction(sum, UInt64),
  interactions   SimpleAggregateFunction(sum, UInt64),
  goals          SimpleAggregateFunction(sum, UInt64),
  purchases      SimpleAggregateFunction(sum, UInt64),
  revenue        SimpleAggregateFunction(sum, Decimal(38, 4)),
  engagement_ms  SimpleAggregateFunction(sum, UInt64),
  identified     SimpleAggregateFunction(max, UInt8),
  source         SimpleAggregateFunction(any, LowCardinality(String)),
  referrer       SimpleAggregateFunction(any, String),
  source_name    SimpleAggregateFunction(any, LowCardinality(String)),
  utm_source     SimpleAggregateFunction(any, LowCardinality(String)),
  utm_medium     SimpleAggregateFunction(any, LowCardinality(String)),
  utm_campaign   SimpleAggregateFunction(any, LowCardinality(String)),
  device_type    SimpleAggregateFunction(any, LowCardinality(String)),
  browser        SimpleAggregateFunction(any, LowCardinality(String)),
  os             SimpleAggregateFunction(any, LowCardinality(String)),
  country_code   SimpleAggregateFunction(any, LowCardinality(String)),
  city           SimpleAggregateFunction(any, String),
  expire_at      SimpleAggregateFunction(max, DateTime('UTC'))
)
ENGINE = {{ENGINE:Aggregating}}
PARTITION BY toYYYYMM(start_ts)
ORDER BY (website_id, session_id)
TTL expire_at DELETE
SETTINGS non_replicated_deduplication_window = 10000;

-- any() over non-empty values: the first event of a session may lack what a later one carries.
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
  countIf(e.type = 'purchase') AS purchases,
  sumIf(toDecimal128(e.revenue, 4), e.type = 'purchase') AS revenue,
  sum(e.engagement_ms) AS engagement_ms,
  max(e.type = 'identify') AS identified,
  any(e.source) AS source,
  anyIf(e.referrer, e.type = 'pageview') AS referrer,
  anyIf(e.source_name, e.source_name != '') AS source_name,
  anyIf(e.utm_source, e.utm_source != '') AS utm_source,
  anyIf(e.utm_medium, e.utm_medium != '') AS utm_medium,
  anyIf(e.utm_campaign, e.utm_campaign != '') AS utm_campaign,
  anyIf(e.device_type, e.device_type != '') AS device_type,
  anyIf(e.browser, e.browser != '') AS browser,
  anyIf(e.os, e.os != '') AS os,
  anyIf(e.country_code, e.country_code != '') AS country_code,
  anyIf(e.city, e.city != '') AS city,
  max(e.expire_at) AS expire_at
FROM events AS e
WHERE e.session_id != ''
GROUP BY e.website_id, e.session_id
