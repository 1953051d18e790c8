import { listJobs, runJob } from '../../../cli/commands/jobs';
import type { Context, Values } from '../../../cli/context';
import { main } from '../../../cli/main';
import { type JobScope, SCHEDULED_JOBS, type ScheduledJob } from '../../../jobs/registry';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';

let ctx: TestContext;
let siteA: string;
let siteB: string;
beforeAll(async () => {
  ctx = await createTestContext();
  const user = await registerUser(ctx, 'pro');
  siteA = (await createWebsite(ctx, user, 'a.example')).id;
  siteB = (await createWebsite(ctx, user, 'b.example')).id;
});
afterAll(() => ctx.close());

const env = () => cliEnv(ctx);

/** A command context over the test's resources, for running the commands with a job table of the test's own. */
function commandContext(io: ReturnType<typeof captureIo>): Context {
  return { config: ctx.config, io, pool: async () => ctx.pool };
}

/** A job that notes every scope it is run for, and fails on the days in `failOn`. */
function probe(seen: JobScope[], failOn: string[] = []): ScheduledJob {
  return {
    name: 'probe',
    cron: '5 4 * * *',
    async run(_ctx, scope) {
      seen.push(scope);
      if (scope.date && failOn.includes(scope.date))
        throw new Error(`store refused: postgres://tidemark:hunter2@db.internal/x?password=s3cret on ${scope.date}`);
      return { day: scope.date ?? null };
    },
  };
}

async function runsOf(job: string) {
  const { rows } = await ctx.pool.query(
    'SELECT scope, run_by, attempt, outcome, error, duration_ms FROM job_runs WHERE job = $1 ORDER BY started_at',
    [job],
  );
  return rows;
}

