// The nightly insights job on the hand-built website of test/helpers/insightsFixture.ts, for Wednesday 18
// November 2026: the week 12–18 Nov against 5–11 Nov. Expected insights worked out beside each assertion.
import { main } from '../../../cli/main';
import { insightsJob } from '../../../jobs/insights';
import { insightsFromAnomalies } from '../../../lib/insights/anomalies';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { insertInsightsFixture } from '../../helpers/insightsFixture';

let ctx: TestContext;
let site: string;
const DAY = '2026-11-18';

beforeAll(async () => {
  ctx = await createTestContext();
  const owner = await registerUser(ctx, 'pro', 'insights-job');
  site = (await createWebsite(ctx, owner, 'insights.example.com')).id;
  const goal = await client(ctx.baseUrl)('POST', `/api/websites/${site}/goals`, {
    token: owner.token,
    body: { name: 'Signup' },
  });
  expect(goal.status).toBe(201);

  await insertInsightsFixture(ctx.clickhouse, site, { year: 2026, month: 11, day: 18 });
});

afterAll(() => ctx.close());

const job = (scope: { websiteId?: string; date?: string }) => insightsJob(ctx, scope);

async function stored() {
  const { rows } = await ctx.pool.query(
    `SELECT id, key, type, rule, severity, title, description, metric_name, metric_value, metric_change,
            recommendation, as_of::text AS as_of, anomaly_id, details, created_at
     FROM insights WHERE website_id = $1 ORDER BY key`,
    [site],
  );
  return rows;
}

describe('the nightly insights job', () => {
  it('writes exactly the trends, recommendations and forecast the data calls for', async () => {
    const run = await job({ websiteId: site, date: DAY });
    expect(run).toEqual({ websites: 1, insights: 9, anomalyInsights: 0 });
    const rows = await stored();
    expect(rows.map((r) => r.key)).toEqual([
      'prediction:month_visitors:visitors:2026-11',
      // /promo: 100 visits, all bounces, against the site's 50 % (100 of 200 visits)
      'recommendation:landing_page_bounce:/promo:2026-11-16',
      // 30 of /pricing's 100 visitors: 30 %, critical
      'recommendation:page_errors:/pricing:2026-11-16',
      // Newsletter: 0 → 100 visitors, none converted, 25 expected at the site's 50 / 200
      'recommendation:source_not_converting:Newsletter:2026-11-16',
      'trend:country_visitors:DE:2026-11-16', // 0 → 100
      'trend:page_visitors:/promo:2026-11-16', // 0 → 100
      'trend:site_pageviews::2026-11-16', // 200 → 300: +50 %, z = 100/√500 = 4.47
      'trend:site_visitors::2026-11-16', // 100 → 200: +100 %, z = 100/√300 = 5.77
      'trend:source_visitors:Newsletter:2026-11-16', // 0 → 100
      // (bounce rate 0 % → 50 %: no percent change from zero, so no trend; US, /, /pricing, Direct: flat)
    ]);
    const by = (rule: string) => rows.find((r) => r.rule === rule);
    expect(by('site_visitors')).toMatchObject({
      severity: 'info',
      title: 'Visitors up 100% week over week',
      metric_value: 200,
      metric_change: 100,
      as_of: DAY,
      created_at: new Date('2026-11-19T00:00:00Z'),
    });
    expect(by('page_errors')).toMatchObject({ severity: 'critical', metric_value: 30, metric_change: null });
    expect(by('page_errors').description).toContain(
      "30 of the 100 visitors of /pricing in the 7 days to 2026-11-18 (30%) saw a JavaScript error there, 35 errors in all. The most widespread: TypeError: Cannot read properties of undefined (reading 'price')",
    );
    expect(by('landing_page_bounce')).toMatchObject({ metric_value: 100, metric_change: 100 });
    expect(by('source_not_converting')).toMatchObject({ severity: 'warning', metric_value: 100 });
    expect(by('source_not_converting').description).toContain(
      'but none of them completed the goal Signup, against 25% across the site: about 25 were to be expected',
    );
    expect(by('country_visitors').title).toBe('New country: Germany brought 100 visitors');
    // 1–18 Nov: 300 visitors, each on one day; October had none.
    const p = by('month_visitors');
    expect(p.description).toContain('From 300 visitors in the first 18 days');
    expect(p.description).toContain('October had none to compare with.');
    expect(p.metric_change).toBeNull();
    expect(p.metric_value).toBeGreaterThan(300);
    expect(p.details.lower).toBeGreaterThanOrEqual(300);
    expect(p.details.upper).toBeGreaterThanOrEqual(p.metric_value);
  });

  it('a re-run for the same day leaves identical rows (same ids, same times)', async () => {
    const before = await stored();
    await job({ websiteId: site, date: DAY });
    expect(await stored()).toEqual(before);
  });

  it('a run for an earlier day of the same week does not take the later day’s insights back', async () => {
    const later = (await stored()).filter((r) => r.as_of === DAY);
    await job({ websiteId: site, date: '2026-11-17' });
    const now = await stored();
    for (const r of later) expect(now.find((x) => x.key === r.key)).toEqual(r);
  });

  it('an ignored error group no longer produces its recommendation', async () => {
    await ctx.pool.query(
      `INSERT INTO error_groups (website_id, fingerprint, message, type, status, occurrence_count, first_seen_at,
         last_seen_at, affected_users_count)
       VALUES ($1, 'fp-price', 'x', 'TypeError', 'ignored', 30, now(), now(), 30)`,
      [site],
    );
    await job({ websiteId: site, date: DAY });
    expect((await stored()).map((r) => r.key)).not.toContain('recommendation:page_errors:/pricing:2026-11-16');
    await ctx.pool.query(`DELETE FROM error_groups WHERE website_id = $1`, [site]);
    await job({ websiteId: site, date: DAY });
    expect((await stored()).map((r) => r.key)).toContain('recommendation:page_errors:/pricing:2026-11-16');
  });

  it('runs through `tidemark jobs run insights` for a range of days, the same rows as the job', async () => {
    const before = await stored();
    const io = captureIo();
    expect(
      await main(['jobs', 'run', 'insights', '--website', site, '--from', '2026-11-17', '--to', DAY], io, cliEnv(ctx)),
    ).toBe(0);
    expect(io.stdout[0]).toMatch(/^\[1\/2\] insights 2026-11-17, website .*: ok in .*"insights":/);
    expect(io.stdout[1]).toMatch(
      /^\[2\/2\] insights 2026-11-18, website .*: ok in .*\{"websites":1,"insights":9,"anomalyInsights":0\}$/,
    );
    expect(await stored()).toEqual(before);
  });

  it('works in the website’s time zone: New York’s 18 November ends at 05:00 UTC', async () => {
    const owner = await registerUser(ctx, 'pro', 'insights-ny');
    const created = await client(ctx.baseUrl)('POST', '/api/websites', {
      token: owner.token,
      body: { domain: 'ny.example.com', name: 'NY', timezone: 'America/New_York' },
    });
    const ny = created.body.data.website.id;
    // The fixture's events are at 10:00–12:00 UTC, 05:00–07:00 in New York: the same days.
    await insertInsightsFixture(ctx.clickhouse, ny, { year: 2026, month: 11, day: 18 });
    await job({ websiteId: ny, date: DAY });
    const { rows } = await ctx.pool.query(
      'SELECT DISTINCT created_at, as_of::text AS as_of FROM insights WHERE website_id = $1',
      [ny],
    );
    expect(rows).toEqual([{ created_at: new Date('2026-11-19T05:00:00Z'), as_of: DAY }]);
    const keys = (await ctx.pool.query('SELECT key FROM insights WHERE website_id = $1 ORDER BY key', [ny])).rows;
    // No goal on this website: the conversion rule has nothing to say; everything else is as in UTC.
    expect(keys.map((r) => r.key)).toEqual(
      (await stored()).map((r) => r.key).filter((k) => !k.startsWith('recommendation:source_not_converting')),
    );
  });

  it('an unknown website in the scope is an error', async () => {
    await expect(job({ websiteId: '00000000-0000-4000-8000-000000000000', date: DAY })).rejects.toThrow(/not found/);
    await expect(job({ websiteId: site, date: '2026-13-01' })).rejects.toThrow(/YYYY-MM-DD/);
  });
});

