// The nightly retention job (issue 25) on a hand-made Europe/Berlin fixture around the fall-back change of
// 25 October 2026 (03:00 CEST → 02:00 CET) and the October/November month boundary, as of Tuesday 3 November.
//
// Visitors (local times, Europe/Berlin):
// - P (server): Sun 25 Oct 09:00 (first ever); Mon 26 Oct 00:30 (23:30 UTC on the 25th) and 11:00 — twice in one
//   day and week; Sun 1 Nov 11:00.
// - D (server): Sun 25 Oct 00:30 CEST (22:30 UTC on the 24th) and Sun 25 Oct 23:30 CET (22:30 UTC on the 25th):
//   the same local day both times, though the UTC offset changed in between.
// - U (server-sent id that happens to be 32 hex digits): Wed 28 Oct; Tue 3 Nov.
// - Q (browser, page-supplied UUID): Sat 31 Oct 23:30 CET (22:30 UTC); Mon 2 Nov.
// - R (server): first ever Wed 10 June, then Tue 27 Oct: a returning visitor, in no cohort of the kept window.
// - S (browser, cookieless 32-hex id): Mon 26 Oct and Tue 27 Oct: never counted.
// - V (server): Tue 3 Nov 23:30 (22:30 UTC); W (server): Wed 4 Nov 00:30 CET, after the day the run is for.
// - X (server): engagement events only, which are no visit.
//
// Hand-worked grids (period: retained of total):
// daily   25 Oct {P,D}: p0 2, p1 1 (P), p2-p6 0, p7 1 (P on 1 Nov), p8 0, p9 0 (3 Nov is 9 days on)
//         28 Oct {U}: p0 1, p1-p5 0, p6 1;  31 Oct {Q}: p0 1, p1 0, p2 1, p3 0;  3 Nov {V}: p0 1
// weekly  19 Oct {P,D}: p0 2, p1 1 (P twice, once), p2 0;  26 Oct {U,Q}: p0 2, p1 2;  2 Nov {V}: p0 1
// monthly Oct {P,D,U,Q}: p0 4, p1 3 (P, U, Q);  Nov {V}: p0 1

