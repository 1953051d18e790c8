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
  -- Where the visit came from is what its first pageview says.
  referrer       AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  source_name    AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_source     AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_medium     AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_campaign   AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
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
-- The source of a visit is its first pageview's (argMin by ts).
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
  -- Only succeeded purchases are revenue; refunds and failures stay in events but not in these sums.
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
  max(e.expire_at) AS expire_at
FROM events AS e
WHERE e.session_id != ''
GROUP BY e.website_id, e.session_id
