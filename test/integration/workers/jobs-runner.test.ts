import { type Job, Worker } from 'bullmq';
import { main } from '../../../cli/main';
import { SCHEDULED_JOB_OPTIONS, scheduledJobId } from '../../../jobs/clock';
import type { JobContext, JobScope, ScheduledJob } from '../../../jobs/registry';
import { KEPT_RUNS, recordJobRun, safeErrorMessage } from '../../../lib/jobs/runs';
import { createProducerQueue, type ProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { bullPrefix, createRedis } from '../../../lib/redis';
import { jobsProcessor } from '../../../workers/jobsRunner';
import { registerUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let queue: ProducerQueue;
let worker: Worker;
let connection: ReturnType<typeof createRedis>;
const seen: JobScope[] = [];

// Test-only jobs, given to the processor in place of the real table.
const TEST_JOBS: ScheduledJob[] = [
  {
    name: 'quick',
    cron: '* * * * *',
    async run(_ctx, scope) {
      seen.push(scope);
      return { ok: true };
    },
  },
  {
    name: 'slow',
    cron: '* * * * *',
    async run() {
      // Node timers may fire a fraction of a millisecond early: 200 ms leaves room above 150.
      await new Promise((r) => setTimeout(r, 200));
      return {};
    },
  },
  {
    name: 'broken',
    cron: '* * * * *',
    async run() {
      throw new Error('cannot reach redis://:sup3rsecret@cache:6379 for the job');
    },
  },
];

beforeAll(async () => {
  ctx = await createTestContext();
  connection = createRedis(ctx.config.REDIS_URL, 'worker', 'tidemark-test-worker');
  const jobCtx: JobContext = {
    pool: ctx.pool,
    clickhouse: ctx.clickhouse,
    redis: connection,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
  };
  worker = new Worker(QUEUE_NAMES.jobs, jobsProcessor(jobCtx, TEST_JOBS), {
    connection,
    prefix: bullPrefix(ctx.config.REDIS_PREFIX),
    concurrency: 1,
  });
  queue = createProducerQueue(QUEUE_NAMES.jobs, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
});
afterAll(async () => {
  await worker.close();
  await queue.close();
  connection.disconnect();
  await ctx.close();
});

async function settled(job: Job): Promise<Job> {
  const end = Date.now() + 20_000;
  for (;;) {
    const fresh = await queue.getJob(job.id!);
    // Read again once settled: a job object read before holds its fields as they were then.
    if (fresh && ((await fresh.isCompleted()) || (await fresh.isFailed()))) return (await queue.getJob(job.id!))!;
    if (Date.now() > end) throw new Error(`job ${job.id} did not settle`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function runsOf(job: string) {
  const { rows } = await ctx.pool.query(
    'SELECT scope, run_by, queue_job_id, attempt, outcome, error, duration_ms FROM job_runs WHERE job = $1 ORDER BY started_at',
    [job],
  );
  return rows;
}

/** The value of one series line of /metrics, whatever the order of its labels. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('the jobs runner', () => {
  it('runs the body for the scope the queue job carries and records the run', async () => {
    const scope = { websiteId: '7c0e0b7c-5d3e-4d8e-9f55-0d7f2e8a1b11', date: '2026-11-20' };
    const job = await queue.add('quick', { ...scope, ignored: 1 }, { jobId: 'quick-1' });
    expect(await (await settled(job)).isCompleted()).toBe(true);
    expect(seen).toEqual([scope]);
    const runs = await runsOf('quick');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ scope, run_by: 'worker', queue_job_id: 'quick-1', attempt: 1, outcome: 'ok' });
    expect(runs[0].error).toBeNull();
  });

  it('records the duration: a 200 ms body takes at least 150 ms', async () => {
    const job = await queue.add('slow', {}, { jobId: 'slow-1' });
    await settled(job);
    const [run] = await runsOf('slow');
    expect(run.outcome).toBe('ok');
    expect(run.duration_ms).toBeGreaterThanOrEqual(150);
    expect(run.duration_ms).toBeLessThan(5_000);
  });

  it("a failing job is tried as often as the clock asks, each attempt recorded, then listed by 'queue failed'", async () => {
    expect(SCHEDULED_JOB_OPTIONS.attempts).toBe(3);
    const jobId = scheduledJobId('broken', new Date('2026-11-25T10:43:00Z'));
    // The clock's options, with the backoff shortened from 30 s so the test need not wait.
    const job = await queue.add(
      'broken',
      {},
      { ...SCHEDULED_JOB_OPTIONS, backoff: { ...SCHEDULED_JOB_OPTIONS.backoff, delay: 20 }, jobId },
    );
    const done = await settled(job);
    expect(await done.isFailed()).toBe(true);
    expect(done.attemptsMade).toBe(3);
    const runs = await runsOf('broken');
    expect(runs.map((r) => [r.attempt, r.outcome, r.queue_job_id])).toEqual([
      [1, 'failed', jobId],
      [2, 'failed', jobId],
      [3, 'failed', jobId],
    ]);
    expect(runs[0].error).toBe('cannot reach redis://:***@cache:6379 for the job');

    const io = captureIo();
    expect(await main(['queue', 'failed', '--queue', 'jobs'], io, cliEnv(ctx))).toBe(0);
    expect(io.stdout[0]).toBe('1 failed job(s) in jobs');
    expect(io.stdout[1]).toMatch(new RegExp(`^${jobId}\\tbroken\\tattempts=3\\t\\S+Z\\tcannot reach redis://`));

    const list = captureIo();
    // The real table has no "broken": the list shows the real jobs only.
    expect(await main(['jobs', 'list', '--json'], list, cliEnv(ctx))).toBe(0);
    expect(JSON.parse(list.stdout[0]).map((r: { job: string }) => r.job)).not.toContain('broken');
  });

  it('an unknown job fails at once, without retries and without a record', async () => {
    const job = await queue.add('no-such-job', {}, { ...SCHEDULED_JOB_OPTIONS, jobId: 'unknown-1' });
    // Failed within settled()'s 20 s although a retry would wait the clock's 30 s backoff: not retried.
    const done = await settled(job);
    expect(await done.isFailed()).toBe(true);
    expect(done.failedReason).toBe('unknown job no-such-job');
    expect(await runsOf('no-such-job')).toEqual([]);
  });

  it('the real table runs when none is given: expire-sessions through the processor', async () => {
    const user = await registerUser(ctx);
    await ctx.pool.query(
      `INSERT INTO user_sessions (token_hash, user_id, expires_at) VALUES ('gone', $1, now() - interval '1 minute')`,
      [user.id],
    );
    const processor = jobsProcessor({
      pool: ctx.pool,
      clickhouse: ctx.clickhouse,
      redis: connection,
      redisPrefix: ctx.config.REDIS_PREFIX,
      logger: ctx.logger,
    });
    const result = await processor({ name: 'expire-sessions', id: 'x-1', data: {}, attemptsMade: 0 } as Job);
    expect(result).toEqual({ deleted: 1 });
    expect(await runsOf('expire-sessions')).toMatchObject([{ run_by: 'worker', queue_job_id: 'x-1', outcome: 'ok' }]);
  });
});

describe('job metrics on /metrics', () => {
  it('per job: a duration histogram, failures and the last success, from the recorded runs', async () => {
    const res = await client(ctx.baseUrl)('GET', '/metrics');
    expect(res.status).toBe(200);
    const text = res.text;
    expect(text).toMatch(/^# TYPE tidemark_job_run_duration_seconds histogram$/m);
    expect(text).toMatch(/^# TYPE tidemark_job_failures_total counter$/m);
    expect(text).toMatch(/^# TYPE tidemark_job_last_success_timestamp_seconds gauge$/m);
    const d = 'tidemark_job_run_duration_seconds';
    // broken: 3 failed attempts, each well under 0.1 s.
    expect(series(text, 'tidemark_job_failures_total', { job: 'broken' })).toBe(3);
    expect(series(text, `${d}_count`, { job: 'broken' })).toBe(3);
    expect(series(text, `${d}_bucket`, { job: 'broken', le: '0.1' })).toBe(3);
    expect(series(text, 'tidemark_job_last_success_timestamp_seconds', { job: 'broken' })).toBeUndefined();
    // slow: one run of 200 ms or so: not within 0.1 s, within 1 s.
    expect(series(text, `${d}_bucket`, { job: 'slow', le: '0.1' })).toBe(0);
    expect(series(text, `${d}_bucket`, { job: 'slow', le: '1' })).toBe(1);
    expect(series(text, `${d}_bucket`, { job: 'slow', le: '+Inf' })).toBe(1);
    expect(series(text, `${d}_sum`, { job: 'slow' })).toBeGreaterThanOrEqual(0.15);
    expect(series(text, 'tidemark_job_failures_total', { job: 'slow' })).toBe(0);
    const lastOk = series(text, 'tidemark_job_last_success_timestamp_seconds', { job: 'quick' }) ?? 0;
    expect(Math.abs(lastOk - Date.now() / 1000)).toBeLessThan(60);
  });
});

describe('the run record', () => {
  it('keeps the newest runs of a job only; the totals behind the metrics keep counting', async () => {
    await ctx.pool.query(
      `INSERT INTO job_runs (job, run_by, started_at, duration_ms, outcome)
       SELECT 'bulk', 'cli', now() - make_interval(mins => 2000 - g), 1, 'ok' FROM generate_series(1, $1::int) g`,
      [KEPT_RUNS],
    );
    await recordJobRun(ctx.pool, {
      job: 'bulk',
      scope: {},
      runBy: 'cli',
      attempt: 1,
      startedAt: new Date(),
      durationMs: 2_500,
      outcome: 'ok',
    });
    const after = await ctx.pool.query<{ n: string; oldest_age: number; newest_ms: number }>(
      `SELECT count(*) AS n, round(extract(epoch FROM now() - min(started_at)) / 60)::int AS oldest_age,
              (array_agg(duration_ms ORDER BY started_at DESC))[1] AS newest_ms
         FROM job_runs WHERE job = 'bulk'`,
    );
    // The oldest hand-written run (1999 minutes ago) is gone; the next one (1998) is the oldest left.
    expect(after.rows[0]).toEqual({ n: String(KEPT_RUNS), oldest_age: 1998, newest_ms: 2500 });
    // Other jobs' rows are left alone.
    expect(await runsOf('broken')).toHaveLength(3);
    const totals = await ctx.pool.query("SELECT runs, failures, buckets FROM job_run_totals WHERE job = 'bulk'");
    // Only the recorded run counts (the rows inserted by hand never went through the totals): 2.5 s is
    // over the 0.1 and 1 s bounds, within 5 s and above.
    expect(totals.rows[0]).toEqual({ runs: '1', failures: '0', buckets: ['0', '0', '1', '1', '1', '1', '1', '1'] });
  });

  it('error messages: one line, credentials and secret parameters masked, capped', () => {
    expect(safeErrorMessage(new Error('connect to\n  postgres://app:pw@db:5432/t failed'))).toBe(
      'connect to postgres://app:***@db:5432/t failed',
    );
    expect(safeErrorMessage(new Error('bad dsn host=db password=hunter2 user=x'))).toBe(
      'bad dsn host=db password=*** user=x',
    );
    expect(safeErrorMessage('x'.repeat(600))).toHaveLength(500);
    expect(safeErrorMessage(new Error(''))).toBe('failed');
  });
});