describe('tidemark jobs run', () => {
  it('runs a range day by day for one website, a progress line per day, then a summary, each run recorded', async () => {
    const seen: JobScope[] = [];
    const io = captureIo();
    const v: Values = { name: 'probe', website: siteA, from: '2026-10-30', to: '2026-11-01' };
    await runJob(v, commandContext(io), [probe(seen)]);
    // Across the month boundary, oldest first.
    expect(seen).toEqual([
      { websiteId: siteA, date: '2026-10-30' },
      { websiteId: siteA, date: '2026-10-31' },
      { websiteId: siteA, date: '2026-11-01' },
    ]);
    expect(io.stdout).toHaveLength(4);
    expect(io.stdout[0]).toMatch(
      new RegExp(`^\\[1/3\\] probe 2026-10-30, website ${siteA}: ok in \\d+ ms \\{"day":"2026-10-30"\\}$`),
    );
    expect(io.stdout[1]).toMatch(/^\[2\/3\] probe 2026-10-31, website .*: ok in/);
    expect(io.stdout[2]).toMatch(/^\[3\/3\] probe 2026-11-01, website .*: ok in/);
    expect(io.stdout[3]).toMatch(/^probe: 3 run\(s\), 3 ok, 0 failed, \d+ ms in all$/);
    const runs = await runsOf('probe');
    expect(runs.map((r) => [r.scope, r.run_by, r.attempt, r.outcome, r.error])).toEqual([
      [{ websiteId: siteA, date: '2026-10-30' }, 'cli', 1, 'ok', null],
      [{ websiteId: siteA, date: '2026-10-31' }, 'cli', 1, 'ok', null],
      [{ websiteId: siteA, date: '2026-11-01' }, 'cli', 1, 'ok', null],
    ]);
  });

  it('without --website or a date runs once with an empty scope (what the clock enqueues)', async () => {
    const seen: JobScope[] = [];
    const io = captureIo();
    await runJob({ name: 'probe' }, commandContext(io), [probe(seen)]);
    expect(seen).toEqual([{}]);
    expect(io.stdout[0]).toMatch(/^probe latest, all websites: ok in \d+ ms \{"day":null\}$/);
    expect(io.stdout[1]).toMatch(/^probe: 1 run\(s\), 1 ok, 0 failed/);
  });

  it('a failing day is reported (secrets masked) and recorded, the others still run, and the command fails', async () => {
    await ctx.pool.query("DELETE FROM job_runs WHERE job = 'probe'");
    const seen: JobScope[] = [];
    const io = captureIo();
    const v: Values = { name: 'probe', date: undefined, from: '2026-03-01', to: '2026-03-03' };
    await expect(runJob(v, commandContext(io), [probe(seen, ['2026-03-02'])])).rejects.toThrow(
      '1 of 3 run(s) failed (2026-03-02)',
    );
    expect(seen.map((s) => s.date)).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
    expect(io.stdout[1]).toMatch(/^\[2\/3\] probe 2026-03-02, all websites: FAILED in \d+ ms: store refused: /);
    expect(io.stdout[1]).not.toMatch(/hunter2|s3cret/);
    expect(io.stdout[3]).toMatch(/^probe: 3 run\(s\), 2 ok, 1 failed/);
    const runs = await runsOf('probe');
    expect(runs.map((r) => r.outcome)).toEqual(['ok', 'failed', 'ok']);
    expect(runs[1].error).toBe('store refused: postgres://tidemark:***@db.internal/x?password=*** on 2026-03-02');
  });

  it('a real job through the command: rollup-daily for one website covers that website only', async () => {
    const io = captureIo();
    expect(await main(['jobs', 'run', 'rollup-daily', '--website', siteB], io, env())).toBe(0);
    expect(io.stdout[0]).toMatch(
      new RegExp(`^rollup-daily latest, website ${siteB}: ok in .* \\{"websites":1,"days":0,"pending":0\\}$`),
    );
    const all = captureIo();
    expect(await main(['jobs', 'run', 'rollup-daily'], all, env())).toBe(0);
    expect(all.stdout[0]).toMatch(
      /^rollup-daily latest, all websites: ok in .* \{"websites":2,"days":0,"pending":0\}$/,
    );
    const runs = await runsOf('rollup-daily');
    expect(runs.map((r) => r.scope)).toEqual([{ websiteId: siteB }, {}]);
  });

  it.each([
    [['jobs', 'run'], new RegExp(`name the job: ${SCHEDULED_JOBS.map((j) => j.name).join(', ')} \\(`)],
    [
      ['jobs', 'run', 'nope'],
      new RegExp(`unknown job "nope"; the jobs are ${SCHEDULED_JOBS.map((j) => j.name).join(', ')} \\(`),
    ],
    [['jobs', 'run', 'rollup-daily', 'extra'], /Unexpected argument 'extra'/],
    [['jobs', 'run', 'rollup-daily', '--date', '2026-02-30'], /--date must be a date YYYY-MM-DD/],
    [['jobs', 'run', 'rollup-daily', '--website', 'not-a-uuid'], /--website must be a website id \(UUID\)/],
    [['jobs', 'run', 'rollup-daily', '--website', '00000000-0000-4000-8000-000000000000'], /no website 0{8}-/],
    [['jobs', 'run', 'rollup-daily', '--date', '2026-11-01'], /rollup-daily does not run for a given day/],
    [['jobs', 'run', 'expire-sessions', '--website', '00000000-0000-4000-8000-000000000000'], /takes no --website/],
  ])('%j is refused with exit 2 and one line', async (argv, message) => {
    const io = captureIo();
    expect(await main(argv, io, env())).toBe(2);
    expect(io.stderr).toHaveLength(1);
    expect(io.stderr[0]).toMatch(message);
    expect(io.stderr[0]).toMatch(/\(see tidemark jobs run --help\)$/);
  });

  it.each([
    [{ date: '2026-11-01', from: '2026-11-01', to: '2026-11-02' }, 'give --date or --from and --to, not both'],
    [{ from: '2026-11-01' }, '--from and --to go together'],
    [{ from: '2026-11-02', to: '2026-11-01' }, '--from must not be after --to'],
    [{ from: '2025-01-01', to: '2026-01-02' }, 'a range covers at most 366 days (this one 367)'],
    [{ date: '2999-01-01' }, '--date 2999-01-01 is in the future'],
    [{ date: '11/01/2026' }, '--date must be a date YYYY-MM-DD'],
  ])('dates %j are refused before anything runs', async (flags, message) => {
    const seen: JobScope[] = [];
    await expect(runJob({ name: 'probe', ...flags }, commandContext(captureIo()), [probe(seen)])).rejects.toThrow(
      message,
    );
    expect(seen).toEqual([]);
  });

  it('a 366-day range is accepted', async () => {
    const seen: JobScope[] = [];
    const io = captureIo();
    await runJob({ name: 'probe', from: '2025-01-01', to: '2026-01-01' }, commandContext(io), [probe(seen)]);
    expect(seen).toHaveLength(366);
    expect(seen[365]).toEqual({ date: '2026-01-01' });
    expect(io.stdout[365]).toMatch(/^\[366\/366\] probe 2026-01-01, all websites: ok/);
  });
});

