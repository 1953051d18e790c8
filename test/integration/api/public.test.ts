// Public endpoints (spec "Public endpoints", DESIGN §3): every endpoint's 200, 404 and paused answers, JSON
// against HTML, CORS, cache headers, the per-address limit, and that nothing visitor-level is served.
import { randomUUID } from 'node:crypto';
import { chTime } from '../../../lib/ingest/job/rows';
import { PUBLIC_LIMIT_PER_MINUTE } from '../../../lib/public/limit';
import { recordPresence } from '../../../lib/realtime/presence';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let site: { id: string; tracking_code: string };
let paused: { id: string; tracking_code: string };
let shared: { id: string; tracking_code: string };
let quiet: { id: string; tracking_code: string };
const visitors = [randomUUID(), randomUUID(), randomUUID()];
const SECRET_PATH = '/account/alice-smith';
const HOUR = 3_600_000;

// Each test speaks from its own address (TRUST_PROXY), so the per-address limit of one never touches another.
let nextAddress = 1;
const from = () => ({ 'x-forwarded-for': `198.51.100.${nextAddress++}` });
const get = (path: string, headers: Record<string, string> = {}) =>
  call('GET', path, { headers: { ...from(), ...headers } });
const asJson = { accept: 'application/json' };

beforeAll(async () => {
  ctx = await createTestContext({ TRUST_PROXY: 'loopback' });
  call = client(ctx.baseUrl);
  const owner = await registerUser(ctx, 'pro', 'public');
  site = await createWebsite(ctx, owner, 'shop.example.com');
  paused = await createWebsite(ctx, owner, 'paused.example.com');
  shared = await createWebsite(ctx, owner, 'shared.example.com');
  quiet = await createWebsite(ctx, owner, 'quiet.example.com');
  await ctx.pool.query('UPDATE websites SET is_active = false, public_dashboard = true WHERE id = $1', [paused.id]);
  const res = await call('PUT', `/api/websites/${shared.id}/general`, {
    token: owner.token,
    body: { public_dashboard: true },
  });
  expect(res.status).toBe(200);

  const now = Date.now();
  // Live: two visitors on /pricing (DE), one on a page whose path names a person (US).
  for (const id of [site.id, shared.id]) {
    await recordPresence(ctx.redis, ctx.config.REDIS_PREFIX, [
      { websiteId: id, visitorId: visitors[0], pathname: '/pricing', countryCode: 'DE', ts: now - 1_000 },
      { websiteId: id, visitorId: visitors[1], pathname: '/pricing', countryCode: 'DE', ts: now - 2_000 },
      { websiteId: id, visitorId: visitors[2], pathname: SECRET_PATH, countryCode: 'US', ts: now - 3_000 },
    ]);
  }
  // Stored: 5 pageviews by 3 visitors within the last 3 hours, one 3 days ago, one 20 days ago.
  const at = (ms: number) => new Date(ms).toISOString();
  const rows = [
    { v: visitors[0], ts: now - 10 * 60_000, c: 'DE' },
    { v: visitors[0], ts: now - 20 * 60_000, c: 'DE' },
    { v: visitors[1], ts: now - HOUR - 60_000, c: 'DE' },
    { v: visitors[2], ts: now - 2 * HOUR - 60_000, c: 'US' },
    { v: visitors[2], ts: now - 2 * HOUR - 120_000, c: 'US' },
    { v: randomUUID(), ts: now - 3 * 24 * HOUR, c: 'FR' },
    { v: randomUUID(), ts: now - 20 * 24 * HOUR, c: 'FR' },
  ].map((r) =>
    eventRow(site.id, {
      ts: at(r.ts),
      visitor_id: r.v,
      session_id: r.v,
      country_code: r.c,
      pathname: SECRET_PATH,
      received_at: chTime(r.ts),
    }),
  );
  await storeRows(ctx.clickhouse, rows);
});
afterAll(async () => {
  await ctx.close();
});

function expectPublicHeaders(res: { headers: Headers }, maxAge: number) {
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  expect(res.headers.get('cache-control')).toBe(`public, max-age=${maxAge}`);
}

/** Nothing visitor-level: no visitor id, no address, no path a single visitor was on. */
function expectNothingVisitorLevel(text: string) {
  for (const v of visitors) expect(text).not.toContain(v);
  expect(text).not.toContain(SECRET_PATH);
  expect(text).not.toContain('198.51.100.');
}

