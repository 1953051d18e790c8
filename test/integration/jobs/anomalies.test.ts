// The hourly anomaly job over a generated series with a weekly pattern (test/helpers/anomalyFixture.ts): no
// alarm on a normal Wednesday and Thursday (Thursdays carry 1.5× Wednesdays), injected spikes and drops of known
// size on Thursday 5 November 2026 opening anomalies of the right severity and deviation, one open anomaly per
// metric extended while it lasts and resolved after a full normal hour, a goal's conversions, error rate,
// suspect annotations, the tiny-site rule, and a re-run leaving every row as it was.
import { detectAnomalies, detectForWebsite } from '../../../jobs/anomalies';
import { type JobContext, SCHEDULED_JOBS } from '../../../jobs/registry';

const findJob = (name: string) => SCHEDULED_JOBS.find((j) => j.name === name);

import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import {
  errorRows,
  errorsOf,
  HOUR,
  pageviewsOf,
  signupsOf,
  storeErrors,
  storeSeries,
  visitRows,
  visitsAt,
  WEEK,
} from '../../helpers/anomalyFixture';
import { createTestContext, type TestContext } from '../../helpers/context';
import { eventRow, storeRows } from '../../helpers/statsFixture';

jest.setTimeout(180_000);

let ctx: TestContext;
let job: JobContext;
let owner: TestUser;
let site: string;
let tiny: string;
let goalId: string;

const at = (iso: string) => Date.parse(iso);
const THU = at('2026-11-05T00:00:00Z');
const WED = THU - 24 * HOUR;
const H = (hour: number) => THU + hour * HOUR;
const SPIKE = H(10);
const SPIKE2 = H(11);
const DROP = H(15);
const GOAL_ONLY = H(18);
const ERRORS = H(20);
/** After both days are complete. */
const LATER = at('2026-11-06T00:30:00Z');

interface Row {
  id: string;
  metric_name: string;
  goal_id: string | null;
  expected_value: number;
  actual_value: number;
  deviation_percentage: number;
  severity: string;
  started_at: Date;
  last_seen_at: Date;
  detected_at: Date;
  is_resolved: boolean;
  resolved_at: Date | null;
  suspect_annotation_ids: string[];
  created_at: Date;
}

async function rows(websiteId = site): Promise<Row[]> {
  const r = await ctx.pool.query<Row>(
    'SELECT * FROM anomalies WHERE website_id = $1 ORDER BY started_at, metric_name',
    [websiteId],
  );
  return r.rows;
}

