// `tidemark jobs list` and `tidemark jobs run`: the scheduled jobs with their last run, and a job's body run
// here and now, in this process, with the worker's context, for one website, a past day or a range of days.
import { type JobContext, type JobScope, SCHEDULED_JOBS, type ScheduledJob } from '../../jobs/registry';
import { UUID } from '../../lib/checks';
import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { latestJobRuns, recordedRun, safeErrorMessage } from '../../lib/jobs/runs';
import { createLogger } from '../../lib/log';
import { createRedis, waitReady } from '../../lib/redis';
import { addDays, daysBetween, formatDate, type LocalDate, parseDate, today } from '../../lib/stats/time';
import { type Context, printRows, UsageError, type Values } from '../context';

/** The longest range one command runs: a year and a day, enough to recompute after any import. */
const MAX_RANGE_DAYS = 366;

export const runJobsList = (v: Values, ctx: Context) => listJobs(v, ctx, SCHEDULED_JOBS);
export const runJobsRun = (v: Values, ctx: Context) => runJob(v, ctx, SCHEDULED_JOBS);

export async function listJobs(v: Values, ctx: Context, jobs: readonly ScheduledJob[]): Promise<void> {
  const last = await latestJobRuns(await ctx.pool());
  if (v.json === true) {
    const rows = jobs.map((job) => {
      const run = last.get(job.name);
      return {
        job: job.name,
        schedule: job.cron,
        last_run: run?.started_at ?? null,
        duration_ms: run?.duration_ms ?? null,
        outcome: run?.outcome ?? null,
        run_by: run?.run_by ?? null,
        attempt: run?.attempt ?? null,
        scope: run?.scope ?? null,
        error: run?.error ?? null,
      };
    });
    ctx.io.out(JSON.stringify(rows));
    return;
  }
  const rows = jobs.map((job) => {
    const run = last.get(job.name);
    return {
      job: job.name,
      schedule: job.cron,
      last_run: run?.started_at,
      duration: run && formatDuration(run.duration_ms),
      outcome: run?.outcome,
      // worker#2: the queue job's second attempt.
      by: run && (run.run_by === 'worker' ? `worker#${run.attempt}` : 'cli'),
      scope: run && scopeLabel(job, run.scope),
      error: run?.error,
    };
  });
  printRows(ctx.io, rows, false, ['job', 'schedule', 'last_run', 'duration', 'outcome', 'by', 'scope', 'error']);
}

