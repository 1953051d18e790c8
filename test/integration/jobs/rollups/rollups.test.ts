// Daily rollups: the query model gives the same numbers with and without them (every dimension and metric,
// across a DST change, with visits that run past midnight), reads them when they exist, and the job computes
// only closed days, once.
import { randomUUID } from 'node:crypto';
import { main } from '../../../../cli/main';
import { rollupDaily } from '../../../../jobs/rollupDaily';
import { computeRollups } from '../../../../jobs/rollups/compute';
import { dropSuperseded } from '../../../../jobs/rollups/versions';
import { lastClosedDay, rollUpWebsite } from '../../../../jobs/rollups/website';
import { computeWindow } from '../../../../jobs/rollups/windows';
import { selectRows } from '../../../../lib/clickhouse/client';
import { analyticsOverview, topPages } from '../../../../lib/external/analytics';
import type { EventRow } from '../../../../lib/ingest/job/rows';
import { createLogger } from '../../../../lib/log';
import {
  COVERAGE_MEMORY_MS,
  IDLE_MS,
  MARK_MARGIN_MS,
  MARKS_MEMORY_MS,
  RAW_TAIL_MS,
  rollupCoverage,
  SETTLE_MS,
  staleDays,
  windowRun,
} from '../../../../lib/stats/coverage';
import type { Dimension, ModelMetric, StatsRow } from '../../../../lib/stats/model';
import type { Filter } from '../../../../lib/stats/params';
import { rollupPlan, runEventBreakdowns, runStats } from '../../../../lib/stats/run';
import { addDays, formatDate, parseDate, startOfDay, today } from '../../../../lib/stats/time';
import { createWebsite, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

// Each comparison asks a few hundred questions twice; on a busy 2-core machine one test can take a minute.
jest.setTimeout(120_000);

const TZ = 'Europe/Berlin';
let ctx: TestContext;
let site: string;

/** The process clock runs this far ahead (the rollup module's memories of coverage and marks expire). */
let clockSkew = 0;
const realNow = Date.now.bind(Date);
function advanceClock(ms: number) {
  clockSkew += ms;
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + clockSkew);
}

/**
 * Fixtures are inserted moments before the days they fill are rolled up, and all of them long after their ts:
 * each insert leaves late marks that would make those days read raw. Real days get their events as they
 * happen; this drops the marks, as if the fixture had.
 */
async function arrivedInTime(websiteId: string) {
  await ctx.clickhouse.command({
    query: 'DELETE FROM late_marks WHERE website_id = {w:UUID}',
    query_params: { w: websiteId },
  });
}

/** A small deterministic generator (mulberry32). */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** ~300 visits of 40 visitors from 20 March to 5 April 2026 (DST on the 29th), some across midnight. */
function generate(websiteId: string): EventRow[] {
  const rand = prng(42);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const rows: EventRow[] = [];
  const start = Date.parse('2026-03-20T00:00:00Z');
  for (let i = 0; i < 300; i++) {
    const visitor = `v${Math.floor(rand() * 40)}`;
    const session = `s${i}`;
    // Late-evening starts are common so that visits cross local midnight.
    const t0 =
      start +
      Math.floor(rand() * 16) * 86_400_000 +
      (rand() < 0.3 ? 21.5 * 3600_000 + rand() * 3 * 3600_000 : rand() * 86_400_000);
    const common = {
      visitor_id: visitor,
      session_id: session,
      country_code: pick(['DE', 'US', 'FR', '']),
      browser: pick(['Chrome', 'Firefox', 'Safari']),
      device_type: pick(['desktop', 'mobile']),
      os: pick(['Linux', 'iOS', 'Windows']),
      source_name: pick(['Google', 'Direct / None', 'Twitter']),
      utm_source: pick(['', 'newsletter']),
      utm_medium: pick(['', 'email']),
      utm_campaign: pick(['', 'spring']),
    };
    const steps = 1 + Math.floor(rand() * 4);
    // Some visits change country or browser after their first pageview (a server session spanning two
    // clients): filters, breakdowns and metrics all count them under the visit's first values.
    const mixed = rand() < 0.2;
    let t = t0;
    for (let k = 0; k < steps; k++) {
      const switched =
        mixed && k > 0 ? { country_code: pick(['DE', 'US', 'FR']), browser: pick(['Chrome', 'Safari']) } : {};
      // A pageview after the first is reached from inside the site: stored with no source or utm values of its own.
      const inside = k > 0 ? { source_name: 'Direct / None', utm_source: '', utm_medium: '', utm_campaign: '' } : {};
      rows.push(
        eventRow(websiteId, {
          ...common,
          ...switched,
          ...inside,
          pathname: pick(['/', '/a', '/b', '/c', '/pricing']),
          ts: new Date(t).toISOString(),
        }),
      );
      t += Math.floor(rand() * 20 * 60_000);
    }
    const extra = rand();
    if (extra < 0.2)
      rows.push(
        eventRow(websiteId, {
          ...common,
          type: 'event',
          name: 'Signup',
          pathname: '',
          source_name: '',
          ts: new Date(t).toISOString(),
        }),
      );
    else if (extra < 0.35)
      rows.push(
        eventRow(websiteId, {
          ...common,
          type: 'engagement',
          engagement_ms: Math.floor(rand() * 300_000),
          ts: new Date(t).toISOString(),
        }),
      );
    else if (extra < 0.45)
      rows.push(eventRow(websiteId, { ...common, type: 'goal', name: 'Trial', ts: new Date(t).toISOString() }));
    else if (extra < 0.5)
      rows.push(eventRow(websiteId, { ...common, type: 'identify', ts: new Date(t).toISOString() }));
    else if (extra < 0.55)
      rows.push(
        eventRow(websiteId, {
          ...common,
          type: 'purchase',
          revenue: 20,
          props: '{"status":"succeeded"}',
          ts: new Date(t).toISOString(),
        }),
      );
  }
  return rows;
}

