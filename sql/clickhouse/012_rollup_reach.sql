-- How far past its day a provisional rollup's visits can reach (ms; markers only): the last event of the
-- day's visits when it was rolled up, plus the 30 minutes a browser visit may pause. A late mark after the
-- day's end makes the day stale only before that instant (migration 011 let every mark of the next 24 hours
-- count, so a client that always sends events a few minutes late kept yesterday raw all day). 0: none beyond
-- the day's end (final rollups: visits still going after a day closes are counted as they stood then).
ALTER TABLE daily_rollups_v2 {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS reach UInt64 DEFAULT 0;
