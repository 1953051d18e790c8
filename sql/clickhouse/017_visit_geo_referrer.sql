-- City, region and referrer domain are a visit's values (its first pageview's) for every event of the visit,
-- like country and source (migrations 014, 016): the v2 keys visit:city, visit:region and visit:referrer,
-- and the referrer domain that visit:channel is decided from. The rollups do not hold them: questions that
-- use them read raw events (lib/stats/plan.ts). Sessions written before this have no such values ('').
ALTER TABLE sessions {{ON_CLUSTER}}
  ADD COLUMN IF NOT EXISTS visit_city AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ADD COLUMN IF NOT EXISTS visit_region AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ADD COLUMN IF NOT EXISTS visit_referrer AggregateFunction(argMin, String, DateTime64(3, 'UTC'));

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
  argMinStateIf(toString(e.city), e.ts, e.type = 'pageview') AS visit_city,
  argMinStateIf(toString(e.region), e.ts, e.type = 'pageview') AS visit_region,
  argMinStateIf(toString(e.referrer_domain), e.ts, e.type = 'pageview') AS visit_referrer,
  max(e.expire_at) AS expire_at
FROM events AS e
WHERE e.session_id != ''
GROUP BY e.website_id, e.session_id;