const METRICS: ModelMetric[] = [
  'visitors',
  'pageviews',
  'events',
  'visits',
  'visit_duration',
  'bounce_rate',
  'value_score',
];
const DIMENSIONS: (Dimension | undefined)[] = [
  undefined,
  'time:day',
  'time:month',
  'page',
  'country',
  'device',
  'browser',
  'os',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'entry_page',
  'exit_page',
];
/** Filters on attributes alone read closed days from rollups; with another key, the whole range raw (visit keys find closed days' visits in visit_values). */
const FILTER_SETS: Filter[][] = [
  [{ key: 'country', operator: 'is', values: ['DE', 'US'] }],
  [
    { key: 'country', operator: 'is', values: ['DE'] },
    { key: 'browser', operator: 'is_not', values: ['Safari'] },
  ],
  [
    { key: 'device', operator: 'is', values: ['mobile'] },
    { key: 'os', operator: 'contains', values: ['IO'] },
    { key: 'country', operator: 'is_not', values: [''] },
  ],
  [
    { key: 'country', operator: 'is', values: ['FR'] },
    { key: 'source', operator: 'is', values: ['Google'] },
  ],
  // Visit keys: closed days' sessions come from visit_values, the rest of the range is folded.
  [
    { key: 'utm_campaign', operator: 'is_not', values: ['spring'] },
    { key: 'source', operator: 'contains', values: ['GOO', 'twit'] },
  ],
];
const FILTERED_DIMENSIONS: (Dimension | undefined)[] = [undefined, 'time:day', 'time:month', 'page'];

const RANGES: [string, string][] = [
  ['2026-03-20', '2026-04-05'], // everything
  ['2026-03-27', '2026-04-02'], // a week around the DST change
  ['2026-03-29', '2026-03-29'], // the 23-hour day
  ['2026-03-25', '2026-04-12'], // runs past the rolled-up days
];

/** Each question whose answer differs, with both answers (a readable failure instead of one huge diff). */
function differences(actual: Record<string, StatsRow[]>, expected: Record<string, StatsRow[]>): string[] {
  return Object.keys(expected)
    .filter((k) => JSON.stringify(actual[k]) !== JSON.stringify(expected[k]))
    .map((k) => `${k}\n  got      ${JSON.stringify(actual[k])}\n  expected ${JSON.stringify(expected[k])}`);
}

