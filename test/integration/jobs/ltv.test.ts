// The lifetime-value job and endpoint on the hand-made purchases of test/helpers/ltvFixture.ts (expected
// values worked out here from the fixture's list).
import { main } from '../../../cli/main';
import { ltvJob } from '../../../jobs/ltv';
import type { JobContext } from '../../../jobs/registry';
import { setRate } from '../../../lib/ltv/rates';
import { createApiKey, registerUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { withDateAt } from '../../helpers/clock';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { LTV_RATES, LTV_ZONE, ltvFixture } from '../../helpers/ltvFixture';
import { storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let job: JobContext;
let call: ReturnType<typeof client>;
let key: string;
let siteId: string;
// Noon UTC on 1 April: 08:00 in New York, whose latest complete day is 31 March.
const NOW = Date.parse('2026-04-01T12:00:00Z');

beforeAll(async () => {
  ctx = await createTestContext();
  job = {
    pool: ctx.pool,
    clickhouse: ctx.clickhouse,
    redis: ctx.redis,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
  };
  call = client(ctx.baseUrl);
  const user = await registerUser(ctx, 'pro', 'ltv');
  const site = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'ltv.example.com', name: 'LTV', timezone: LTV_ZONE },
  });
  siteId = site.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  for (const [currency, rate, date] of LTV_RATES) await setRate(ctx.pool, currency, rate, date);
  await storeRows(ctx.clickhouse, ltvFixture(siteId));
});
afterAll(() => ctx.close());

const ltv = (query: string) =>
  withDateAt(NOW, () => call('GET', `/api/external/v1/revenue/${siteId}/ltv?${query}`, { apiKey: key }));
const cohortRows = async () =>
  (
    await ctx.pool.query(
      `SELECT granularity, to_char(cohort_date, 'YYYY-MM-DD') AS cohort_date, customers, cumulative
       FROM ltv_cohorts WHERE website_id = $1 ORDER BY granularity, cohort_date`,
      [siteId],
    )
  ).rows;
const snapshotRow = async () =>
  (await ctx.pool.query('SELECT * FROM ltv_snapshots WHERE website_id = $1', [siteId])).rows[0];
const periods = (values: number[]) => values.map((v, period) => ({ period, cumulative_revenue_per_customer: v }));
const repeat = (value: number, times: number) => new Array<number>(times).fill(value);

const MONTHLY = [
  { cohort_date: '2025-12-01', customers: 1, periods: periods([60, 75, 75, 105]) },
  // A 150 + B 220 + C 80 in January; A −30 and C −20 in February; B 120 + 10 in March; over 3 customers.
  { cohort_date: '2026-01-01', customers: 3, periods: periods([150, 133.33, 176.67]) },
  { cohort_date: '2026-02-01', customers: 1, periods: periods([40, 40]) },
];
const WEEKLY = [
  {
    cohort_date: '2025-12-15',
    customers: 1,
    periods: periods([...repeat(60, 5), ...repeat(75, 8), ...repeat(105, 3)]),
  },
  // A and B: weeks 0 (+320), 2 (+50), 5 (−30), 8 (+120), 12 (+10), per customer.
  {
    cohort_date: '2026-01-05',
    customers: 2,
    periods: periods([160, 160, 185, 185, 185, 170, 170, 170, 230, 230, 230, 230, 235]),
  },
  { cohort_date: '2026-01-26', customers: 1, periods: periods([80, 80, ...repeat(60, 8)]) },
  { cohort_date: '2026-02-16', customers: 1, periods: periods(repeat(40, 7)) },
];
// 30 days: A 150, B 220, C 60, E 40, G 60 over 5 customers; 90 days: G alone (first purchase by 1 January), 75.
const SUMMARY = { average_ltv_30d: 106, average_ltv_90d: 75, customers_30d: 5, customers_90d: 1 };
const EXCLUDED = { unconverted_purchases: 3, unconverted_currencies: ['EUR', 'GBP'], unattributed_purchases: 1 };

