-- Source and utm_* values are a visit's (its first pageview's) for every event of the visit (lib/stats/query.ts).
-- A filter on them selects sessions by those values; for rolled-up days it reads them from here instead of
-- folding every session of the range (30 days of a 10M-event website: ~300 ms of argMinMerge). The rollup job
-- writes every session begun on a local day ('' without a pageview), versioned like mixed_visits.
CREATE TABLE IF NOT EXISTS visit_values {{ON_CLUSTER}} (
  website_id    UUID,
  tz            LowCardinality(String),
  date          Date,
  session_id    String,
  source_name   LowCardinality(String),
  utm_source    LowCardinality(String),
  utm_medium    LowCardinality(String),
  utm_campaign  LowCardinality(String),
  expire_at     DateTime('UTC'),
  version       UInt64
)
ENGINE = {{ENGINE:Replacing}}
PARTITION BY toYYYYMM(date)
ORDER BY (website_id, tz, date, session_id, version)
TTL expire_at DELETE;

-- Rollups made before this counted a visit's events under each event's own source and utm_* values (a
-- pageview reached from inside the site was `Direct / None`), gave visit dimensions (entry and exit page)
-- every type of event as `events`, and kept no visit values. Rollups are derived data: dropped here, the
-- clock's job computes them again from `events` (MAX_DAYS_PER_RUN days a run per website); until it has,
-- questions read those days raw, with the same numbers.
TRUNCATE TABLE IF EXISTS daily_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS mixed_visits {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_visits {{ON_CLUSTER}};

-- Rows of the new meaning say so; the table refuses any other, so that the rollup job of a previous version
-- still running during a deploy fails (its day gets no marker and is computed again) instead of writing rows
-- of the old meaning for days nothing would compute again.
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS format UInt8 DEFAULT 0;
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} ADD CONSTRAINT IF NOT EXISTS rollup_format CHECK format = 2;
