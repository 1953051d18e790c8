-- Every run of a scheduled job's body, by the worker (the clock enqueued it) or by `tidemark jobs run`: what
-- `tidemark jobs list` shows. Bounded: each job keeps its newest runs only (lib/jobs/runs.ts prunes the rest).
CREATE TABLE job_runs (
  -- A uuid rather than a serial: a restore copies rows but no sequences (lib/backup).
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  job          text NOT NULL,
  -- {websiteId?, date?}: what the run covered ({} = every active website, the latest complete period).
  scope        jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- worker: a queue job the clock enqueued (queue_job_id its BullMQ id); cli: `tidemark jobs run`.
  run_by       text NOT NULL CHECK (run_by IN ('worker', 'cli')),
  queue_job_id text,
  -- 1 for the first try; a retried queue job writes one row per attempt.
  attempt      integer NOT NULL DEFAULT 1,
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL CHECK (duration_ms >= 0),
  outcome      text NOT NULL CHECK (outcome IN ('ok', 'failed')),
  -- The failure's message, one line, URL credentials and secret parameters masked, at most 500 characters.
  error        text
);
CREATE INDEX job_runs_job_idx ON job_runs (job, started_at DESC, id DESC);

-- Running totals per job since the instance began, the source of the job series on /metrics: the web role
-- serves /metrics and the worker runs the jobs, so the figures meet in PostgreSQL. Counters only grow (pruning
-- job_runs leaves them alone), as Prometheus expects.
CREATE TABLE job_run_totals (
  job              text PRIMARY KEY,
  runs             bigint NOT NULL DEFAULT 0,
  failures         bigint NOT NULL DEFAULT 0,
  duration_seconds double precision NOT NULL DEFAULT 0,
  -- Runs that took at most each bound of JOB_DURATION_BUCKETS (lib/jobs/runs.ts), cumulative like `le`.
  buckets          bigint[] NOT NULL,
  last_success_at  timestamptz,
  last_failure_at  timestamptz
);
