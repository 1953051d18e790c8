-- Retention cohorts (spec "Retention cohort record"), computed nightly by jobs/retention.ts from ClickHouse and
-- read by GET /api/external/v1/retention/{websiteId} with one indexed query. A run replaces a website's rows as
-- of one local day, so a re-run for the same day writes the same rows.
CREATE TABLE retention_cohorts (
  website_id      uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  granularity     text NOT NULL CHECK (granularity IN ('daily', 'weekly', 'monthly')),
  -- The first local day of the period of the cohort's visitors' first-ever visit (a Monday, a 1st, or the day).
  cohort_date     date NOT NULL,
  period_number   smallint NOT NULL CHECK (period_number BETWEEN 0 AND 12),
  total_users     integer NOT NULL CHECK (total_users > 0),
  retained_users  integer NOT NULL CHECK (retained_users >= 0),
  PRIMARY KEY (website_id, granularity, cohort_date, period_number)
);
-- The local day each website's cohorts were last computed as of (its visits up to the end of that day).
CREATE TABLE retention_runs (
  website_id  uuid PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
  as_of       date NOT NULL
);
