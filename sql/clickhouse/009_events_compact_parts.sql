-- New parts of `events` below 64 MiB are written in the compact format (all columns in one file) instead of
-- the wide one (two files per column): an ingest flush of ~25,000 rows is ~15 MB, just over the 10 MiB
-- default, so every flush wrote ~80 files. Measured on chDB with the benchmark's rows, 24,000-row inserts:
-- 22.0 → 19.1 µs of CPU per row (inserts and their merges, 25.1 → 22.0). Merges still produce wide parts
-- once a part outgrows the threshold, which is where reads spend their time.
ALTER TABLE events {{ON_CLUSTER}} MODIFY SETTING min_bytes_for_wide_part = 67108864;