import { main } from '../../../cli/main';
import type { JobContext } from '../../../jobs/registry';
import { SCHEDULED_JOBS } from '../../../jobs/registry';
import { retention } from '../../../jobs/retention';
import type { EventRow } from '../../../lib/ingest/job/rows';
import { readRetention } from '../../../lib/intelligence/retention';
import { createProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { startWorker } from '../../../workers/main';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let job: JobContext;
let siteId: string;
let emptyId: string;
const TZ = 'Europe/Berlin';
const HEX = 'ab'.repeat(16);
const COOKIELESS = 'cd'.repeat(16);
const Q = '5f0c1a2e-7a43-4b8e-9a1d-3c2b1e0f9a77';

beforeAll(async () => {
  ctx = await createTestContext();
  job = {
    pool: ctx.pool,
    clickhouse: ctx.clickhouse,
    redis: ctx.redis,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
  };
  const user = await registerUser(ctx, 'pro', 'retention');
  siteId = (await createWebsite(ctx, user, 'shop.example.com')).id;
  emptyId = (await createWebsite(ctx, user, 'empty.example.com')).id;
  await ctx.pool.query('UPDATE websites SET timezone = $1 WHERE id = $2', [TZ, siteId]);
  const row = (visitor_id: string, ts: string, over: Partial<EventRow> = {}) =>
    eventRow(siteId, { visitor_id, session_id: `${visitor_id}-${ts}`, ts, ...over });
  const browser = { source: 'browser' as const };
  await storeRows(ctx.clickhouse, [
    row('P', '2026-10-25T08:00:00Z'),
    row('P', '2026-10-25T23:30:00Z'),
    row('P', '2026-10-26T10:00:00Z', { type: 'event', name: 'Signup' }),
    row('P', '2026-11-01T10:00:00Z'),
    row('D', '2026-10-24T22:30:00Z'),
    row('D', '2026-10-25T22:30:00Z'),
    row(HEX, '2026-10-28T09:00:00Z'),
    row(HEX, '2026-11-03T09:00:00Z'),
    row(Q, '2026-10-31T22:30:00Z', browser),
    row(Q, '2026-11-02T08:00:00Z', browser),
    row('R', '2026-06-10T09:00:00Z'),
    row('R', '2026-10-27T09:00:00Z'),
    row(COOKIELESS, '2026-10-26T09:00:00Z', browser),
    row(COOKIELESS, '2026-10-27T09:00:00Z', browser),
    row('V', '2026-11-03T22:30:00Z'),
    row('W', '2026-11-03T23:30:00Z'),
    row('X', '2026-10-27T09:00:00Z', { type: 'engagement' }),
    row('X', '2026-10-28T09:00:00Z', { type: 'engagement' }),
  ]);
});
afterAll(() => ctx.close());

const stored = async (websiteId = siteId) =>
  (
    await ctx.pool.query(
      `SELECT granularity, to_char(cohort_date, 'YYYY-MM-DD') AS cohort, period_number AS p, total_users AS n,
              retained_users AS r
       FROM retention_cohorts WHERE website_id = $1 ORDER BY granularity, cohort_date, period_number`,
      [websiteId],
    )
  ).rows;

/** [cohort, total, retained per period from 0] → the stored rows of one granularity. */
const grid = (granularity: string, cohorts: [string, number, number[]][]) =>
  cohorts.flatMap(([cohort, n, retained]) => retained.map((r, p) => ({ granularity, cohort, p, n, r })));

const DAILY = grid('daily', [
  ['2026-10-25', 2, [2, 1, 0, 0, 0, 0, 0, 1, 0, 0]],
  ['2026-10-28', 1, [1, 0, 0, 0, 0, 0, 1]],
  ['2026-10-31', 1, [1, 0, 1, 0]],
  ['2026-11-03', 1, [1]],
]);
const MONTHLY = grid('monthly', [
  ['2026-10-01', 4, [4, 3]],
  ['2026-11-01', 1, [1]],
]);
const WEEKLY = grid('weekly', [
  ['2026-10-19', 2, [2, 1, 0]],
  ['2026-10-26', 2, [2, 2]],
  ['2026-11-02', 1, [1]],
]);

describe('retention job', () => {
  it('is registered as a nightly job', () => {
    const registered = SCHEDULED_JOBS.find((j) => j.name === 'retention');
    expect(registered?.cron).toMatch(/^\d+ \d+ \* \* \*$/);
    expect(registered?.scope).toEqual(['websiteId', 'date']);
  });

  it('stores the hand-worked daily, weekly and monthly grids for the scope’s day', async () => {
    const run = await retention(job, { websiteId: siteId, date: '2026-11-03' });
    expect(run).toEqual({ websites: 1, rows: DAILY.length + WEEKLY.length + MONTHLY.length });
    expect(await stored()).toEqual([...DAILY, ...MONTHLY, ...WEEKLY]);
  });

  it('writes identical rows when re-run for the same scope, even after another day’s run', async () => {
    const first = await stored();
    await retention(job, { websiteId: siteId, date: '2026-11-05' });
    expect(await stored()).not.toEqual(first);
    await retention(job, { websiteId: siteId, date: '2026-11-03' });
    expect(await stored()).toEqual(first);
  });

  it('without a scope runs every active website as of its latest complete local day', async () => {
    // 4 Nov 00:30 CET is 3 Nov 23:30 UTC: in Berlin the 3rd is complete, so cohorts as of the 3rd.
    const run = await retention(job, {}, Date.parse('2026-11-03T23:30:00Z'));
    expect(run.websites).toBeGreaterThanOrEqual(2);
    expect(await stored()).toEqual([...DAILY, ...MONTHLY, ...WEEKLY]);
    expect(await stored(emptyId)).toEqual([]);
  });

  it('runs through the queue: a worker takes the enqueued job and its scope', async () => {
    await ctx.pool.query('DELETE FROM retention_cohorts WHERE website_id = $1', [siteId]);
    const worker = await startWorker(ctx.config);
    const queue = createProducerQueue(QUEUE_NAMES.jobs, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
    try {
      const queued = await queue.add(
        'retention',
        { websiteId: siteId, date: '2026-11-03' },
        { jobId: 'retention-test' },
      );
      const end = Date.now() + 20_000;
      while (!(await queued.isCompleted()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(await queued.isCompleted()).toBe(true);
      expect(await stored()).toEqual([...DAILY, ...MONTHLY, ...WEEKLY]);
    } finally {
      await queue.close();
      await worker.stop();
    }
  });

  it('a run waits while another run of the same website is writing, then writes the same rows', async () => {
    // Another run's transaction, between its delete and its insert: it holds the website's retention lock.
    const other = await ctx.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query("SELECT pg_advisory_xact_lock(hashtext('retention:' || $1))", [siteId]);
      await other.query('DELETE FROM retention_cohorts WHERE website_id = $1', [siteId]);
      let done = false;
      const run = retention(job, { websiteId: siteId, date: '2026-11-03' }).then((r) => {
        done = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(done).toBe(false);
      await other.query('COMMIT');
      expect((await run).websites).toBe(1);
    } finally {
      other.release();
    }
    expect(await stored()).toEqual([...DAILY, ...MONTHLY, ...WEEKLY]);
  });

  it('runs by hand: tidemark jobs run retention --website --date', async () => {
    await ctx.pool.query('DELETE FROM retention_cohorts WHERE website_id = $1', [siteId]);
    const io = captureIo();
    expect(await main(['jobs', 'run', 'retention', '--website', siteId, '--date', '2026-11-03'], io, cliEnv(ctx))).toBe(
      0,
    );
    expect(io.stdout.join('\n')).toMatch(/"rows":31/);
    expect(await stored()).toEqual([...DAILY, ...MONTHLY, ...WEEKLY]);
  });

  it('refuses a malformed date', async () => {
    await expect(retention(job, { websiteId: siteId, date: '2026-02-30' })).rejects.toThrow(RangeError);
  });

  it('answers the endpoint’s records and summary from the stored rows', async () => {
    await retention(job, { websiteId: siteId, date: '2026-11-03' });
    const now = Date.parse('2026-11-04T12:00:00Z');
    const daily = await readRetention(
      ctx.pool,
      { id: siteId, timezone: TZ },
      { granularity: 'daily', periods: 2, range: '30d' },
      now,
    );
    expect(daily.as_of).toBe('2026-11-03');
    expect(daily.cohorts).toEqual([
      { cohort_date: '2026-10-25', period_number: 0, total_users: 2, retained_users: 2, retention_rate: 100 },
      { cohort_date: '2026-10-25', period_number: 1, total_users: 2, retained_users: 1, retention_rate: 50 },
      { cohort_date: '2026-10-25', period_number: 2, total_users: 2, retained_users: 0, retention_rate: 0 },
      { cohort_date: '2026-10-28', period_number: 0, total_users: 1, retained_users: 1, retention_rate: 100 },
      { cohort_date: '2026-10-28', period_number: 1, total_users: 1, retained_users: 0, retention_rate: 0 },
      { cohort_date: '2026-10-28', period_number: 2, total_users: 1, retained_users: 0, retention_rate: 0 },
      { cohort_date: '2026-10-31', period_number: 0, total_users: 1, retained_users: 1, retention_rate: 100 },
      { cohort_date: '2026-10-31', period_number: 1, total_users: 1, retained_users: 0, retention_rate: 0 },
      { cohort_date: '2026-10-31', period_number: 2, total_users: 1, retained_users: 1, retention_rate: 100 },
      { cohort_date: '2026-11-03', period_number: 0, total_users: 1, retained_users: 1, retention_rate: 100 },
    ]);
    // Period-1 rates 50, 0, 0: mean 16.67; 3 Nov has not reached period 1.
    expect(daily.summary).toEqual({
      overall_retention: 16.67,
      total_cohorts: 4,
      best_cohort: { cohort_date: '2026-10-25', retention_rate: 50 },
    });
    const weekly = await readRetention(
      ctx.pool,
      { id: siteId, timezone: TZ },
      { granularity: 'weekly', periods: 6, range: '30d' },
      now,
    );
    expect(weekly.summary).toEqual({
      overall_retention: 75,
      total_cohorts: 3,
      best_cohort: { cohort_date: '2026-10-26', retention_rate: 100 },
    });
    // 7d = 29 Oct to 4 Nov: the week of 26 Oct holds its first day; the week of 19 Oct is left out.
    const week = await readRetention(
      ctx.pool,
      { id: siteId, timezone: TZ },
      { granularity: 'weekly', periods: 1, range: '7d' },
      now,
    );
    expect(week.cohorts.map((c) => [c.cohort_date, c.period_number])).toEqual([
      ['2026-10-26', 0],
      ['2026-10-26', 1],
      ['2026-11-02', 0],
    ]);
    const monthly = await readRetention(
      ctx.pool,
      { id: siteId, timezone: TZ },
      { granularity: 'monthly', periods: 12, range: '90d' },
      now,
    );
    expect(monthly.cohorts.map((c) => c.retention_rate)).toEqual([100, 75, 100]);
    expect(monthly.summary).toEqual({
      overall_retention: 75,
      total_cohorts: 2,
      best_cohort: { cohort_date: '2026-10-01', retention_rate: 75 },
    });
  });

  it('answers a website without cohorts with empty records and zeros', async () => {
    const none = await readRetention(
      ctx.pool,
      { id: emptyId, timezone: 'UTC' },
      { granularity: 'weekly', periods: 6, range: '30d' },
    );
    expect(none.cohorts).toEqual([]);
    expect(none.summary).toEqual({ overall_retention: 0, total_cohorts: 0, best_cohort: null });
  });
});