describe('anomaly insights', () => {
  it('one insight per anomaly, written once, rewritten when the anomaly’s figures change', async () => {
    const note = await ctx.pool.query(
      `INSERT INTO annotations (website_id, team_id, type, message, occurred_at)
       SELECT id, team_id, 'deploy', 'Deploy v2.3', '2026-11-18T13:30:00Z' FROM websites WHERE id = $1 RETURNING id`,
      [site],
    );
    const { rows } = await ctx.pool.query(
      `INSERT INTO anomalies (website_id, metric_name, expected_value, actual_value, deviation_percentage, severity,
         started_at, last_seen_at, detected_at, suspect_annotation_ids)
       VALUES ($1, 'visitors', 100, 350, 250, 'critical', '2026-11-18T14:00:00Z', '2026-11-18T14:00:00Z',
         '2026-11-18T15:05:00Z', ARRAY[$2::uuid]) RETURNING id`,
      [site, note.rows[0].id],
    );
    const anomaly = rows[0].id;
    expect(await insightsFromAnomalies(ctx.pool, site)).toBe(1);
    expect(await insightsFromAnomalies(ctx.pool, site)).toBe(0);
    expect(await insightsFromAnomalies(ctx.pool)).toBe(0);
    const mine = async () =>
      (await ctx.pool.query('SELECT * FROM insights WHERE anomaly_id = $1', [anomaly])).rows as Record<
        string,
        unknown
      >[];
    const [first, ...more] = await mine();
    expect(more).toEqual([]);
    expect(first).toMatchObject({
      type: 'anomaly',
      severity: 'critical',
      title: 'Visitors 250% above normal',
      metric_name: 'visitors',
      metric_value: 350,
      metric_change: 250,
      created_at: new Date('2026-11-18T15:05:00Z'),
    });
    expect(first.description).toBe(
      'In the hour from 2026-11-18 14:00 (UTC) there were 350 visitors against the 100 expected from the same hour of previous weeks (+250%). Changes noted within two hours of it: “Deploy v2.3”.',
    );
    expect(first.recommendation).toMatch(/^Start with the annotated changes near that hour\. Check Sources/);

    // The nightly job leaves it as it is; the hourly job raising the anomaly's severity rewrites it in place.
    await job({ websiteId: site, date: DAY });
    expect(await mine()).toEqual([first]);
    await ctx.pool.query(`UPDATE anomalies SET actual_value = 420, deviation_percentage = 320 WHERE id = $1`, [
      anomaly,
    ]);
    expect(await insightsFromAnomalies(ctx.pool, site)).toBe(1);
    const [after, ...none] = await mine();
    expect(none).toEqual([]);
    expect(after).toMatchObject({ id: first.id, metric_value: 420, title: 'Visitors 320% above normal' });
  });
});