const sorted = (rows: StatsRow[]) => [...rows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

interface Questions {
  websiteId: string;
  ranges: [string, string][];
  dimensions: (Dimension | undefined)[];
  filterSets: Filter[][];
  filteredDimensions: (Dimension | undefined)[];
}
const ALL_QUESTIONS = (): Questions => ({
  websiteId: site,
  ranges: RANGES,
  dimensions: DIMENSIONS,
  filterSets: FILTER_SETS,
  filteredDimensions: FILTERED_DIMENSIONS,
});

async function answers(questions: Questions = ALL_QUESTIONS()): Promise<Record<string, StatsRow[]>> {
  const { websiteId: site, ranges, dimensions, filterSets, filteredDimensions } = questions;
  const out: Record<string, StatsRow[]> = {};
  for (const [from, to] of ranges) {
    const start = startOfDay(parseDate(from)!, TZ);
    const end = startOfDay(addDays(parseDate(to)!, 1), TZ);
    for (const dimension of dimensions) {
      const q = { websiteId: site, timeZone: TZ, start, end, metrics: METRICS, filters: [], dimension };
      const rows = sorted(await runStats(ctx.clickhouse, q));
      out[`${from}..${to} ${dimension ?? 'total'}`] = rows;
      // Asking for some of a breakdown's values only: the rollup reads restricted to them agree too.
      if (dimension && !dimension.startsWith('time:') && rows.length > 1) {
        const keys = rows.filter((_, i) => i % 2 === 0).map((r) => r.key);
        out[`${from}..${to} ${dimension} keys`] = sorted(await runStats(ctx.clickhouse, { ...q, keys }));
      }
    }
    for (const [i, filters] of filterSets.entries()) {
      for (const dimension of filteredDimensions) {
        const rows = sorted(
          await runStats(ctx.clickhouse, {
            websiteId: site,
            timeZone: TZ,
            start,
            end,
            metrics: METRICS,
            filters,
            dimension,
          }),
        );
        out[`${from}..${to} filters ${i} ${dimension ?? 'total'}`] = rows;
      }
      // Day rows with the range's total in one read (what the External overview asks for).
      out[`${from}..${to} filters ${i} days with total`] = sorted(
        await runStats(ctx.clickhouse, {
          websiteId: site,
          timeZone: TZ,
          start,
          end,
          metrics: METRICS,
          filters,
          dimension: 'time:day',
          total: true,
        }),
      );
    }
    const shared = await runEventBreakdowns(
      ctx.clickhouse,
      { websiteId: site, timeZone: TZ, start, end, filters: [] },
      ['device', 'browser', 'os', 'country', 'source', 'utm_campaign'],
    );
    for (const [d, list] of Object.entries(shared)) out[`${from}..${to} shared ${d}`] = sorted(list);
  }
  return out;
}

beforeAll(async () => {
  ctx = await createTestContext();
  site = randomUUID();
  await storeRows(ctx.clickhouse, generate(site));
  await arrivedInTime(site);
});
afterAll(() => ctx.close());

describe('daily rollups', () => {
  let raw: Record<string, StatsRow[]>;
  let overviewRaw: Awaited<ReturnType<typeof analyticsOverview>>;
  const overview = () =>
    analyticsOverview(
      ctx.clickhouse,
      { id: site, domain: 'x', name: 'x', timezone: TZ },
      '30d',
      Date.parse('2026-04-07T10:00:00Z'),
    );

  it('refuses rollup rows of the old meaning (a previous version’s job still running during a deploy)', async () => {
    // Migrations 014 and 016: rows without format 3 are refused, so such a job writes no day instead of wrong ones.
    const insert = (format: string) =>
      ctx.clickhouse.command({
        query: `INSERT INTO daily_rollups_v2 (website_id, tz, date, dim, value, version${format ? ', format' : ''}) VALUES ({w:UUID}, 'UTC', '2020-01-01', '_', '', 1${format ? `, ${format}` : ''})`,
        query_params: { w: randomUUID() },
      });
    await expect(insert('')).rejects.toThrow(/constraint/i);
    await expect(insert('2')).rejects.toThrow(/constraint/i);
    await expect(insert('3')).resolves.toBeDefined();
  });

  it('without rollups the model reads raw rows only', async () => {
    expect(await rollupCoverage(ctx.clickhouse, site, TZ)).toBeUndefined();
    expect(
      await rollupPlan(
        ctx.clickhouse,
        site,
        TZ,
        startOfDay(parseDate('2026-03-20')!, TZ),
        startOfDay(parseDate('2026-03-27')!, TZ),
      ),
    ).toBeUndefined();
    raw = await answers();
    overviewRaw = await overview();
    // the fixture is not trivial: several keys with traffic per dimension
    expect(raw['2026-03-20..2026-04-05 page'].length).toBeGreaterThanOrEqual(5);
    expect(raw['2026-03-20..2026-04-05 total'][0].values.visits).toBeGreaterThan(250);
    // one pass for several breakdowns answers what one query per dimension does
    for (const d of ['device', 'browser', 'os', 'country', 'source', 'utm_campaign'] as const) {
      const single = raw[`2026-03-20..2026-04-05 ${d}`].map((r) => ({
        key: r.key,
        values: { visitors: r.values.visitors, pageviews: r.values.pageviews, events: r.values.events },
      }));
      expect(raw[`2026-03-20..2026-04-05 shared ${d}`]).toEqual(single);
    }
    expect(raw['2026-03-20..2026-04-05 shared total'][0].values.visitors).toBe(
      raw['2026-03-20..2026-04-05 total'][0].values.visitors,
    );
  });

  it('gives the same numbers with part of the range rolled up (rollup and raw merged in one query)', async () => {
    await computeRollups(ctx.clickhouse, site, TZ, parseDate('2026-03-22')!, parseDate('2026-03-30')!, { final: true });
    const plan = await rollupPlan(
      ctx.clickhouse,
      site,
      TZ,
      startOfDay(parseDate('2026-03-20')!, TZ),
      startOfDay(parseDate('2026-04-06')!, TZ),
    );
    expect(plan).toEqual({
      firstDay: '2026-03-22',
      lastDay: '2026-03-30',
      rawWindows: [
        { start: startOfDay(parseDate('2026-03-20')!, TZ), end: startOfDay(parseDate('2026-03-22')!, TZ) },
        { start: startOfDay(parseDate('2026-03-31')!, TZ), end: startOfDay(parseDate('2026-04-06')!, TZ) },
      ],
      skipDays: [],
      pinned: [],
      newest: expect.any(Number),
      newestInRange: expect.any(Number),
    });
    expect(differences(await answers(), raw)).toEqual([]);
  });

  it('gives the same numbers when range totals and breakdowns come from merged windows (sketches and sums)', async () => {
    // the rolled-up part of each range in answers()
    for (const [first, last] of [
      ['2026-03-22', '2026-03-30'],
      ['2026-03-27', '2026-03-30'],
      ['2026-03-29', '2026-03-29'],
      ['2026-03-25', '2026-03-30'],
    ]) {
      await computeWindow(
        ctx.clickhouse,
        site,
        TZ,
        parseDate(first)!,
        parseDate(last)!,
        (await rollupCoverage(ctx.clickhouse, site, TZ))!,
      );
      expect(await windowRun(ctx.clickhouse, site, TZ, first, last, 0)).toMatch(/^[1-9]\d*$/);
    }
    expect(await windowRun(ctx.clickhouse, site, TZ, '2026-03-22', '2026-03-29', 0)).toBeUndefined();
    // A window made before a newer version of one of its days is not read.
    expect(
      await windowRun(ctx.clickhouse, site, TZ, '2026-03-22', '2026-03-30', Date.now() + 3600_000),
    ).toBeUndefined();
    expect(differences(await answers(), raw)).toEqual([]);
    // Made again for the same days (as after one of them is rolled up again), a window is stored twice until
    // its older run expires: readers read one run, or every sum would count twice.
    await computeWindow(
      ctx.clickhouse,
      site,
      TZ,
      parseDate('2026-03-22')!,
      parseDate('2026-03-30')!,
      (await rollupCoverage(ctx.clickhouse, site, TZ))!,
    );
    const runs = await selectRows<{ n: string }>(
      ctx.clickhouse,
      `SELECT toString(count(DISTINCT run)) AS n FROM window_rollups_v2 WHERE website_id = {w:UUID} AND first = '2026-03-22' AND last = '2026-03-30' AND dim = 'attrs'`,
      { w: site },
    );
    expect(runs).toEqual([{ n: '2' }]);
    expect(differences(await answers(), raw)).toEqual([]);
  });

  it('the job rolls up only closed days, backfilling from the first event, and is idempotent', async () => {
    const now = Date.parse('2026-04-08T10:00:00Z'); // 04-06 ended 2026-04-06T22:00Z; +26 h = 04-08 00:00Z
    expect(formatDate(lastClosedDay(TZ, now))).toBe('2026-04-06');
    expect(formatDate(lastClosedDay(TZ, Date.parse('2026-04-07T23:59:00Z')))).toBe('2026-04-05');
    // The partial rollup above is extended from its last day, not recomputed: 31 March to 6 April for good,
    // 7 April (ended 22:00Z, quiet) provisionally.
    expect((await rollUpWebsite(ctx.clickhouse, { id: site, timezone: TZ }, now)).days).toBe(8);
    expect((await rollUpWebsite(ctx.clickhouse, { id: site, timezone: TZ }, now)).days).toBe(0);
    const coverage = await rollupCoverage(ctx.clickhouse, site, TZ);
    expect(coverage && [formatDate(coverage.first), formatDate(coverage.last)]).toEqual(['2026-03-22', '2026-04-07']);
    expect([coverage?.days.get('2026-04-06')?.final, coverage?.days.get('2026-04-07')?.final]).toEqual([true, false]);
    // the standard ranges ending "today" (8 April) got their merged sketches: 7 days from 2 April, the rest
    // from the first rolled-up day
    expect(await windowRun(ctx.clickhouse, site, TZ, '2026-04-02', '2026-04-07', coverage!.newest)).toBeDefined();
    expect(await windowRun(ctx.clickhouse, site, TZ, '2026-03-22', '2026-04-07', coverage!.newest)).toBeDefined();
    expect(differences(await answers(), raw)).toEqual([]);
    // by day from the days' own counts, the range total from the window: the same as all raw
    expect(await overview()).toEqual(overviewRaw);
  });

  it('the scheduled job backfills a website from its first event and then only adds newly closed days', async () => {
    const user = await registerUser(ctx, 'pro', 'rollups');
    const w = await createWebsite(ctx, user, 'rollups.example.com');
    await ctx.pool.query('UPDATE websites SET timezone = $2 WHERE id = $1', [w.id, 'America/New_York']);
    await storeRows(ctx.clickhouse, [
      eventRow(w.id, { visitor_id: 'x', session_id: 'x1', ts: '2026-04-01T15:00:00Z' }),
      eventRow(w.id, { visitor_id: 'y', session_id: 'y1', ts: '2026-04-03T15:00:00Z' }),
    ]);
    await arrivedInTime(w.id);
    const logger = createLogger('silent', 'test');
    // New York's 6 April ends at 04:00Z on the 7th; it closes 26 h later.
    const first = await rollupDaily(ctx.pool, ctx.clickhouse, logger, Date.parse('2026-04-08T06:00:00Z'));
    expect(first).toEqual({ websites: 1, days: 7, pending: 0 }); // 1 to 6 April, and 7 April provisionally
    const coverage = await rollupCoverage(ctx.clickhouse, w.id, 'America/New_York');
    expect(coverage && [formatDate(coverage.first), formatDate(coverage.last)]).toEqual(['2026-04-01', '2026-04-07']);
    // A filtered question reads the rollups alone, and still counts the visit.
    const aprilFirst = {
      websiteId: w.id,
      timeZone: 'America/New_York',
      start: startOfDay(parseDate('2026-04-01')!, 'America/New_York'),
      end: startOfDay(parseDate('2026-04-02')!, 'America/New_York'),
    };
    expect(
      (await rollupPlan(ctx.clickhouse, aprilFirst.websiteId, aprilFirst.timeZone, aprilFirst.start, aprilFirst.end))
        ?.rawWindows,
    ).toEqual([]);
    const [day] = await runStats(ctx.clickhouse, {
      ...aprilFirst,
      metrics: ['visits', 'pageviews'],
      filters: [{ key: 'country', operator: 'is_not', values: ['ZZ'] }],
    });
    expect(day.values).toEqual({ visits: 1, pageviews: 1 });
    expect(await rollupDaily(ctx.pool, ctx.clickhouse, logger, Date.parse('2026-04-08T06:00:00Z'))).toEqual({
      websites: 1,
      days: 0,
      pending: 0,
    });
    // a second pass while one holds the lock is skipped, not run twice over the same days
    const holder = await ctx.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(727002)');
      expect(await rollupDaily(ctx.pool, ctx.clickhouse, logger, Date.parse('2026-04-09T06:00:00Z'))).toEqual({
        websites: 0,
        days: 0,
        pending: 0,
        skipped: true,
      });
    } finally {
      await holder.query('SELECT pg_advisory_unlock(727002)');
      holder.release();
    }
    // 7 April closes (again, for good) and 8 April is rolled up provisionally.
    expect(await rollupDaily(ctx.pool, ctx.clickhouse, logger, Date.parse('2026-04-09T06:00:00Z'))).toEqual({
      websites: 1,
      days: 2,
      pending: 0,
    });
    expect((await rollupCoverage(ctx.clickhouse, w.id, 'America/New_York'))?.days.get('2026-04-07')).toMatchObject({
      final: true,
      superseded: true,
    });
  });

  it('`tidemark rollup` brings every website up to its last closed day at once', async () => {
    const lines: string[] = [];
    const io = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(t), stdin: async () => '' };
    const c = ctx.config;
    const env = {
      DATABASE_URL: c.DATABASE_URL,
      CLICKHOUSE_URL: c.CLICKHOUSE_URL,
      CLICKHOUSE_PASSWORD: c.CLICKHOUSE_PASSWORD,
      CLICKHOUSE_DATABASE: c.CLICKHOUSE_DATABASE,
      REDIS_PREFIX: c.REDIS_PREFIX,
      DATA_DIR: c.DATA_DIR,
      JWT_SECRET: c.JWT_SECRET,
      LOG_LEVEL: 'silent',
    };
    expect(await main(['rollup'], io, env)).toBe(0);
    expect(lines.join('\n')).toMatch(/^1 website\(s\) up to date; \d+ day\(s\) rolled up$/);
    const { rows } = await ctx.pool.query<{ id: string; timezone: string }>('SELECT id, timezone FROM websites');
    const coverage = await rollupCoverage(ctx.clickhouse, rows[0].id, rows[0].timezone);
    // Up to the last day that ended SETTLE_MS ago (nothing happened since the fixtures' April).
    const now = Date.now();
    let settled = addDays(today(rows[0].timezone, now), -1);
    while (startOfDay(addDays(settled, 1), rows[0].timezone) + SETTLE_MS > now) settled = addDays(settled, -1);
    expect(coverage && formatDate(coverage.last)).toBe(formatDate(settled));
    // more than one run's worth of days: the command looped until done
    expect(Number(/; (\d+) day/.exec(lines[0])![1])).toBeGreaterThan(62);
    // ...and then merged the rollup tables: one part per partition (several runs wrote each month).
    const parts = await selectRows<{ table: string; partition: string; n: string }>(
      ctx.clickhouse,
      `SELECT table, partition, toString(count()) AS n FROM system.parts
       WHERE active AND database = currentDatabase() AND table IN ('daily_rollups_v2', 'window_rollups_v2') GROUP BY table, partition`,
      {},
    );
    expect(parts.filter((p) => p.table === 'daily_rollups_v2').length).toBeGreaterThan(1);
    expect(parts.filter((p) => p.n !== '1')).toEqual([]);
    // Later writes are merged by the tables' own settings (migration 010).
    const [table] = await selectRows<{ q: string }>(
      ctx.clickhouse,
      `SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'daily_rollups_v2'`,
      {},
    );
    expect(table.q).toContain('min_age_to_force_merge_seconds = 21600');
  });

  it('reads the rollups: raw rows of a rolled-up day no longer matter, while the raw tail still does', async () => {
    const window = { start: startOfDay(parseDate('2026-03-24')!, TZ), end: startOfDay(parseDate('2026-03-25')!, TZ) };
    const before = await analyticsOverview(
      ctx.clickhouse,
      { id: site, domain: 'x', name: 'x', timezone: TZ },
      '30d',
      Date.parse('2026-04-10T10:00:00Z'),
    );
    const pagesBefore = await topPages(
      ctx.clickhouse,
      { id: site, domain: 'x', name: 'x', timezone: TZ },
      '30d',
      20,
      Date.parse('2026-04-10T10:00:00Z'),
    );
    const range = {
      websiteId: site,
      timeZone: TZ,
      start: startOfDay(parseDate('2026-03-20')!, TZ),
      end: startOfDay(parseDate('2026-04-06')!, TZ),
      metrics: METRICS,
    };
    const onAttributes = () => runStats(ctx.clickhouse, { ...range, filters: FILTER_SETS[1] });
    const onSource = () => runStats(ctx.clickhouse, { ...range, filters: FILTER_SETS[3] });
    const [attributesBefore, sourceBefore] = [await onAttributes(), await onSource()];
    await ctx.clickhouse.command({
      query: `DELETE FROM events WHERE website_id = {w:UUID} AND ts >= {a:DateTime64(3, 'UTC')} AND ts < {b:DateTime64(3, 'UTC')}`,
      query_params: { w: site, a: window.start / 1000, b: window.end / 1000 },
    });
    await ctx.clickhouse.command({
      query:
        "DELETE FROM sessions WHERE website_id = {w:UUID} AND start_ts >= {a:DateTime64(3, 'UTC')} AND start_ts < {b:DateTime64(3, 'UTC')}",
      query_params: { w: site, a: window.start / 1000, b: window.end / 1000 },
    });
    const after = await analyticsOverview(
      ctx.clickhouse,
      { id: site, domain: 'x', name: 'x', timezone: TZ },
      '30d',
      Date.parse('2026-04-10T10:00:00Z'),
    );
    expect(after).toEqual(before);
    // Filtered on attributes alone, rolled-up days come from the rollups; filtered on a source, from raw rows.
    expect(await onAttributes()).toEqual(attributesBefore);
    expect((await onSource())[0].values.pageviews).toBeLessThan(sourceBefore[0].values.pageviews!);
    expect(
      await topPages(
        ctx.clickhouse,
        { id: site, domain: 'x', name: 'x', timezone: TZ },
        '30d',
        20,
        Date.parse('2026-04-10T10:00:00Z'),
      ),
    ).toEqual(pagesBefore);
    // 7 April is rolled up provisionally: a pageview landing there late leaves a late mark, and shows as soon
    // as readers look at the marks again (they remember them for a few seconds).
    await storeRows(ctx.clickhouse, [
      eventRow(site, { visitor_id: 'late', session_id: 'late-1', pathname: '/late', ts: '2026-04-07T12:00:00Z' }),
    ]);
    advanceClock(MARKS_MEMORY_MS);
    const withLate = await analyticsOverview(
      ctx.clickhouse,
      { id: site, domain: 'x', name: 'x', timezone: TZ },
      '30d',
      Date.parse('2026-04-10T10:00:00Z'),
    );
    expect(withLate.summary.total_page_views).toBe(before.summary.total_page_views + 1);
    expect(withLate.daily_stats.find((d) => d.date === '2026-04-07')).toMatchObject({
      total_visitors: 1,
      unique_visitors: 1,
      page_views: 1,
    });
  });
});

