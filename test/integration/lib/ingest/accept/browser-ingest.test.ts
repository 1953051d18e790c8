import { randomUUID } from 'node:crypto';
import {
  type BrowserDeps,
  errorFingerprint,
  ingestBrowserEvent,
  REPLAY_BYTES_PER_SESSION,
  REPLAY_BYTES_PER_WEBSITE_DAY,
  replayQuotaKeys,
} from '../../../../../lib/ingest/accept/browser';
import { browserEventSchema } from '../../../../../lib/ingest/accept/browserSchemas';
import { DailySalts } from '../../../../../lib/ingest/accept/salt';
import { SiteConfigCache } from '../../../../../lib/ingest/accept/siteCache';
import { PROJECT_ROOT } from '../../../../../lib/paths';
import { createWebsite, registerUser, type TestUser } from '../../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { client } from '../../../../helpers/http';
import { CHROME, countEvents, startTestWorker, waitForEvents } from '../../../../helpers/ingest';

let ctx: TestContext;
let owner: TestUser;
let site: { id: string; tracking_code: string };
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'browser');
  site = await createWebsite(ctx, owner, 'www.example.com');
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker.stop();
  await ctx.close();
});

function event(over: Record<string, unknown> = {}) {
  return {
    event_type: 'pageview',
    session_id: `sess-${randomUUID()}`,
    url: 'https://www.example.com/docs/start?utm_source=twitter',
    referrer: 'https://news.ycombinator.com/item?id=1',
    device_type: 'desktop',
    browser: 'Chrome',
    os: 'macOS',
    user_agent: CHROME,
    screen_width: 1440,
    screen_height: 900,
    language: 'en-US',
    ...over,
  };
}

const post = (body: unknown, opts: { path?: string; headers?: Record<string, string>; raw?: string } = {}) =>
  call('POST', opts.path ?? `/api/events/${site.tracking_code}`, {
    headers: { 'user-agent': CHROME, ...opts.headers },
    ...(opts.raw !== undefined ? { rawBody: opts.raw } : { body }),
  });