describe('tidemark jobs list', () => {
  it('names every job with its schedule and its last run (or dashes when it never ran)', async () => {
    const ran = captureIo();
    expect(await main(['jobs', 'run', 'expire-sessions'], ran, env())).toBe(0);
    // A job that takes no scope names none.
    expect(ran.stdout[0]).toMatch(/^expire-sessions: ok in \d+ ms \{"deleted":0\}$/);
    const io = captureIo();
    expect(await main(['jobs', 'list'], io, env())).toBe(0);
    const lines = io.stdout.join('\n').split('\n');
    expect(lines[0]).toMatch(/^job\s+schedule\s+last_run\s+duration\s+outcome\s+by\s+scope\s+error$/);
    // One line per job, in the table's order; the jobs this file never ran show dashes.
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(SCHEDULED_JOBS.map((j) => j.name));
    const line = (name: string) => lines.find((l) => l.startsWith(`${name} `)) ?? '';
    expect(line('expire-sessions')).toMatch(
      /^expire-sessions\s+17 \* \* \* \*\s+\d{4}-\d\d-\d\dT\S+Z\s+\d+ ms\s+ok\s+cli\s+-\s+-$/,
    );
    expect(line('rollup-daily')).toMatch(
      /^rollup-daily\s+\*\/10 \* \* \* \*\s+\S+Z\s+.+\s+ok\s+cli\s+latest, all websites\s+-$/,
    );
    for (const job of SCHEDULED_JOBS.filter((j) => !['expire-sessions', 'rollup-daily'].includes(j.name)))
      expect(line(job.name)).toMatch(new RegExp(`^${job.name}\\s+${job.cron.replace(/[*/]/g, '\\$&')}(\\s+-){6}$`));
  });

  it('--json gives the same as data; a failed last run shows its error', async () => {
    const io = captureIo();
    await listJobs({ json: true }, commandContext(io), [probe([])]);
    const [row] = JSON.parse(io.stdout[0]);
    // The last probe run is the 366-day range's last day, which succeeded.
    expect(row).toMatchObject({
      job: 'probe',
      schedule: '5 4 * * *',
      outcome: 'ok',
      run_by: 'cli',
      attempt: 1,
      scope: { date: '2026-01-01' },
      error: null,
    });
    await expect(
      runJob({ name: 'probe', date: '2026-03-02' }, commandContext(captureIo()), [probe([], ['2026-03-02'])]),
    ).rejects.toThrow('1 of 1 run(s) failed');
    const table = captureIo();
    await listJobs({}, commandContext(table), [probe([])]);
    expect(table.stdout[0].split('\n')[1]).toMatch(
      /^probe\s+5 4 \* \* \*\s+\S+Z\s+\d+ ms\s+failed\s+cli\s+2026-03-02, all websites\s+store refused: postgres:\/\/tidemark:\*\*\*@/,
    );
  });

  it('answers --help', async () => {
    const io = captureIo();
    expect(await main(['jobs', 'run', '--help'], io, env())).toBe(0);
    expect(io.stdout[0]).toMatch(/^tidemark jobs run <name> \[--website <id>\]/);
    const group = captureIo();
    expect(await main(['jobs'], group, env())).toBe(0);
    expect(group.stdout[0]).toMatch(/jobs list\s+scheduled jobs/);
  });
});
