-- Window sketches now include the page dimension. Windows made before lack it but carry a complete marker,
-- so they are dropped: they are derived data, the clock's rollup job makes them again on its next run, and
-- until then ranges merge the daily sketches (the same numbers, read more slowly).
TRUNCATE TABLE IF EXISTS window_rollups {{ON_CLUSTER}};
