// Website time zones (issue 19 item 6): only zones both the runtime and ClickHouse know are accepted, stored in
// ClickHouse's spelling; a zone already stored that ClickHouse does not know reads as UTC instead of failing.
import { rollupDaily } from '../../../../jobs/rollupDaily';
import { createLogger } from '../../../../lib/log';
import { adoptServerTimeZones, BUNDLED_CLICKHOUSE_ZONES, canonicalTimeZone } from '../../../../lib/stats/timeZones';
import { createApiKey, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, insertDstFixture, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let user: TestUser;
let key: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'enterprise', 'zones');
  key = (await createApiKey(ctx, user)).key;
});
afterAll(() => ctx.close());

async function createSite(timezone?: string) {
  return call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', ...(timezone === undefined ? {} : { timezone }) },
  });
}

/** A website with the DST fixture and a few events of the last hours, whatever zone it is given. */
async function siteWithData(): Promise<string> {
  const res = await createSite();
  const id = res.body.data.website.id as string;
  await insertDstFixture(ctx.clickhouse, id);
  const now = Date.now();
  const recent = [1, 2, 3].map((h) =>
    eventRow(id, {
      session_id: `recent-${h}`,
      visitor_id: `v${h}`,
      pathname: '/now',
      ts: new Date(now - h * 3600_000).toISOString(),
    }),
  );
  await storeRows(ctx.clickhouse, recent);
  return id;
}

/** The answers that depend on the zone: overview, visitors, and the hourly series of a DST day. */
async function zonedReads(siteId: string) {
  const overview = await call('GET', `/api/external/v1/analytics/${siteId}?range=7d`, { apiKey: key });
  const visitors = await call('GET', `/api/external/v1/analytics/${siteId}/visitors?range=24h`, { apiKey: key });
  const q = new URLSearchParams({
    site_id: siteId,
    period: 'day',
    date: '2026-03-29',
    interval: 'hour',
    metrics: 'visitors,pageviews',
  });
  const hourly = await call('GET', `/api/external/v1/stats/timeseries?${q}`, { apiKey: key });
  return { overview, visitors, hourly };
}

const setStoredZone = (siteId: string, zone: string) =>
  ctx.pool.query('UPDATE websites SET timezone = $2 WHERE id = $1', [siteId, zone]);

describe('accepting a time zone', () => {
  it('stores the canonical spelling of a zone given in another letter case', async () => {
    const lower = await createSite('utc');
    expect(lower.status).toBe(201);
    expect(lower.body.data.website.timezone).toBe('UTC');
    const berlin = await createSite('europe/berlin');
    expect(berlin.body.data.website.timezone).toBe('Europe/Berlin');
    const { rows } = await ctx.pool.query('SELECT timezone FROM websites WHERE id = $1', [berlin.body.data.website.id]);
    expect(rows[0].timezone).toBe('Europe/Berlin');
    const updated = await call('PUT', `/api/websites/${berlin.body.data.website.id}/general`, {
      token: user.token,
      body: { timezone: 'asia/tokyo' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data.timezone).toBe('Asia/Tokyo');
  });

  it('refuses zones ClickHouse or the runtime does not know, naming the field', async () => {
    for (const zone of ['US/Pacific-New', 'Factory', 'Mars/Olympus_Mons']) {
      const res = await createSite(zone);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
      expect(res.body.error.message).toMatch(/^timezone: /);
    }
    const site = (await createSite()).body.data.website.id;
    const res = await call('PUT', `/api/websites/${site}/general`, {
      token: user.token,
      body: { timezone: 'US/Pacific-New' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^timezone: /);
  });

  it('the bundled list of ClickHouse zones is the store’s own', async () => {
    const result = await ctx.clickhouse.query({
      query: 'SELECT time_zone FROM system.time_zones ORDER BY time_zone',
      format: 'JSONCompactEachRow',
    });
    const store = (await result.json<[string]>()).map(([zone]) => zone);
    expect([...BUNDLED_CLICKHOUSE_ZONES].sort()).toEqual(store.sort());
    // So adopting the store's list at start (as the web role does) changes nothing.
    const lines: string[] = [];
    await adoptServerTimeZones(
      ctx.clickhouse,
      createLogger('info', 'test', { write: (line: string) => void lines.push(line) }),
    );
    expect(lines).toEqual([]);
    expect(canonicalTimeZone('asia/tokyo')).toBe('Asia/Tokyo');
  });
});

describe('a zone stored before the check', () => {
  it('ClickHouse does not know reads as UTC on the overview, visitors and hourly series (not a 500)', async () => {
    const bad = await siteWithData();
    const utc = await siteWithData();
    await setStoredZone(bad, 'US/Pacific-New');
    const [reads, expected] = [await zonedReads(bad), await zonedReads(utc)];
    for (const name of ['overview', 'visitors', 'hourly'] as const) {
      expect({ name, status: reads[name].status }).toEqual({ name, status: 200 });
    }
    // The same answers as a UTC website with the same events, but for the website's own id.
    const overview = (r: typeof reads, id: string) =>
      JSON.parse(JSON.stringify({ ...r.overview.body.data, website: undefined }).replaceAll(id, 'SITE'));
    expect(overview(reads, bad)).toEqual(overview(expected, utc));
    expect(reads.overview.body.data.summary.total_page_views).toBeGreaterThanOrEqual(3);
    expect(reads.visitors.body.data.visitors.length).toBe(expected.visitors.body.data.visitors.length);
    expect(reads.hourly.body.data).toEqual(expected.hourly.body.data);
    expect(reads.hourly.body.data.results).toHaveLength(24);
    const detail = await call('GET', `/api/websites/${bad}`, { token: user.token });
    expect(detail.body.data.website.timezone).toBe('UTC');
  });

  it('in another letter case reads in the zone it names', async () => {
    const lower = await siteWithData();
    const berlin = await siteWithData();
    await setStoredZone(lower, 'europe/berlin');
    await setStoredZone(berlin, 'Europe/Berlin');
    const [reads, expected] = [await zonedReads(lower), await zonedReads(berlin)];
    expect(reads.hourly.status).toBe(200);
    expect(reads.hourly.body.data).toEqual(expected.hourly.body.data);
    expect(reads.hourly.body.data.results).toHaveLength(23); // the spring-forward day in Berlin
  });

  it('does not fail the daily rollups', async () => {
    const bad = await siteWithData();
    await setStoredZone(bad, 'US/Pacific-New');
    await expect(rollupDaily(ctx.pool, ctx.clickhouse, ctx.logger)).resolves.toMatchObject({
      websites: expect.any(Number),
    });
  });
});
