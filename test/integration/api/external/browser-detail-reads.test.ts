// The reads behind the dashboard's heatmap view and replay player (issue 24): one page's click density
// (GET /heatmaps/{id}/clicks) and one session's rrweb events (GET /replays/{id}/sessions/{sid}/events), fed
// through the real browser ingestion route and worker; plus the realtime answer's per-minute pageviews.
// Both reads take an API key or the dashboard's JWT, and only for the reader's own team's websites.
import { randomUUID } from 'node:crypto';
import { recordPresence } from '../../../../lib/realtime/presence';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { CHROME, startTestWorker } from '../../../helpers/ingest';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let stranger: TestUser;
let key: string;
let site: { id: string; tracking_code: string };
const host = 'detail.example.com';
const session = `sess-${randomUUID()}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(body: Record<string, unknown>) {
  const res = await call('POST', `/api/events/${site.tracking_code}`, {
    headers: { 'user-agent': CHROME },
    body: { session_id: session, device_type: 'desktop', browser: 'Chrome', os: 'macOS', user_agent: CHROME, ...body },
  });
  expect(res.body.data?.type).toBe('event_recorded');
}

async function waitFor(sql: string, n: number) {
  const end = Date.now() + 15_000;
  for (;;) {
    const rows = await (
      await ctx.clickhouse.query({ query: sql, query_params: { w: site.id }, format: 'JSONEachRow' })
    ).json<{ n: string }>();
    if (Number(rows[0].n) === n) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${sql}`);
    await sleep(100);
  }
}

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'detail-owner');
  stranger = await registerUser(ctx, 'pro', 'detail-stranger');
  site = await createWebsite(ctx, owner, host);
  key = (await createApiKey(ctx, owner)).key;
  const on = await call('PUT', `/api/websites/${site.id}/tracking`, {
    token: owner.token,
    body: { heatmaps: true, session_replay: true },
  });
  expect(on.status).toBe(200);
  const worker = await startTestWorker(ctx);
  try {
    const click = (path: string, x: number, y: number, selector: string, width = 1000, pageHeight = 2000) =>
      send({
        event_type: 'click',
        url: `https://${host}${path}`,
        x,
        y,
        viewport_width: width,
        viewport_height: 800,
        page_height: pageHeight,
        selector,
      });
    // /pricing: three clicks in the top-left cell, one near the top's middle, one on the right edge halfway
    // down without a selector, one past the right edge and the bottom (kept on the last cell); /other's click
    // is another page's.
    await click('/pricing', 1, 1, 'a#buy');
    await click('/pricing', 2, 3, 'a#buy');
    await click('/pricing', 500, 10, 'a#buy', 1000, 2000);
    await click('/pricing', 0, 0, 'nav>a.home');
    await click('/pricing', 1000, 1000, '');
    await click('/pricing', 5000, 9000, 'footer', 1000, 2000);
    await click('/other', 10, 10, 'a');
    // The replay: seq 1 arrives first; a chunk that is not a JSON array is skipped.
    await send({ event_type: 'replay', url: `https://${host}/`, seq: 1, data: '[{"type":3,"timestamp":3}]' });
    await send({ event_type: 'replay', url: `https://${host}/`, seq: 2, data: 'not json' });
    await send({
      event_type: 'replay',
      url: `https://${host}/`,
      seq: 0,
      data: '[{"type":4,"timestamp":1},{"type":2,"timestamp":2}]',
    });
    await waitFor('SELECT count() AS n FROM interactions WHERE website_id = {w:UUID}', 7);
    await waitFor('SELECT count() AS n FROM replay_chunks WHERE website_id = {w:UUID}', 3);
  } finally {
    await worker.stop();
  }
});
afterAll(() => ctx.close());