describe('/e/live/:code', () => {
  it('answers the live visitor count with public cache and CORS headers', async () => {
    const res = await get(`/e/live/${site.tracking_code}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ active: true, domain: 'shop.example.com', live_visitors: 3 });
    expectPublicHeaders(res, 10);
    expectNothingVisitorLevel(res.text);
  });

  it('answers 404 in the error envelope for an unknown or malformed code', async () => {
    for (const code of ['tm-doesnotexist', 'not-a-code', `${site.tracking_code}x`]) {
      const res = await get(`/e/live/${code}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('says a paused website is paused instead of counting', async () => {
    const res = await get(`/e/live/${paused.tracking_code}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      active: false,
      domain: 'paused.example.com',
      message: 'Tracking is paused for this website',
    });
  });

  it('answers a CORS preflight for any origin without credentials', async () => {
    const res = await fetch(`${ctx.baseUrl}/e/live/${site.tracking_code}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('/e/stats/:code', () => {
  it('answers visitors and pageviews over 24 hours, 7 and 30 days', async () => {
    const res = await get(`/e/stats/${site.tracking_code}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      active: true,
      periods: {
        last_24h: { visitors: 3, pageviews: 5 },
        last_7d: { visitors: 4, pageviews: 6 },
        last_30d: { visitors: 5, pageviews: 7 },
      },
    });
    expectPublicHeaders(res, 60);
    expectNothingVisitorLevel(res.text);
  });

  it('answers 404 for an unknown code and paused for a paused website', async () => {
    expect((await get('/e/stats/tm-doesnotexist')).status).toBe(404);
    const res = await get(`/e/stats/${paused.tracking_code}`);
    expect(res.body.data).toMatchObject({ active: false });
    expect(res.body.data.periods).toBeUndefined();
  });
});

describe('/e/:code/status', () => {
  it('says whether tracking is active, verified and receiving events', async () => {
    const res = await get(`/e/${site.tracking_code}/status`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      tracking_code: site.tracking_code,
      active: true,
      verified: false,
      verification_status: 'unverified',
      receiving_events: true,
    });
    expectPublicHeaders(res, 10);
    // Presence is what ingestion records; a website nothing arrived for in 30 minutes is not receiving.
    const silent = await get(`/e/${quiet.tracking_code}/status`);
    expect(silent.body.data).toMatchObject({ active: true, receiving_events: false });
  });

  it('answers 404 for an unknown code and receiving_events null while paused', async () => {
    expect((await get('/e/tm-doesnotexist/status')).status).toBe(404);
    const res = await get(`/e/${paused.tracking_code}/status`);
    expect(res.body.data).toMatchObject({ active: false, receiving_events: null });
  });
});

describe('/e/realtime/:websiteId', () => {
  it('answers DESIGN §3’s shape while the public dashboard is on, pages only where several visitors are', async () => {
    const res = await get(`/e/realtime/${shared.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      website_id: shared.id,
      live_visitors: 3,
      top_pages: [{ url: '/pricing', visitors: 2 }],
      countries: [
        { country_code: 'DE', visitors: 2 },
        { country_code: 'US', visitors: 1 },
      ],
    });
    expect(typeof res.body.data.pageviews_last_30m).toBe('number');
    expectPublicHeaders(res, 10);
    expectNothingVisitorLevel(res.text);
  });

  it('answers 404 while the public dashboard is off, for an unknown id and for a malformed one', async () => {
    for (const id of [site.id, randomUUID(), 'not-a-uuid', site.tracking_code]) {
      const res = await get(`/e/realtime/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('says a paused website is paused', async () => {
    const res = await get(`/e/realtime/${paused.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      website_id: paused.id,
      active: false,
      message: 'Tracking is paused for this website',
    });
  });
});

describe('widgets', () => {
  it('serve an embeddable HTML document by default, with a strict policy of their own', async () => {
    for (const kind of ['realtime', 'preview', 'recent']) {
      const res = await get(`/widgets/${site.tracking_code}/${kind}`, { accept: 'text/html,*/*;q=0.8' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
      expect(res.headers.get('vary')).toMatch(/Accept/);
      expect(res.headers.get('x-frame-options')).toBeNull();
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('frame-ancestors');
      expect(res.text).not.toMatch(/<script|<link|src=/i);
      expectPublicHeaders(res, kind === 'realtime' ? 10 : 60);
      expectNothingVisitorLevel(res.text);
    }
  });

  it('show their numbers in the HTML, the country widget with the DB-IP credit', async () => {
    const realtime = await get(`/widgets/${site.tracking_code}/realtime`);
    expect(realtime.text).toMatch(/<span>3<\/span>/);
    const preview = await get(`/widgets/${site.tracking_code}/preview`);
    expect(preview.text).toContain('<strong>3</strong> visitors');
    expect(preview.text).toContain('<strong>5</strong> pageviews');
    const recent = await get(`/widgets/${site.tracking_code}/recent`);
    expect(recent.text).toContain('Germany');
    expect(recent.text).toContain('United States');
    expect(recent.text).toContain('<a href="https://db-ip.com"');
    expect(recent.text).toContain('IP Geolocation by DB-IP');
  });

  it('answer JSON with Accept: application/json', async () => {
    const realtime = await get(`/widgets/${site.tracking_code}/realtime`, asJson);
    expect(realtime.headers.get('content-type')).toMatch(/^application\/json/);
    expect(realtime.body.data).toMatchObject({ active: true, live_visitors: 3 });
    const preview = await get(`/widgets/${site.tracking_code}/preview`, asJson);
    expect(preview.body.data.hours).toHaveLength(24);
    expect(preview.body.data.hours.reduce((n: number, h: { pageviews: number }) => n + h.pageviews, 0)).toBe(5);
    expect(preview.body.data.totals).toEqual({ visitors: 3, pageviews: 5 });
    const recent = await get(`/widgets/${site.tracking_code}/recent`, asJson);
    expect(recent.body.data).toMatchObject({
      period: 'last_24h',
      countries: [
        { country_code: 'DE', country_name: 'Germany', visitors: 2 },
        { country_code: 'US', country_name: 'United States', visitors: 1 },
      ],
      attribution: { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com' },
    });
    for (const r of [realtime, preview, recent]) expectNothingVisitorLevel(r.text);
  });

  it('answer 404 as a small HTML document, or the error envelope with JSON', async () => {
    const page = await get('/widgets/tm-doesnotexist/realtime');
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('unknown');
    const json = await get('/widgets/tm-doesnotexist/recent', asJson);
    expect(json.status).toBe(404);
    expect(json.body.error.code).toBe('NOT_FOUND');
  });

  it('say tracking is paused for a paused website', async () => {
    const page = await get(`/widgets/${paused.tracking_code}/realtime`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Tracking paused');
    const json = await get(`/widgets/${paused.tracking_code}/preview`, asJson);
    expect(json.body.data).toMatchObject({ active: false });
    expect(json.body.data.hours).toBeUndefined();
  });
});

describe('per-address limit', () => {
  it(`answers 429 past ${PUBLIC_LIMIT_PER_MINUTE} requests a minute from one address, across endpoints`, async () => {
    const address = { 'x-forwarded-for': '203.0.113.77' };
    // Near a minute's end the window could reset mid-test; start in a fresh one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const statuses: number[] = [];
    for (let i = 0; i < PUBLIC_LIMIT_PER_MINUTE; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(`${ctx.baseUrl}${(i + j) % 2 ? `/e/live/${site.tracking_code}` : '/e/live/tm-doesnotexist'}`, {
            headers: address,
          }).then((r) => r.status),
        ),
      );
      statuses.push(...batch);
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    const over = await call('GET', `/widgets/${site.tracking_code}/realtime`, { headers: { ...address, ...asJson } });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('cache-control')).toBe('no-store');
    const stats = await call('GET', `/e/stats/${site.tracking_code}`, { headers: address });
    expect(stats.status).toBe(429);
    const page = await call('GET', `/widgets/${site.tracking_code}/recent`, { headers: address });
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Too many requests');
    expect(page.headers.get('retry-after')).not.toBeNull();
    // Another address is untouched; the counter is kept under a hash, never the address.
    expect((await get(`/e/live/${site.tracking_code}`)).status).toBe(200);
    const keys = await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:rl:public:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toContain('203.0.113.77');
  });
});
