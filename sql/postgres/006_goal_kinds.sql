-- Goals of three kinds (issue 22): a custom event by name (server `goal` events must name an active one), a
-- pageview whose path matches a pattern (`/signup/**`), or a purchase goal whose completions are the
-- website's succeeded purchases and whose revenue is theirs, refunds subtracted.
ALTER TABLE goals
  ADD COLUMN kind text NOT NULL DEFAULT 'event' CHECK (kind IN ('event', 'page', 'purchase')),
  ADD COLUMN path text;
ALTER TABLE goals ADD CONSTRAINT goals_path_kind CHECK ((kind = 'page') = (path IS NOT NULL));

-- Revenue is reported in the website's currency (purchases in other currencies are reported apart, not
-- converted: no exchange rates are downloaded).
ALTER TABLE websites ADD COLUMN revenue_currency text NOT NULL DEFAULT 'USD' CHECK (revenue_currency ~ '^[A-Z]{3}$');