describe('provisional rollups', () => {
  // One website is rolled up, its mirror (the same rows under another id) never is: the mirror's raw answers
  // are what the rolled-up website must answer at every step.
  let rolled: string;
  let mirror: string;
  const rolledSite = () => ({ id: rolled, timezone: TZ });
  const questions = (websiteId: string): Questions => ({
    websiteId,
    ranges: [
      ['2026-04-01', '2026-04-05'],
      ['2026-04-05', '2026-04-05'],
    ],
    dimensions: [undefined, 'time:day', 'page', 'country', 'source', 'entry_page'],
    // Attributes (rollup rows) and visit keys (visit_values): both versioned, re-rolled and pinned alike.
    filterSets: [FILTER_SETS[1], FILTER_SETS[4]],
    filteredDimensions: [undefined, 'time:day'],
  });
  const agree = async (ranges?: [string, string][]) => {
    const ask = (websiteId: string) => answers({ ...questions(websiteId), ...(ranges ? { ranges } : {}) });
    expect(differences(await ask(rolled), await ask(mirror))).toEqual([]);
  };
  const insertBoth = async (rows: (websiteId: string) => EventRow[]) => {
    for (const websiteId of [rolled, mirror]) {
      await storeRows(ctx.clickhouse, rows(websiteId));
    }
  };
  const endOf = (day: string) => startOfDay(addDays(parseDate(day)!, 1), TZ);
  // A visit that begins late on 5 April (local) and goes on past midnight: the day is quiet 36 minutes after it.
  const lastNight = Date.parse('2026-04-05T22:30:00Z');
  const storedVersions = async (day: string) =>
    (
      await selectRows<{ v: string }>(
        ctx.clickhouse,
        `SELECT DISTINCT toString(version) AS v FROM daily_rollups_v2 WHERE website_id = {w:UUID} AND date = {d:Date}`,
        { w: rolled, d: day },
      )
    ).length;

  beforeAll(async () => {
    [rolled, mirror] = [randomUUID(), randomUUID()];
    await insertBoth((websiteId) => [
      ...generate(websiteId),
      ...['2026-04-05T21:50:00Z', '2026-04-05T22:05:00Z', '2026-04-05T22:30:00Z'].map((ts, i) =>
        eventRow(websiteId, {
          visitor_id: 'owl',
          session_id: 'night',
          country_code: 'DE',
          browser: 'Chrome',
          pathname: `/night/${i}`,
          ts,
        }),
      ),
    ]);
    await arrivedInTime(rolled);
  });

  it('rolls a day up soon after it ends, once its visits have gone quiet', async () => {
    // 5 April ended at 22:00Z; 40 minutes later the night visit is still going.
    expect((await rollUpWebsite(ctx.clickhouse, rolledSite(), endOf('2026-04-05') + SETTLE_MS)).days).toBe(16); // 20 March–3 April closed, 4 April provisionally
    expect((await rollUpWebsite(ctx.clickhouse, rolledSite(), lastNight + 30 * 60_000)).days).toBe(0);
    expect((await rollUpWebsite(ctx.clickhouse, rolledSite(), lastNight + IDLE_MS + 60_000)).days).toBe(1);
    const coverage = await rollupCoverage(ctx.clickhouse, rolled, TZ);
    expect(coverage && formatDate(coverage.last)).toBe('2026-04-05');
    expect(coverage?.days.get('2026-04-05')).toMatchObject({ final: false, superseded: false });
    expect(
      await rollupPlan(ctx.clickhouse, rolled, TZ, startOfDay(parseDate('2026-04-05')!, TZ), endOf('2026-04-05')),
    ).toMatchObject({ firstDay: '2026-04-05', rawWindows: [] });
    await agree();
  });

  it('reads a day raw once an event lands late for it, and rolls it up again', async () => {
    await insertBoth((websiteId) => [
      eventRow(websiteId, {
        visitor_id: 'late',
        session_id: 'late-1',
        country_code: 'DE',
        browser: 'Chrome',
        pathname: '/late',
        ts: '2026-04-05T10:00:00Z',
      }),
    ]);
    advanceClock(MARKS_MEMORY_MS);
    expect(
      await rollupPlan(ctx.clickhouse, rolled, TZ, startOfDay(parseDate('2026-04-05')!, TZ), endOf('2026-04-05')),
    ).toBeUndefined();
    await agree();
    // A mark after a day's end concerns the day only as far as its visits could still go on: the night visit's
    // last event and 30 minutes. 4 April's visits were over long before 10:00Z on the 5th.
    const coverage = (await rollupCoverage(ctx.clickhouse, rolled, TZ))!;
    expect(coverage.days.get('2026-04-05')?.reach).toBe(lastNight + 30 * 60_000);
    const markAt = (iso: string) => [{ bucket: Date.parse(iso), marked: coverage.newest + 1 }];
    expect([...staleDays(coverage, markAt('2026-04-05T22:45:00Z'), TZ).keys()]).toEqual(['2026-04-05']);
    expect([...staleDays(coverage, markAt('2026-04-05T23:00:00Z'), TZ).keys()]).toEqual([]);
    expect([...staleDays(coverage, markAt('2026-04-05T10:00:00Z'), TZ).keys()]).toEqual(['2026-04-05']);
    // A run rolls 5 April up again once the mark is MARK_MARGIN_MS old (the store's clock: really waited);
    // both versions are stored until the older one's grace ends.
    expect(await rollUpWebsite(ctx.clickhouse, rolledSite(), lastNight + IDLE_MS + 11 * 60_000)).toEqual({
      days: 0,
      pending: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, MARK_MARGIN_MS + 500));
    expect((await rollUpWebsite(ctx.clickhouse, rolledSite(), lastNight + IDLE_MS + 21 * 60_000)).days).toBe(1);
    expect(await storedVersions('2026-04-05')).toBe(2);
    advanceClock(COVERAGE_MEMORY_MS);
    const plan = await rollupPlan(
      ctx.clickhouse,
      rolled,
      TZ,
      startOfDay(parseDate('2026-04-01')!, TZ),
      endOf('2026-04-05'),
    );
    expect(plan?.pinned.map(([day]) => day)).toEqual(['2026-04-05']);
    expect(plan?.lastDay).toBe('2026-04-05');
    await agree();
    // Superseded versions go once no reader can still hold them.
    expect(
      await dropSuperseded(ctx.clickhouse, rolledSite(), (await rollupCoverage(ctx.clickhouse, rolled, TZ))!, 0),
    ).toBe(1);
    expect(await storedVersions('2026-04-05')).toBe(1);
    advanceClock(COVERAGE_MEMORY_MS);
    expect((await rollupCoverage(ctx.clickhouse, rolled, TZ))?.days.get('2026-04-05')).toMatchObject({
      final: false,
      superseded: false,
    });
    await agree();
  });

  it('a reader that planned before a day was rolled up again reads the version it planned with', async () => {
    await agree(); // remembers a coverage where each day has one version
    // 4 and 5 April close: both are rolled up for good (and the empty 6 April provisionally), while the
    // reader still remembers the older versions: it reads no row newer than what it remembers.
    expect((await rollUpWebsite(ctx.clickhouse, rolledSite(), endOf('2026-04-05') + RAW_TAIL_MS)).days).toBe(3);
    expect(await storedVersions('2026-04-05')).toBe(2);
    await agree();
    advanceClock(COVERAGE_MEMORY_MS);
    const coverage = (await rollupCoverage(ctx.clickhouse, rolled, TZ))!;
    expect(coverage.days.get('2026-04-05')).toMatchObject({ final: true, superseded: true });
    await agree();
    expect(await dropSuperseded(ctx.clickhouse, rolledSite(), coverage, 0)).toBe(2);
    expect(await storedVersions('2026-04-05')).toBe(1);
    expect(await storedVersions('2026-04-04')).toBe(1);
    advanceClock(COVERAGE_MEMORY_MS);
    expect((await rollupCoverage(ctx.clickhouse, rolled, TZ))?.days.get('2026-04-05')).toMatchObject({
      final: true,
      superseded: false,
    });
    await agree();
  });

  it('a day read raw inside a merged window: the window still gives visitors, the other days rows the sums', async () => {
    // The last run (7 April, local) kept the 7 days ending 6 April merged.
    const week: [string, string][] = [['2026-04-01', '2026-04-06']];
    const coverage = (await rollupCoverage(ctx.clickhouse, rolled, TZ))!;
    expect(await windowRun(ctx.clickhouse, rolled, TZ, '2026-04-01', '2026-04-06', coverage.newest)).toBeDefined();
    await agree(week);
    await insertBoth((websiteId) => [
      eventRow(websiteId, {
        visitor_id: 'owl',
        session_id: 'late-2',
        country_code: 'DE',
        browser: 'Chrome',
        pathname: '/late',
        ts: '2026-04-03T10:00:00Z',
      }),
    ]);
    advanceClock(MARKS_MEMORY_MS);
    expect(
      await rollupPlan(ctx.clickhouse, rolled, TZ, startOfDay(parseDate('2026-04-01')!, TZ), endOf('2026-04-06')),
    ).toMatchObject({
      firstDay: '2026-04-01',
      lastDay: '2026-04-06',
      skipDays: ['2026-04-03'],
    });
    await agree(week);
  });
});
