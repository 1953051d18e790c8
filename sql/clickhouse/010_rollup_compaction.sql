-- Rollup reads pay per part: each part is analysed and read on its own, and a question reads a rollup table
-- several times. With the ~2–4 parts per month partition that background merges leave (they merge parts of
-- similar size only), the filtered v2 aggregate took 121–131 ms in-process on a 10M-event dataset, 87–96 once
-- every partition was one part (the page breakdown 184–207 → 165–190). A partition nobody wrote to for 6 hours
-- is merged into one part; the current month gets its day's rows once a day per time zone, so this costs one
-- rewrite of a partition a day for a single-zone install. `tidemark rollup` compacts at once after a backfill.
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} MODIFY SETTING min_age_to_force_merge_seconds = 21600, min_age_to_force_merge_on_partition_only = 1;

ALTER TABLE window_rollups_v2 {{ON_CLUSTER}} MODIFY SETTING min_age_to_force_merge_seconds = 21600, min_age_to_force_merge_on_partition_only = 1;
