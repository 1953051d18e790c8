// The record of scheduled job runs (sql/postgres/012_job_runs.sql): one row per run of a job body, written by
// the worker for the runs the clock enqueued and by `tidemark jobs run` for its own, plus running totals that
// /metrics reads. Bounded: a job keeps its newest KEPT_RUNS rows.
import type { Pool } from 'pg';
import { maskUrlPassword } from '../config';
import { withTransaction } from '../db/pool';
import type { Logger } from '../log';

/** Newest runs kept per job: about a week of a job every 10 minutes, or a few 90-day recomputes. */
export const KEPT_RUNS = 1000;

/** Histogram bounds of a run's duration (seconds): jobs take from milliseconds to the better part of an hour. */
export const JOB_DURATION_BUCKETS = [0.1, 1, 5, 15, 60, 300, 900, 3600] as const;

const MAX_ERROR_CHARS = 500;

export interface JobRunScope {
  websiteId?: string;
  date?: string;
}

export interface JobRun {
  job: string;
  scope: JobRunScope;
  runBy: 'worker' | 'cli';
  queueJobId?: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  outcome: 'ok' | 'failed';
  error?: string;
}

/**
 * An error's message fit to store and show: one line, credentials in URLs and secret `name=value` parameters
 * masked (a driver's message may quote its connection string), capped.
 */
export function safeErrorMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\S+/g, (word) => (word.includes('://') || word.includes('=') ? maskUrlPassword(word) : word));
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS - 1)}…` : line || 'failed';
}

/** Writes one run and adds it to its job's totals (one transaction), then drops the job's rows past KEPT_RUNS. */
export async function recordJobRun(pool: Pool, run: JobRun): Promise<void> {
  const seconds = run.durationMs / 1000;
  const ok = run.outcome === 'ok';
  const inBucket = JOB_DURATION_BUCKETS.map((bound) => (seconds <= bound ? 1 : 0));
  await withTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO job_runs (job, scope, run_by, queue_job_id, attempt, started_at, duration_ms, outcome, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        run.job,
        JSON.stringify(run.scope),
        run.runBy,
        run.queueJobId ?? null,
        run.attempt,
        run.startedAt,
        Math.max(0, Math.round(run.durationMs)),
        run.outcome,
        run.error === undefined ? null : safeErrorMessage(run.error),
      ],
    );
    // unnest pads the shorter array with NULLs, so totals kept under other bounds still add up per position.
    await client.query(
      `INSERT INTO job_run_totals AS t (job, runs, failures, duration_seconds, buckets, last_success_at, last_failure_at)
       VALUES ($1, 1, $2, $3, $4::bigint[], $5, $6)
       ON CONFLICT (job) DO UPDATE SET
         runs = t.runs + 1,
         failures = t.failures + EXCLUDED.failures,
         duration_seconds = t.duration_seconds + EXCLUDED.duration_seconds,
         buckets = ARRAY(SELECT coalesce(a, 0) + coalesce(b, 0) FROM unnest(t.buckets, EXCLUDED.buckets) AS u(a, b)),
         last_success_at = greatest(t.last_success_at, EXCLUDED.last_success_at),
         last_failure_at = greatest(t.last_failure_at, EXCLUDED.last_failure_at)`,
      [run.job, ok ? 0 : 1, seconds, inBucket, ok ? finishedAt(run) : null, ok ? null : finishedAt(run)],
    );
  });
  await pool.query(
    `DELETE FROM job_runs WHERE job = $1 AND (started_at, id) <= (
       SELECT started_at, id FROM job_runs WHERE job = $1 ORDER BY started_at DESC, id DESC OFFSET $2 LIMIT 1)`,
    [run.job, KEPT_RUNS],
  );
}

/**
 * Runs a job body and records the run, failed or not; the body's result or error is passed on unchanged. A
 * record that cannot be written is logged, never turned into the run's outcome.
 */
export async function recordedRun<T>(
  pool: Pool,
  logger: Logger,
  run: Pick<JobRun, 'job' | 'scope' | 'runBy' | 'queueJobId' | 'attempt'>,
  body: () => Promise<T>,
): Promise<T> {
  const startedAt = new Date();
  const started = performance.now();
  const record = (outcome: JobRun['outcome'], error?: unknown) =>
    recordJobRun(pool, {
      ...run,
      startedAt,
      durationMs: performance.now() - started,
      outcome,
      ...(error === undefined ? {} : { error: safeErrorMessage(error) }),
    }).catch((err: Error) => logger.warn({ job: run.job, err: err.message }, 'could not record the job run'));
  let result: T;
  try {
    result = await body();
  } catch (err) {
    await record('failed', err);
    throw err;
  }
  await record('ok');
  return result;
}

function finishedAt(run: JobRun): Date {
  return new Date(run.startedAt.getTime() + run.durationMs);
}

export interface StoredJobRun {
  job: string;
  scope: JobRunScope;
  run_by: 'worker' | 'cli';
  queue_job_id: string | null;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  outcome: 'ok' | 'failed';
  error: string | null;
}

/** The latest run of each job that has run. */
export async function latestJobRuns(pool: Pool): Promise<Map<string, StoredJobRun>> {
  const { rows } = await pool.query<StoredJobRun>(
    `SELECT DISTINCT ON (job) job, scope, run_by, queue_job_id, attempt, started_at, duration_ms, outcome, error
       FROM job_runs ORDER BY job, started_at DESC, id DESC`,
  );
  return new Map(rows.map((r) => [r.job, r]));
}

export interface JobRunTotals {
  job: string;
  runs: number;
  failures: number;
  durationSeconds: number;
  /** Cumulative counts, one per JOB_DURATION_BUCKETS bound. */
  buckets: number[];
  lastSuccessAt: Date | null;
}

export async function jobRunTotals(pool: Pool): Promise<JobRunTotals[]> {
  const { rows } = await pool.query<{
    job: string;
    runs: string;
    failures: string;
    duration_seconds: number;
    buckets: string[];
    last_success_at: Date | null;
  }>('SELECT job, runs, failures, duration_seconds, buckets, last_success_at FROM job_run_totals ORDER BY job');
  return rows.map((r) => ({
    job: r.job,
    runs: Number(r.runs),
    failures: Number(r.failures),
    durationSeconds: r.duration_seconds,
    buckets: JOB_DURATION_BUCKETS.map((_b, i) => Number(r.buckets[i] ?? 0)),
    lastSuccessAt: r.last_success_at,
  }));
}
