-- Anomalies (spec "Anomaly"): a website metric outside its seasonal band, found by the hourly job. At most one
-- open anomaly per (website, metric); it is resolved once the metric has been back inside its band for a full
-- hour. A re-run over the same hours finds the same rows (unique on the hour the anomaly started).
CREATE TABLE anomalies (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id            uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  -- visitors, pageviews, bounce_rate, visit_duration, error_rate, or goal_conversions for one goal (goal_id).
  metric_name           text NOT NULL,
  goal_id               uuid REFERENCES goals(id) ON DELETE CASCADE,
  expected_value        double precision NOT NULL,
  actual_value          double precision NOT NULL,
  deviation_percentage  double precision NOT NULL,
  severity              text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  -- The first UTC hour [started_at, +1 h) outside the band, and the latest one seen outside it.
  started_at            timestamptz NOT NULL,
  last_seen_at          timestamptz NOT NULL,
  detected_at           timestamptz NOT NULL,
  is_resolved           boolean NOT NULL DEFAULT false,
  resolved_at           timestamptz,
  -- Annotations within ±2 hours of started_at: changes that may explain it.
  suspect_annotation_ids uuid[] NOT NULL DEFAULT '{}',
  created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX anomalies_metric_start_idx
  ON anomalies (website_id, metric_name, COALESCE(goal_id, '00000000-0000-0000-0000-000000000000'::uuid), started_at);
CREATE UNIQUE INDEX anomalies_open_idx
  ON anomalies (website_id, metric_name, COALESCE(goal_id, '00000000-0000-0000-0000-000000000000'::uuid))
  WHERE NOT is_resolved;
CREATE INDEX anomalies_website_time_idx ON anomalies (website_id, detected_at DESC);