export async function runJob(v: Values, ctx: Context, jobs: readonly ScheduledJob[]): Promise<void> {
  const name = v.name;
  if (typeof name !== 'string' || name === '')
    throw new UsageError(`name the job: ${jobs.map((j) => j.name).join(', ')}`);
  const job = jobs.find((j) => j.name === name);
  if (!job) throw new UsageError(`unknown job "${name}"; the jobs are ${jobs.map((j) => j.name).join(', ')}`);
  const days = requestedDays(v);
  const websiteId = v.website === undefined ? undefined : String(v.website);
  if (websiteId !== undefined && !UUID.test(websiteId)) throw new UsageError('--website must be a website id (UUID)');
  const takes = job.scope ?? ['websiteId', 'date'];
  if (websiteId !== undefined && !takes.includes('websiteId'))
    throw new UsageError(`${job.name} runs for the whole instance at once; it takes no --website`);
  if (days && !takes.includes('date'))
    throw new UsageError(`${job.name} does not run for a given day; it takes no --date, --from or --to`);

  const pool = await ctx.pool();
  if (websiteId !== undefined) {
    const { rowCount } = await pool.query('SELECT 1 FROM websites WHERE id = $1', [websiteId]);
    if (!rowCount) throw new UsageError(`no website ${websiteId}`);
  }
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config), { requestTimeoutMs: 3_600_000 });
  const redis = createRedis(ctx.config.REDIS_URL, 'request', 'tidemark-cli');
  try {
    await waitReady(redis);
    const jobCtx: JobContext = {
      pool,
      clickhouse,
      redis,
      redisPrefix: ctx.config.REDIS_PREFIX,
      config: ctx.config,
      // The body's log lines go to stderr: stdout carries the progress lines.
      logger: createLogger('warn', 'cli', { write: (line: string) => ctx.io.err(line) }),
    };
    const scopes: JobScope[] = (days ?? [undefined]).map((date) => ({
      ...(websiteId === undefined ? {} : { websiteId }),
      ...(date === undefined ? {} : { date }),
    }));
    const begun = performance.now();
    const failed: string[] = [];
    for (const [i, scope] of scopes.entries()) {
      const label = [job.name, scopeLabel(job, scope)].filter(Boolean).join(' ');
      const step = scopes.length > 1 ? `[${i + 1}/${scopes.length}] ` : '';
      const started = performance.now();
      try {
        const result = await recordedRun(pool, jobCtx.logger, { job: job.name, scope, runBy: 'cli', attempt: 1 }, () =>
          job.run(jobCtx, scope),
        );
        ctx.io.out(`${step}${label}: ok in ${formatDuration(performance.now() - started)}${resultText(result)}`);
      } catch (err) {
        failed.push(scope.date ?? label);
        ctx.io.out(
          `${step}${label}: FAILED in ${formatDuration(performance.now() - started)}: ${safeErrorMessage(err)}`,
        );
      }
    }
    const total = formatDuration(performance.now() - begun);
    ctx.io.out(
      `${job.name}: ${scopes.length} run(s), ${scopes.length - failed.length} ok, ${failed.length} failed, ${total} in all`,
    );
    if (failed.length > 0) {
      const shown = failed.slice(0, 10).join(', ');
      throw new Error(
        `${failed.length} of ${scopes.length} run(s) failed (${shown}${failed.length > 10 ? ', …' : ''})`,
      );
    }
  } finally {
    redis.disconnect();
    await clickhouse.close();
  }
}

/** The days named by --date or --from/--to, oldest first (undefined: neither, the job's latest period). */
function requestedDays(v: Values): string[] | undefined {
  if (v.date !== undefined && (v.from !== undefined || v.to !== undefined))
    throw new UsageError('give --date or --from and --to, not both');
  if (v.date !== undefined) return [formatDate(dateFlag(v.date, '--date'))];
  if (v.from === undefined && v.to === undefined) return undefined;
  if (v.from === undefined || v.to === undefined) throw new UsageError('--from and --to go together');
  const from = dateFlag(v.from, '--from');
  const to = dateFlag(v.to, '--to');
  const count = daysBetween(from, to) + 1;
  if (count < 1) throw new UsageError('--from must not be after --to');
  if (count > MAX_RANGE_DAYS) throw new UsageError(`a range covers at most ${MAX_RANGE_DAYS} days (this one ${count})`);
  return Array.from({ length: count }, (_, i) => formatDate(addDays(from, i)));
}

function dateFlag(value: unknown, flag: string): LocalDate {
  const date = typeof value === 'string' ? parseDate(value) : undefined;
  if (!date) throw new UsageError(`${flag} must be a date YYYY-MM-DD`);
  // Today is allowed (it has begun somewhere); a day that has begun nowhere yet has nothing to compute.
  if (daysBetween(today('Etc/GMT-14'), date) > 0) throw new UsageError(`${flag} ${String(value)} is in the future`);
  return date;
}

/** `2026-11-01, website <id>`, `latest, all websites`; nothing for a job that takes no scope. */
function scopeLabel(job: ScheduledJob, scope: JobScope): string | undefined {
  if (job.scope?.length === 0) return undefined;
  return `${scope.date ?? 'latest'}, ${scope.websiteId ? `website ${scope.websiteId}` : 'all websites'}`;
}

/** What a body answered, in a line (jobs answer small counts objects). */
function resultText(result: unknown): string {
  if (result === undefined || result === null) return '';
  const text = JSON.stringify(result);
  return ` ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