describe('GET /api/external/v1/heatmaps/:websiteId/clicks', () => {
  const path = (url: string) => `/api/external/v1/heatmaps/${site.id}/clicks?url=${encodeURIComponent(url)}`;

  it('counts a page’s clicks per grid cell, busiest first, with the page size and top selectors', async () => {
    const res = await call('GET', path('/pricing'), { token: owner.token });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.url).toBe('/pricing');
    expect(data.total_clicks).toBe(6);
    expect(data.page).toEqual({ width: 1000, height: 2000 });
    // Cells are 1/200 of the width and 1/400 of the height; a point is its cell's centre.
    expect(data.points).toEqual([
      { x: 0.5 / 200, y: 0.5 / 400, clicks: 3 },
      { x: 100.5 / 200, y: 2.5 / 400, clicks: 1 },
      { x: 199.5 / 200, y: 200.5 / 400, clicks: 1 },
      { x: 199.5 / 200, y: 399.5 / 400, clicks: 1 },
    ]);
    expect(data.selectors).toEqual([
      { selector: 'a#buy', clicks: 3 },
      { selector: 'footer', clicks: 1 },
      { selector: 'nav>a.home', clicks: 1 },
    ]);
    // An API key of the team reads the same.
    const withKey = await call('GET', path('/pricing'), { apiKey: key });
    expect(withKey.body.data).toEqual(data);
  });

  it('answers a page without clicks with nothing, and refuses a missing url', async () => {
    const res = await call('GET', path('/never'), { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ url: '/never', total_clicks: 0, page: null, points: [], selectors: [] });
    const missing = await call('GET', `/api/external/v1/heatmaps/${site.id}/clicks`, { token: owner.token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('is not readable by another team or without a credential', async () => {
    expect((await call('GET', path('/pricing'), { token: stranger.token })).status).toBe(404);
    expect((await call('GET', path('/pricing'))).status).toBe(401);
  });
});

describe('GET /api/external/v1/replays/:websiteId/sessions/:sessionId/events', () => {
  const path = (sid: string) => `/api/external/v1/replays/${site.id}/sessions/${encodeURIComponent(sid)}/events`;

  it('gives the recording’s events in seq order, skipping chunks that are not arrays', async () => {
    const res = await call('GET', path(session), { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      session_id: session,
      events: [
        { type: 4, timestamp: 1 },
        { type: 2, timestamp: 2 },
        { type: 3, timestamp: 3 },
      ],
      truncated: false,
    });
    expect((await call('GET', path(session), { apiKey: key })).body.data).toEqual(res.body.data);
  });

  it('404s an unknown session, another team’s reader, and refuses an over-long id', async () => {
    expect((await call('GET', path(`sess-${randomUUID()}`), { token: owner.token })).status).toBe(404);
    expect((await call('GET', path(session), { token: stranger.token })).status).toBe(404);
    expect((await call('GET', path('x'.repeat(129)), { token: owner.token })).status).toBe(400);
  });
});

describe('GET /api/external/v1/track/realtime/:websiteId', () => {
  it('lists the last 30 minutes’ pageviews per minute, oldest first, summing to pageviews_last_30m', async () => {
    const now = Date.now();
    const hit = (ts: number) => ({ websiteId: site.id, visitorId: randomUUID(), pathname: '/', countryCode: 'DE', ts });
    await recordPresence(ctx.redis, ctx.config.REDIS_PREFIX, [hit(now), hit(now), hit(now - 3 * 60_000)], now);
    const res = await call('GET', `/api/external/v1/track/realtime/${site.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    const { pageviews_per_minute: perMinute, pageviews_last_30m: total } = res.body.data;
    expect(perMinute).toHaveLength(30);
    expect(perMinute.reduce((s: number, m: { pageviews: number }) => s + m.pageviews, 0)).toBe(total);
    const minuteOf = (ts: number) => new Date(Math.floor(ts / 60_000) * 60_000).toISOString();
    const last = perMinute[29];
    // The read happens a moment after `now`: at most a minute boundary later.
    expect([minuteOf(now), minuteOf(now + 60_000)]).toContain(last.minute);
    const at = (ts: number) => perMinute.find((m: { minute: string }) => m.minute === minuteOf(ts))?.pageviews;
    expect(at(now)).toBe(2);
    expect(at(now - 3 * 60_000)).toBe(1);
    expect(Date.parse(perMinute[1].minute) - Date.parse(perMinute[0].minute)).toBe(60_000);
  });
});
