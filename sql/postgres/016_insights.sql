-- Insights (spec "Insight"): anomalies in words, significant week-over-week trends, rule-based recommendations
-- and this month's forecasts (docs/intelligence.md "Insights"). Deterministic: every insight has a stable key
-- (type, rule, subject, period) unique per website, so a re-run writes the same rows instead of new ones.
CREATE TABLE insights (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id      uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  -- type:rule:subject:period, e.g. trend:source_visitors:Google:2026-11-23 (the period is the ISO week's
  -- Monday for trends and recommendations, the month for predictions, the anomaly's id for anomalies).
  key             text NOT NULL,
  type            text NOT NULL CHECK (type IN ('anomaly', 'trend', 'recommendation', 'prediction')),
  rule            text NOT NULL,
  severity        text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  title           text NOT NULL,
  description     text NOT NULL,
  metric_name     text NOT NULL,
  metric_value    double precision NOT NULL,
  -- Percent change from the comparison the rule names; null when that comparison is zero (nothing to divide by).
  metric_change   double precision,
  recommendation  text NOT NULL,
  -- The local day whose data the row was computed from; a run for an earlier day never overwrites a later one.
  as_of           date NOT NULL,
  anomaly_id      uuid UNIQUE REFERENCES anomalies(id) ON DELETE CASCADE,
  -- Rule-specific figures (a forecast's interval, the compared counts), kept for the dashboard and audits.
  details         jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- When the insight became known: the end of its as_of day (job insights), the anomaly's detection time.
  created_at      timestamptz NOT NULL,
  UNIQUE (website_id, key)
);
CREATE INDEX insights_website_time_idx ON insights (website_id, created_at DESC);