describe('the three addresses', () => {
  it.each(['/api/events/', '/api/track/', '/e/'])(
    '%s<code> records a pageview with the spec response',
    async (prefix) => {
      const ev = event();
      const res = await post(ev, { path: `${prefix}${site.tracking_code}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        data: { type: 'event_recorded', event_type: 'pageview', event_name: null },
      });
      expect(typeof res.body.timestamp).toBe('string');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await waitForEvents(ctx, 1, `session_id = '${ev.session_id}'`)).toBe(1);
    },
  );

  it('stores the enriched row: UA from the header, source, path, cookieless visitor id', async () => {
    const ev = event();
    await post(ev, {
      headers: {
        'user-agent':
          'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
      },
    });
    await waitForEvents(ctx, 1, `session_id = '${ev.session_id}'`);
    const [row] = await (
      await ctx.clickhouse.query({
        query: 'SELECT * FROM events WHERE session_id = {s:String}',
        query_params: { s: ev.session_id },
        format: 'JSONEachRow',
      })
    ).json<Record<string, string>>();
    expect(row).toMatchObject({
      type: 'pageview',
      source: 'browser',
      hostname: 'www.example.com',
      pathname: '/docs/start',
      utm_source: 'twitter',
      source_name: 'twitter',
      referrer_domain: 'news.ycombinator.com',
      device_type: 'mobile',
      browser: 'Safari',
      os: 'iOS',
      language: 'en-US',
    });
    expect(row.visitor_id).toMatch(/^[0-9a-f]{32}$/);
    expect(row.ip_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes text/plain bodies (sendBeacon) and answers the CORS preflight', async () => {
    const ev = event({ event_type: 'custom', event_name: 'Signup', props: { plan: 'pro' } });
    const res = await post(undefined, {
      raw: JSON.stringify(ev),
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ type: 'event_recorded', event_type: 'custom', event_name: 'Signup' });
    const pre = await fetch(`${ctx.baseUrl}/api/events/${site.tracking_code}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://www.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    await waitForEvents(ctx, 1, `session_id = '${ev.session_id}'`);
    const [row] = await (
      await ctx.clickhouse.query({
        query: `SELECT type, name, props FROM events WHERE session_id = '${ev.session_id}'`,
        format: 'JSONEachRow',
      })
    ).json<Record<string, string>>();
    expect(row).toEqual({ type: 'event', name: 'Signup', props: '{"plan":"pro"}' });
  });
});

describe('bad input', () => {
  it.each(['event_type', 'session_id', 'url', 'device_type', 'browser', 'os', 'user_agent'])(
    'missing %s → 400',
    async (field) => {
      const ev: Record<string, unknown> = event();
      delete ev[field];
      const res = await post(ev);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toContain(field);
    },
  );

  it('short session id, custom without a name, bad JSON, unknown type → 400', async () => {
    expect((await post(event({ session_id: 'short' }))).body.error.message).toMatch(/session_id/);
    expect((await post(event({ event_type: 'custom' }))).status).toBe(400);
    expect((await post(undefined, { raw: '{"event_type":' })).status).toBe(400);
    expect((await post(event({ event_type: 'purchase' }))).status).toBe(400);
  });

  it('unknown code → 404; inactive website → 403', async () => {
    expect((await post(event(), { path: '/api/events/tm-nope' })).status).toBe(404);
    const off = await createWebsite(ctx, owner, 'off.example.com');
    await ctx.pool.query('UPDATE websites SET is_active = false WHERE id = $1', [off.id]);
    const res = await post(event({ url: 'https://off.example.com/' }), { path: `/api/events/${off.tracking_code}` });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });
});

describe('ignored events are answered 200 and stored nowhere', () => {
  const expectIgnored = async (res: Awaited<ReturnType<typeof post>>, reason: string, sessionId: string) => {
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ type: 'event_ignored', reason });
    await new Promise((r) => setTimeout(r, 400));
    expect(await countEvents(ctx, `session_id = '${sessionId}'`)).toBe(0);
  };

  it('bots, Sec-GPC and the opt-out flag', async () => {
    const a = event();
    await expectIgnored(
      await post(a, {
        headers: { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
      }),
      'bot',
      a.session_id,
    );
    const b = event();
    await expectIgnored(await post(b, { headers: { 'sec-gpc': '1' } }), 'gpc', b.session_id);
    const c = event({ ignore: true });
    await expectIgnored(await post(c), 'opt_out', c.session_id as string);
  });

  it('excluded IPs and paths, added and removed through the settings API, apply at once', async () => {
    const base = `/api/websites/${site.id}/exclusions`;
    const ip = await call('POST', `${base}/ip`, {
      token: owner.token,
      body: { ip_address: '127.0.0.0/8', description: 'office' },
    });
    expect(ip.status).toBe(201);
    expect(ip.body.data).toMatchObject({ website_id: site.id, ip_address: '127.0.0.0/8', description: 'office' });
    expect((await call('POST', `${base}/ip`, { token: owner.token, body: { ip_address: '127.0.0.0/8' } })).status).toBe(
      409,
    );
    expect((await call('POST', `${base}/ip`, { token: owner.token, body: { ip_address: 'not-an-ip' } })).status).toBe(
      400,
    );
    const a = event();
    await expectIgnored(await post(a), 'excluded_ip', a.session_id);
    expect((await call('DELETE', `${base}/ip/${ip.body.data.id}`, { token: owner.token })).status).toBe(200);
    expect((await post(event())).body.data.type).toBe('event_recorded');

    const path = await call('POST', `${base}/path`, { token: owner.token, body: { path_pattern: '/admin/*' } });
    expect(path.status).toBe(201);
    expect(
      (await call('POST', `${base}/path`, { token: owner.token, body: { path_pattern: '/admin/*' } })).status,
    ).toBe(409);
    const b = event({ url: 'https://www.example.com/admin/users/7' });
    await expectIgnored(await post(b), 'excluded_path', b.session_id);
    expect((await post(event({ url: 'https://www.example.com/administrator' }))).body.data.type).toBe('event_recorded');
    const list = await call('GET', base, { token: owner.token });
    expect(list.body.data.ip_exclusions).toEqual([]);
    expect(list.body.data.path_exclusions.map((p: { path_pattern: string }) => p.path_pattern)).toEqual(['/admin/*']);
    expect((await call('DELETE', `${base}/path/${path.body.data.id}`, { token: owner.token })).status).toBe(200);
  });

  it('hostnames outside a non-empty allowed_domains', async () => {
    const own = await createWebsite(ctx, owner, 'shop.example.org');
    await call('PUT', `/api/websites/${own.id}/general`, {
      token: owner.token,
      body: { allowed_domains: ['example.org'] },
    });
    const path = `/api/events/${own.tracking_code}`;
    const a = event({ url: 'https://evil.example.net/' });
    await expectIgnored(await post(a, { path }), 'domain_not_allowed', a.session_id);
    expect((await post(event({ url: 'https://shop.example.org/' }), { path })).body.data.type).toBe('event_recorded');
  });
});

describe('client address', () => {
  it('ignores X-Forwarded-For unless TRUST_PROXY trusts the hop it came through, then geolocates from it', async () => {
    const ev = event();
    await post(ev, { headers: { 'x-forwarded-for': '8.8.8.8' } });
    await waitForEvents(ctx, 1, `session_id = '${ev.session_id}'`);
    const proxied = await createTestContext({ TRUST_PROXY: 'loopback' });
    const proxiedWorker = await startTestWorker(proxied);
    try {
      const u = await registerUser(proxied, 'pro', 'proxy');
      const s2 = await createWebsite(proxied, u, 'www.example.com');
      const ev2 = event();
      const res = await client(proxied.baseUrl)('POST', `/e/${s2.tracking_code}`, {
        headers: { 'user-agent': CHROME, 'x-forwarded-for': '8.8.8.8' },
        body: ev2,
      });
      expect(res.status).toBe(200);
      await waitForEvents(proxied, 1, `session_id = '${ev2.session_id}'`);
      const [viaProxy] = await (
        await proxied.clickhouse.query({
          query: `SELECT country_code FROM events WHERE session_id = '${ev2.session_id}'`,
          format: 'JSONEachRow',
        })
      ).json<{ country_code: string }>();
      expect(viaProxy.country_code).toBe('US');
    } finally {
      await proxiedWorker.stop();
      await proxied.close();
    }
    const [direct] = await (
      await ctx.clickhouse.query({
        query: `SELECT country_code FROM events WHERE session_id = '${ev.session_id}'`,
        format: 'JSONEachRow',
      })
    ).json<{ country_code: string }>();
    expect(direct.country_code).toBe(''); // 127.0.0.1, not the forged header
  });

  it('refuses bodies over the limit with 413', async () => {
    const res = await post(undefined, {
      raw: JSON.stringify(event({ event_type: 'replay', seq: 1, data: 'x'.repeat(600 * 1024) })),
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('abuse limit', () => {
  it('answers 429 past the per-client limit for one website', async () => {
    const own = await createWebsite(ctx, owner, 'busy.example.com');
    const { ABUSE_LIMIT_PER_MINUTE } = await import('../../../../../lib/ingest/accept/browser');
    // Fill the window directly (as 600 requests would), then one more request goes over.
    const keys = await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:abuse:${own.id}:*`);
    expect(keys).toEqual([]);
    const first = await post(event({ url: 'https://busy.example.com/' }), { path: `/e/${own.tracking_code}` });
    expect(first.status).toBe(200);
    const [key] = await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:abuse:${own.id}:*`);
    await ctx.redis.set(key, String(ABUSE_LIMIT_PER_MINUTE), 'KEEPTTL');
    const over = await post(event({ url: 'https://busy.example.com/' }), { path: `/e/${own.tracking_code}` });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBeTruthy();
    expect(key).not.toContain('127.0.0.1');
  });
});

describe('clicks, errors and replay chunks', () => {
  it('a click lands in interactions; an error in error_events and its group; a replay chunk in replay_chunks', async () => {
    const rich = await createWebsite(ctx, owner, 'rich.example.com');
    expect(
      (
        await call('PUT', `/api/websites/${rich.id}/tracking`, {
          token: owner.token,
          body: { heatmaps: true, session_replay: true },
        })
      ).status,
    ).toBe(200);
    const path = `/api/events/${rich.tracking_code}`;
    const s = `sess-${randomUUID()}`;
    await post(
      event({
        session_id: s,
        event_type: 'click',
        x: 120,
        y: 640,
        viewport_width: 1280,
        viewport_height: 800,
        page_height: 3000,
        selector: 'button#buy',
      }),
      { path },
    );
    const err = {
      message: "Cannot read properties of undefined (reading 'x')",
      error_type: 'TypeError',
      stack: 'TypeError: x\n    at render (https://www.example.com/app.js:10:5)',
    };
    await post(event({ session_id: s, event_type: 'error', ...err }), { path });
    await post(event({ session_id: s, event_type: 'error', ...err, visitor_id: 'v-2' }), { path });
    await post(event({ session_id: s, event_type: 'replay', seq: 0, data: '[{"type":4}]' }), { path });
    expect(await waitForEvents(ctx, 3, `session_id = '${s}'`)).toBe(3);
    const q = async (sql: string) =>
      (await ctx.clickhouse.query({ query: sql, query_params: { s }, format: 'JSONEachRow' })).json<
        Record<string, unknown>
      >();
    expect(await q('SELECT x, y, pathname, selector FROM interactions WHERE session_id = {s:String}')).toEqual([
      { x: 120, y: 640, pathname: '/docs/start', selector: 'button#buy' },
    ]);
    expect(await q('SELECT seq, data FROM replay_chunks WHERE session_id = {s:String}')).toEqual([
      { seq: 0, data: '[{"type":4}]' },
    ]);
    const errors = await q('SELECT error_type, fingerprint FROM error_events WHERE session_id = {s:String}');
    expect(errors).toHaveLength(2);
    expect(errors[0].fingerprint).toBe(errorFingerprint(err));
    const group = await ctx.pool.query(
      'SELECT type, status, occurrence_count, affected_users_count FROM error_groups WHERE website_id = $1 AND fingerprint = $2',
      [rich.id, errorFingerprint(err)],
    );
    expect(group.rows).toEqual([
      { type: 'TypeError', status: 'unresolved', occurrence_count: '2', affected_users_count: '2' },
    ]);
  });
});

describe('replay and heatmaps: collected only when on, replay bytes capped', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const rows = async (table: string, sessionId: string) => {
    const [row] = await (
      await ctx.clickhouse.query({
        query: `SELECT count() AS n FROM ${table} WHERE session_id = {s:String}`,
        query_params: { s: sessionId },
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    return Number(row.n);
  };
  const outcomes = async (outcome: string) => {
    const metric = ctx.metrics.registry.getSingleMetric('tidemark_browser_events_total');
    const values = metric ? (await metric.get()).values : [];
    return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };
  const chunk = (sessionId: string, seq: number, data: string) =>
    event({ session_id: sessionId, event_type: 'replay', seq, data });
  const replaySite = async (domain: string) => {
    const w = await createWebsite(ctx, owner, domain);
    expect(
      (await call('PUT', `/api/websites/${w.id}/tracking`, { token: owner.token, body: { session_replay: true } }))
        .status,
    ).toBe(200);
    return { ...w, path: `/e/${w.tracking_code}` };
  };

  it('clicks and replay chunks of a website with heatmaps and replay off: 200 event_ignored with the reason, counted, stored nowhere', async () => {
    const quiet = await createWebsite(ctx, owner, 'quiet.example.com');
    const path = `/e/${quiet.tracking_code}`;
    const s = `sess-${randomUUID()}`;
    const heatBefore = await outcomes('heatmaps_disabled');
    const replayBefore = await outcomes('replay_disabled');
    const click = await post(event({ session_id: s, event_type: 'click', x: 1, y: 2 }), { path });
    expect(click.status).toBe(200);
    expect(click.body.data).toEqual({
      type: 'event_ignored',
      reason: 'heatmaps_disabled',
      event_type: 'click',
      event_name: null,
    });
    const replay = await post(chunk(s, 0, 'x'.repeat(400_000)), { path });
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual({
      type: 'event_ignored',
      reason: 'replay_disabled',
      event_type: 'replay',
      event_name: null,
    });
    expect(await outcomes('heatmaps_disabled')).toBe(heatBefore + 1);
    expect(await outcomes('replay_disabled')).toBe(replayBefore + 1);
    // A pageview of the same session, sent after them, is stored; the dropped ones are not.
    expect((await post(event({ session_id: s }), { path })).body.data.type).toBe('event_recorded');
    await waitForEvents(ctx, 1, `session_id = '${s}'`);
    await sleep(300);
    expect(await countEvents(ctx, `session_id = '${s}'`)).toBe(1);
    expect(await rows('interactions', s)).toBe(0);
    expect(await rows('replay_chunks', s)).toBe(0);

    // Switched on, both are taken at once.
    expect(
      (
        await call('PUT', `/api/websites/${quiet.id}/tracking`, {
          token: owner.token,
          body: { heatmaps: true, session_replay: true },
        })
      ).status,
    ).toBe(200);
    const s2 = `sess-${randomUUID()}`;
    expect((await post(event({ session_id: s2, event_type: 'click', x: 1, y: 2 }), { path })).body.data.type).toBe(
      'event_recorded',
    );
    expect((await post(chunk(s2, 0, '[{"type":4}]'), { path })).body.data.type).toBe('event_recorded');
    expect(await waitForEvents(ctx, 1, `session_id = '${s2}'`)).toBe(1);
    for (let i = 0; i < 100 && (await rows('replay_chunks', s2)) === 0; i++) await sleep(100);
    expect(await rows('interactions', s2)).toBe(1);
    expect(await rows('replay_chunks', s2)).toBe(1);
  });

  it(`a session's replay bytes are capped at ${REPLAY_BYTES_PER_SESSION}: past it replay_quota_exceeded, other sessions unaffected`, async () => {
    const site = await replaySite('recorded.example.com');
    const size = 500_000;
    const fits = Math.floor(REPLAY_BYTES_PER_SESSION / size);
    const s = `sess-${randomUUID()}`;
    for (let seq = 0; seq < fits; seq++) {
      expect((await post(chunk(s, seq, 'x'.repeat(size)), { path: site.path })).body.data.type).toBe('event_recorded');
    }
    const exceededBefore = await outcomes('replay_quota_exceeded');
    const over = await post(chunk(s, fits, 'x'.repeat(size)), { path: site.path });
    expect(over.status).toBe(200);
    expect(over.body.data).toEqual({
      type: 'event_ignored',
      reason: 'replay_quota_exceeded',
      event_type: 'replay',
      event_name: null,
    });
    expect(await outcomes('replay_quota_exceeded')).toBe(exceededBefore + 1);
    // What is left of the session's quota still takes a smaller chunk; another session starts afresh.
    expect((await post(chunk(s, fits, 'x'.repeat(1_000)), { path: site.path })).body.data.type).toBe('event_recorded');
    const s2 = `sess-${randomUUID()}`;
    expect((await post(chunk(s2, 0, 'x'.repeat(size)), { path: site.path })).body.data.type).toBe('event_recorded');

    const [sessionKey, dayKey] = replayQuotaKeys(ctx.config.REDIS_PREFIX, site.id, s, Date.now());
    expect(sessionKey.startsWith(`${ctx.config.REDIS_PREFIX}:replay:`)).toBe(true);
    expect(sessionKey).not.toContain(s);
    expect(Number(await ctx.redis.get(sessionKey))).toBe(fits * size + 1_000);
    expect(Number(await ctx.redis.get(dayKey))).toBe(fits * size + 1_000 + size);
    const [sessionTtl, dayTtl] = [await ctx.redis.ttl(sessionKey), await ctx.redis.ttl(dayKey)];
    expect(sessionTtl).toBeGreaterThan(0);
    expect(sessionTtl).toBeLessThanOrEqual(24 * 3600);
    expect(dayTtl).toBeGreaterThan(24 * 3600 - 60);
    expect(dayTtl).toBeLessThanOrEqual(48 * 3600);

    for (let i = 0; i < 150 && (await rows('replay_chunks', s)) < fits + 1; i++) await sleep(100);
    expect(await rows('replay_chunks', s)).toBe(fits + 1);
  });

  it("a website's replay bytes are capped per UTC day by plan, counted in UTF-8 bytes, both counters or neither", async () => {
    const site = await replaySite('daily.example.com');
    const cap = REPLAY_BYTES_PER_WEBSITE_DAY.pro;
    const [, dayKey] = replayQuotaKeys(ctx.config.REDIS_PREFIX, site.id, 'any', Date.now());
    await ctx.redis.set(dayKey, String(cap - 300), 'EX', 3600); // as if the day's earlier chunks had used it
    const [a, b] = [`sess-${randomUUID()}`, `sess-${randomUUID()}`];
    const over = await post(chunk(a, 0, 'é'.repeat(200)), { path: site.path }); // 400 bytes, 200 characters
    expect(over.body.data).toMatchObject({ type: 'event_ignored', reason: 'replay_quota_exceeded' });
    expect(await ctx.redis.get(replayQuotaKeys(ctx.config.REDIS_PREFIX, site.id, a, Date.now())[0])).toBeNull();
    expect((await post(chunk(b, 0, 'é'.repeat(150)), { path: site.path })).body.data.type).toBe('event_recorded'); // exactly 300
    expect(Number(await ctx.redis.get(dayKey))).toBe(cap);
    expect((await post(chunk(b, 1, 'x'), { path: site.path })).body.data.reason).toBe('replay_quota_exceeded');
    // Other event types are never charged.
    expect((await post(event({ session_id: b }), { path: site.path })).body.data.type).toBe('event_recorded');
  });

  it('a chunk that cannot be queued gives its bytes back, so its retry is not refused', async () => {
    const site = await replaySite('retry.example.com');
    const s = `sess-${randomUUID()}`;
    const deps = (enqueue: BrowserDeps['enqueue']): BrowserDeps => ({
      sites: new SiteConfigCache(ctx.pool),
      salts: new DailySalts(ctx.redis, ctx.config.REDIS_PREFIX),
      redis: ctx.redis,
      redisPrefix: ctx.config.REDIS_PREFIX,
      enrichers: {},
      enqueue,
    });
    const req = {
      trackingCode: site.tracking_code,
      event: browserEventSchema.parse(chunk(s, 0, 'x'.repeat(4_000))),
      ip: '127.0.0.1',
      userAgentHeader: CHROME,
      gpc: false,
      now: Date.now(),
    };
    await expect(
      ingestBrowserEvent(
        deps(async () => Promise.reject(new Error('queue down'))),
        req,
      ),
    ).rejects.toMatchObject({ status: 503 });
    const [sessionKey, dayKey] = replayQuotaKeys(ctx.config.REDIS_PREFIX, site.id, s, req.now);
    expect(Number((await ctx.redis.get(sessionKey)) ?? 0)).toBe(0);
    expect(Number((await ctx.redis.get(dayKey)) ?? 0)).toBe(0);
    expect(
      await ingestBrowserEvent(
        deps(async () => undefined),
        req,
      ),
    ).toEqual({ kind: 'recorded' });
    expect(Number(await ctx.redis.get(sessionKey))).toBe(4_000);
  });
});

describe('input PostgreSQL would refuse', () => {
  it('NUL characters and lone surrogates are cleaned, never poisoning the flush; long fields are cut, not refused', async () => {
    const s = `sess-${randomUUID()}`;
    const nasty = 'bad\u0000message \ud800 here';
    const res = await post(
      event({
        session_id: s,
        event_type: 'error',
        message: nasty,
        error_type: 'Type\u0000Error',
        visitor_id: 'v\u0000x',
      }),
    );
    expect(res.status).toBe(200);
    const longUrl = `https://www.example.com/search?q=${'x'.repeat(5000)}`;
    const long = await post(event({ session_id: s, url: longUrl, stack: 'y'.repeat(20_000) }));
    expect(long.status).toBe(200);
    expect(await waitForEvents(ctx, 2, `session_id = '${s}'`)).toBe(2);
    const groups = await ctx.pool.query(
      `SELECT message, type FROM error_groups WHERE website_id = $1 AND message LIKE 'bad%'`,
      [site.id],
    );
    expect(groups.rows).toEqual([{ message: 'badmessage \ufffd here', type: 'TypeError' }]);
    const [stored] = await (
      await ctx.clickhouse.query({
        query: `SELECT message FROM error_events WHERE session_id = '${s}'`,
        format: 'JSONEachRow',
      })
    ).json<{ message: string }>();
    expect(stored.message).toBe('badmessage \ufffd here');
    const [row] = await (
      await ctx.clickhouse.query({
        query: `SELECT length(url) AS n FROM events WHERE session_id = '${s}' AND type = 'pageview'`,
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    expect(Number(row.n)).toBe(2048);
  });
});

describe('tracking settings and the tracker', () => {
  it('PUT /tracking merges booleans (editor) and the config endpoint reflects them at once', async () => {
    const res = await call('PUT', `/api/websites/${site.id}/tracking`, {
      token: owner.token,
      body: { heatmaps: true, track_downloads: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.settings).toEqual({
      track_outbound_links: true,
      track_downloads: false,
      session_replay: false,
      heatmaps: true,
    });
    const cfg = await call('GET', `/api/events/${site.tracking_code}/config`);
    expect(cfg.body.data.settings).toMatchObject({ heatmaps: true, track_downloads: false });
    expect(cfg.headers.get('cache-control')).toBe('public, max-age=60');
    expect(
      (await call('PUT', `/api/websites/${site.id}/tracking`, { token: owner.token, body: { heatmaps: 'yes' } }))
        .status,
    ).toBe(400);
  });

  it('serves /tracker.js and its hashed copy, core under 2 KB gzipped', async () => {
    const { gzipSync } = await import('node:zlib');
    const res = await fetch(`${ctx.baseUrl}/tracker.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    const body = await res.text();
    expect(gzipSync(body, { level: 9 }).length).toBeLessThanOrEqual(2048);
    const manifest = JSON.parse(
      require('node:fs').readFileSync(
        require('node:path').join(PROJECT_ROOT, 'dist', 'tracker', 'manifest.json'),
        'utf8',
      ),
    );
    const hashed = await fetch(`${ctx.baseUrl}/tracker/${manifest.core}`);
    expect(await hashed.text()).toBe(body);
    expect(hashed.headers.get('cache-control')).toMatch(/immutable/);
    expect(body).toContain(manifest.replay);
    expect(body).not.toContain('rrweb');
  });
});
