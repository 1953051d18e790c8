-- Sessions are keyed by (website_id, session_id) so that a session's parts merge; but every read selects
-- sessions by when they began, and a month partition sorted by session id has to be read whole for a few
-- days of it. A projection keeps the same rows also in start order, so reading the last days of a range
-- (the part the rollups do not cover yet) reads just those days. AggregatingMergeTree rebuilds the
-- projection on merges and on the purge's lightweight deletes.
ALTER TABLE sessions {{ON_CLUSTER}} MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild';

ALTER TABLE sessions {{ON_CLUSTER}} ADD PROJECTION IF NOT EXISTS by_start (SELECT * ORDER BY website_id, toDate(start_ts), session_id);

-- Existing parts get the projection in the background (a mutation); new parts have it from their insert.
ALTER TABLE sessions {{ON_CLUSTER}} MATERIALIZE PROJECTION by_start;