async function annotate(type: string, iso: string): Promise<string> {
  const r = await ctx.pool.query<{ id: string }>(
    `INSERT INTO annotations (website_id, team_id, type, message, occurred_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [site, owner.teamId, type, `${type} at ${iso}`, iso, owner.id],
  );
  return r.rows[0].id;
}

const days = (from: number) => [0, 1, 2, 3, 4].map((k) => from - k * WEEK);

beforeAll(async () => {
  ctx = await createTestContext();
  job = {
    pool: ctx.pool,
    clickhouse: ctx.clickhouse,
    redis: ctx.redis,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
  };
  owner = await registerUser(ctx, 'pro', 'anomalies');
  site = (await createWebsite(ctx, owner, 'shop.example.com')).id;
  tiny = (await createWebsite(ctx, owner, 'tiny.example.com')).id;
  goalId = (
    await ctx.pool.query<{ id: string }>(
      `INSERT INTO goals (website_id, name, kind, created_via) VALUES ($1, 'Signup', 'event', 'api') RETURNING id`,
      [site],
    )
  ).rows[0].id;

  const special = [SPIKE, SPIKE2, DROP, GOAL_ONLY];
  // Wednesday and Thursday of this week and the four before; Thursday's special hours are stored below.
  for (const day of days(WED)) {
    await storeSeries(ctx.clickhouse, site, day, day + 48 * HOUR, { skip: special });
    await storeSeries(ctx.clickhouse, tiny, day, day + 48 * HOUR, { scale: 0.1, skip: [SPIKE] });
  }
  // 10:00 three and a half times the usual visits (315), 11:00 2.2 times (199), 15:00 40 % of them (36).
  await storeRows(ctx.clickhouse, visitRows(site, SPIKE, 0, 315));
  await storeErrors(ctx.clickhouse, errorRows(site, SPIKE, 0, 315));
  await storeRows(ctx.clickhouse, visitRows(site, SPIKE2, 0, 199));
  await storeErrors(ctx.clickhouse, errorRows(site, SPIKE2, 0, 199));
  await storeRows(ctx.clickhouse, visitRows(site, DROP, 0, 36));
  await storeErrors(ctx.clickhouse, errorRows(site, DROP, 0, 36));
  // 18:00 the usual 89 visits, 45 more Signups (by visits without one, inside their 30 s: nothing else moves).
  const n18 = visitsAt(GOAL_ONLY);
  await storeRows(ctx.clickhouse, visitRows(site, GOAL_ONLY, 0, n18));
  await storeErrors(ctx.clickhouse, errorRows(site, GOAL_ONLY, 0, n18));
  const extra = [];
  for (let i = 0; i < n18 && extra.length < 45; i++) {
    if (i % 4 === 3 || i % 5 === 0) continue;
    const first = GOAL_ONLY + ((i * 7) % 50) * 60_000 + (i % 60) * 1000;
    extra.push(
      eventRow(site, {
        visitor_id: `v-${GOAL_ONLY}-${i}`,
        session_id: `s-${GOAL_ONLY}-${i}`,
        type: 'event',
        name: 'Signup',
        pathname: '/',
        ts: new Date(first + 20_000).toISOString(),
      }),
    );
  }
  await storeRows(ctx.clickhouse, extra);
  // 20:00 six times the usual errors (each of the hour's 11 errors six times: 66).
  await storeErrors(ctx.clickhouse, errorRows(site, ERRORS, 0, visitsAt(ERRORS), 5));
  // The tiny site's 10:00: four times its 9 visits.
  await storeRows(ctx.clickhouse, visitRows(tiny, SPIKE, 0, 36));
});
afterAll(() => ctx.close());

describe('the fixture', () => {
  it('has the counts the expectations below are worked out from', () => {
    expect(days(SPIKE).map((h) => visitsAt(h))).toEqual([90, 88, 91, 89, 92]);
    expect(days(SPIKE2).map((h) => visitsAt(h))).toEqual([88, 91, 89, 92, 90]);
    expect(days(ERRORS).map((h) => visitsAt(h))).toEqual([53, 51, 54, 52, 55]);
    expect(visitsAt(H(10) - 24 * HOUR)).toBe(58); // Wednesday's 10:00: 60 (two thirds of Thursday's 90) - 2
    expect([pageviewsOf(0, 315), signupsOf(0, 315)]).toEqual([552, 63]);
    // 20:00 this week: 53 visits, 93 pageviews, 11 errors (stored six times over: 66).
    expect([pageviewsOf(0, 53), errorsOf(0, 53)]).toEqual([93, 11]);
  });
});

describe('the anomaly job', () => {
  let deploy: string;
  let incident: string;
  let campaign: string;
  let release: string;

  it('is scheduled hourly, a few minutes past the hour', () => {
    expect(findJob('anomalies')?.cron).toBe('7 * * * *');
  });

  it('finds nothing on a normal Wednesday although Thursdays carry 1.5 times as much', async () => {
    const run = await detectAnomalies(job, { websiteId: site, date: '2026-11-04' }, LATER);
    expect(run).toMatchObject({ websites: 1, hours: 24, opened: [] });
    expect(await rows()).toEqual([]);
  });

  it('opens critical anomalies for the 10:00 spike in the hourly run, with its suspect annotations', async () => {
    deploy = await annotate('deploy', '2026-11-05T09:00:00Z'); // 1 h before: a suspect
    release = await annotate('release', '2026-11-05T11:30:00Z'); // 1.5 h after: a suspect
    campaign = await annotate('campaign', '2026-11-05T07:30:00Z'); // 2.5 h before: not one
    incident = await annotate('incident', '2026-11-05T14:30:00Z'); // 30 min before the 15:00 drop
    // The hourly run at 11:07 judges 10:00–11:00, the last complete hour, of every active website.
    const run = await detectAnomalies(job, {}, SPIKE + HOUR + 7 * 60_000);
    expect(run.websites).toBe(2);
    expect(run.hours).toBe(2);
    const found = await rows();
    // Visitors: 315 against the median of 88, 91, 89, 92 = 90: 250 %. Pageviews: 552 against the median of
    // 154, 160, 156, 161 = 158: 249.37 %. Signups: 63 against the median of 18, 19, 18, 19 = 18.5: 240.54 %.
    // Bounce rate (20 %), visit duration and error rate (errors per pageview) keep their level.
    expect(
      found.map((r) => [
        r.metric_name,
        r.goal_id,
        r.expected_value,
        r.actual_value,
        r.deviation_percentage,
        r.severity,
      ]),
    ).toEqual([
      ['goal_conversions', goalId, 18.5, 63, 240.54, 'critical'],
      ['pageviews', null, 158, 552, 249.37, 'critical'],
      ['visitors', null, 90, 315, 250, 'critical'],
    ]);
    for (const r of found) {
      expect(r.started_at.toISOString()).toBe('2026-11-05T10:00:00.000Z');
      expect(r.last_seen_at.toISOString()).toBe('2026-11-05T10:00:00.000Z');
      expect(r.detected_at.toISOString()).toBe('2026-11-05T11:00:00.000Z');
      expect(r.is_resolved).toBe(false);
      expect([...r.suspect_annotation_ids].sort()).toEqual([deploy, release].sort());
    }
    expect(run.opened.map((o) => o.id).sort()).toEqual(found.map((r) => r.id).sort());
    // The tiny site quadrupled its 9 visits: its hours have under 30 pageviews, so nothing is judged.
    expect(await rows(tiny)).toEqual([]);
  });

  it('judges every hour of Thursday: extends, resolves after a full normal hour, and opens the drop, goal and error anomalies', async () => {
    const run = await detectAnomalies(job, { websiteId: site, date: '2026-11-05' }, LATER);
    expect(run.hours).toBe(24);
    const found = await rows();
    const view = found.map((r) => ({
      metric: r.metric_name,
      started: r.started_at.toISOString().slice(11, 16),
      last: r.last_seen_at.toISOString().slice(11, 16),
      resolved: r.resolved_at?.toISOString().slice(11, 16) ?? null,
      expected: r.expected_value,
      actual: r.actual_value,
      deviation: r.deviation_percentage,
      severity: r.severity,
    }));
    expect(view).toEqual([
      // 10:00 and 11:00 are one anomaly each: the latest hour's figures (199 visits against the median of 91, 89,
      // 92, 90 = 90.5: 119.89 %; 349 pageviews against 159: 119.5 %; 40 Signups against 18.5: 116.22 %), the
      // worst severity; back inside the band all of 12:00, resolved at 13:00.
      {
        metric: 'goal_conversions',
        started: '10:00',
        last: '11:00',
        resolved: '13:00',
        expected: 18.5,
        actual: 40,
        deviation: 116.22,
        severity: 'critical',
      },
      {
        metric: 'pageviews',
        started: '10:00',
        last: '11:00',
        resolved: '13:00',
        expected: 159,
        actual: 349,
        deviation: 119.5,
        severity: 'critical',
      },
      {
        metric: 'visitors',
        started: '10:00',
        last: '11:00',
        resolved: '13:00',
        expected: 90.5,
        actual: 199,
        deviation: 119.89,
        severity: 'critical',
      },
      // 15:00: 36 visits against 90 (60 %), 63 pageviews against 158 (60.13 %), 8 Signups against 18.5 (56.76 %).
      {
        metric: 'goal_conversions',
        started: '15:00',
        last: '15:00',
        resolved: '17:00',
        expected: 18.5,
        actual: 8,
        deviation: 56.76,
        severity: 'info',
      },
      {
        metric: 'pageviews',
        started: '15:00',
        last: '15:00',
        resolved: '17:00',
        expected: 158,
        actual: 63,
        deviation: 60.13,
        severity: 'info',
      },
      {
        metric: 'visitors',
        started: '15:00',
        last: '15:00',
        resolved: '17:00',
        expected: 90,
        actual: 36,
        deviation: 60,
        severity: 'info',
      },
      // 18:00: 18 + 45 = 63 Signups against the median of 19, 18, 18, 19 = 18.5; visits and pages as usual.
      {
        metric: 'goal_conversions',
        started: '18:00',
        last: '18:00',
        resolved: '20:00',
        expected: 18.5,
        actual: 63,
        deviation: 240.54,
        severity: 'critical',
      },
      // 20:00: 66 errors over 93 pageviews = 0.7097 per pageview against the median of 10/90, 11/95, 11/91, 11/97
      // (0.1111, 0.1158, 0.1209, 0.1134) = 0.1146: 519.28 %.
      {
        metric: 'error_rate',
        started: '20:00',
        last: '20:00',
        resolved: '22:00',
        expected: 0.1146,
        actual: 0.7097,
        deviation: 519.28,
        severity: 'critical',
      },
    ]);
    // One open anomaly per metric at most (the unique index holds it; none is left open here).
    expect(found.every((r) => r.is_resolved)).toBe(true);
    expect(found.find((r) => r.metric_name === 'visitors' && r.severity === 'info')?.suspect_annotation_ids).toEqual([
      incident,
    ]);
    expect(found.some((r) => r.suspect_annotation_ids.includes(campaign))).toBe(false);
    // Anomalies opened by this run: those after 11:00 (the 10:00 ones were opened by the hourly run).
    expect(run.opened).toHaveLength(5);
  });

  it('leaves every row as it was when the days are run again (idempotent)', async () => {
    const before = await rows();
    // As the worker runs it: the registry's body with the scope `tidemark jobs run --website --date` gives.
    const again = (await findJob('anomalies')!.run(job, { websiteId: site, date: '2026-11-05' })) as { opened: [] };
    expect(again.opened).toEqual([]);
    await detectAnomalies(job, { websiteId: site, date: '2026-11-04' }, LATER);
    await detectAnomalies(job, {}, SPIKE + HOUR + 7 * 60_000);
    expect(await rows()).toEqual(before);
  });

  it('keeps a metric to one open anomaly, extended while outside the band', async () => {
    // Wipe and judge only 10:00 and 11:00: the second hour extends the first's anomaly, none is resolved.
    await ctx.pool.query('DELETE FROM anomalies WHERE website_id = $1', [site]);
    await detectForWebsite(ctx.pool, ctx.clickhouse, site, [SPIKE]);
    await detectForWebsite(ctx.pool, ctx.clickhouse, site, [SPIKE2]);
    const open = await ctx.pool.query<{ metric_name: string; n: string }>(
      'SELECT metric_name, count(*) AS n FROM anomalies WHERE website_id = $1 AND NOT is_resolved GROUP BY 1 ORDER BY 1',
      [site],
    );
    expect(open.rows).toEqual([
      { metric_name: 'goal_conversions', n: '1' },
      { metric_name: 'pageviews', n: '1' },
      { metric_name: 'visitors', n: '1' },
    ]);
  });
});
