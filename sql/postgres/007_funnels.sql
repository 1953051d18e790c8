-- Saved funnels (issue 22): per website, a name and 2 to 8 ordered steps, each a goal of the website or a
-- pageview path pattern. Steps are rows of their own so a goal step references the goal: a renamed or
-- re-pathed goal changes the funnels that use it.
CREATE TABLE funnels (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  website_id  uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
  name        text NOT NULL,
  created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX funnels_website_name_key ON funnels (website_id, name);

CREATE TABLE funnel_steps (
  funnel_id  uuid NOT NULL REFERENCES funnels(id) ON DELETE CASCADE,
  position   smallint NOT NULL CHECK (position BETWEEN 1 AND 8),
  goal_id    uuid REFERENCES goals(id) ON DELETE CASCADE,
  path       text,
  PRIMARY KEY (funnel_id, position),
  CHECK ((goal_id IS NULL) <> (path IS NULL))
);
CREATE INDEX funnel_steps_goal_idx ON funnel_steps (goal_id) WHERE goal_id IS NOT NULL;

-- A funnel without one of its steps would answer a different question under the same name: deleting a goal
-- deletes the funnels that use it (the API documents this), before the step rows would cascade away alone.
CREATE FUNCTION delete_funnels_of_goal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM funnels WHERE id IN (SELECT funnel_id FROM funnel_steps WHERE goal_id = OLD.id);
  RETURN OLD;
END
$$;
CREATE TRIGGER goals_delete_funnels BEFORE DELETE ON goals
  FOR EACH ROW EXECUTE FUNCTION delete_funnels_of_goal();
