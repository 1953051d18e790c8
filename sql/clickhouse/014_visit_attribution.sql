-- Rollups made before this counted a visit's events under each event's own source and utm_* values (a
-- pageview reached from inside the site was `Direct / None`), and gave visit dimensions (entry and exit
-- page) every type of event as `events`. lib/stats now counts an event under its visit's values and a
-- visit's events as its pageviews and custom events. Rollups are derived data: dropped here, the clock's
-- job computes them again from `events` (MAX_DAYS_PER_RUN days a run per website); until it has, questions
-- read those days raw, with the same numbers.
TRUNCATE TABLE IF EXISTS daily_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS mixed_visits {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_rollups_v2 {{ON_CLUSTER}};
TRUNCATE TABLE IF EXISTS window_visits {{ON_CLUSTER}};