describe('lifetime value', () => {
  it('answers zeros and no cohorts before the job has run', async () => {
    const res = await ltv('');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      currency: 'USD',
      granularity: 'monthly',
      as_of: null,
      cohorts: [],
      summary: { average_ltv_30d: 0, average_ltv_90d: 0, customers_30d: 0, customers_90d: 0 },
      excluded: { unconverted_purchases: 0, unconverted_currencies: [], unattributed_purchases: 0 },
    });
  });

  it('the nightly run computes the hand-worked grid as of the latest complete local day', async () => {
    await expect(ltvJob(job, {}, NOW)).resolves.toEqual({ websites: 1 });
    const res = await ltv('range=1y');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      currency: 'USD',
      granularity: 'monthly',
      as_of: '2026-03-31',
      cohorts: MONTHLY,
      summary: SUMMARY,
      excluded: EXCLUDED,
    });
    const weekly = await ltv('range=1y&granularity=weekly');
    expect(weekly.body.data.cohorts).toEqual(WEEKLY);
  });

  it('the default range (90d) keeps the cohorts whose week or month overlaps it', async () => {
    // 90 days ending 1 April (New York): from 2 January, so January's month and the week of 29 December on.
    const monthly = await ltv('');
    expect(monthly.body.data.cohorts).toEqual(MONTHLY.slice(1));
    expect(monthly.body.data.summary).toEqual(SUMMARY);
    const weekly = await ltv('granularity=weekly');
    expect(weekly.body.data.cohorts).toEqual(WEEKLY.slice(1));
  });

  it('a re-run for the same day writes identical rows; a past day gives that day’s snapshot', async () => {
    const before = await cohortRows();
    const snapshot = await snapshotRow();
    await ltvJob(job, { websiteId: siteId, date: '2026-03-31' }, NOW + 86_400_000);
    expect(await cohortRows()).toEqual(before);
    expect({ ...(await snapshotRow()), computed_at: null }).toEqual({ ...snapshot, computed_at: null });
    // The same through `tidemark jobs run`.
    const io = captureIo();
    expect(await main(['jobs', 'run', 'ltv', '--website', siteId, '--date', '2026-03-31'], io, cliEnv(ctx))).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/ltv .*: ok in .*\{"websites":1\}/);
    expect(await cohortRows()).toEqual(before);

    // As of 31 January: A (100, 50), B (220), C (80, local 31 January) and G; nothing of February on.
    await ltvJob(job, { websiteId: siteId, date: '2026-01-31' }, NOW);
    const rows = await cohortRows();
    expect(rows.filter((r) => r.granularity === 'monthly')).toEqual([
      { granularity: 'monthly', cohort_date: '2025-12-01', customers: 1, cumulative: [60, 75] },
      { granularity: 'monthly', cohort_date: '2026-01-01', customers: 3, cumulative: [150] },
    ]);
    // A day that has not ended in the website's zone (08:00 on 1 April in New York), or no date at all.
    await expect(ltvJob(job, { websiteId: siteId, date: '2026-04-01' }, NOW)).rejects.toThrow(
      /2026-04-01 is not a complete day yet in America\/New_York/,
    );
    await expect(ltvJob(job, { websiteId: siteId, date: '2026-02-30' }, NOW)).rejects.toThrow(/YYYY-MM-DD/);
    // Put back the latest snapshot for the tests after this one: two runs at once end in the same rows.
    await Promise.all([ltvJob(job, {}, NOW), ltvJob(job, { websiteId: siteId }, NOW)]);
    expect(await cohortRows()).toEqual(before);
  });

  it('converts into a website currency other than USD through cross rates', async () => {
    // The same purchases in EUR: USD amounts / 1.10 (until 1 March) or / 1.20; EUR ones as they are.
    await ctx.pool.query(`UPDATE websites SET revenue_currency = 'EUR' WHERE id = $1`, [siteId]);
    try {
      await ltvJob(job, { websiteId: siteId, date: '2026-03-31' }, NOW);
      const res = await ltv('range=1y');
      expect(res.body.data.currency).toBe('EUR');
      // USD needs EUR's rate now: G's USD purchase of 15 December (before the first EUR rate) is left out, so
      // G's first purchase is 20 January; F's EUR purchase of 20 December needs no rate and makes F a customer.
      // January (A, B, C, G): 150/1.1 + 200 + 80/1.1 + 15/1.1 = 422.727 → /4 = 105.68; February: −50/1.1 →
      // 94.32; March: B 100 + 10/1.2, G 30/1.2 → 127.65.
      expect(res.body.data.cohorts).toEqual([
        { cohort_date: '2025-12-01', customers: 1, periods: periods([10, 10, 10, 10]) },
        { cohort_date: '2026-01-01', customers: 4, periods: periods([105.68, 94.32, 127.65]) },
        { cohort_date: '2026-02-01', customers: 1, periods: periods([36.36, 36.36]) },
      ]);
      expect(res.body.data.excluded).toEqual({
        unconverted_purchases: 3,
        unconverted_currencies: ['GBP', 'USD'],
        unattributed_purchases: 1,
      });
    } finally {
      await ctx.pool.query(`UPDATE websites SET revenue_currency = 'USD' WHERE id = $1`, [siteId]);
      await ltvJob(job, { websiteId: siteId, date: '2026-03-31' }, NOW);
    }
  });
});
