import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { type RealtimeData, realtimeData } from '../../../../lib/external/schemas';
import { createLogger } from '../../../../lib/log';
import {
  LIVE_MS,
  type PresenceHit,
  presenceSink,
  realtimeCounts,
  realtimeSnapshot,
  recordPresence,
} from '../../../../lib/realtime/presence';
import { type Redis, redisKey } from '../../../../lib/redis';
import { createWebsite, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { CHROME, type IngestFixture, ingestFixture, pageview } from '../../../helpers/ingest';

const MIN = 60_000;

let ctx: TestContext;

// TRUST_PROXY lets a browser test give itself a geolocatable address through X-Forwarded-For.
beforeAll(async () => {
  ctx = await createTestContext({ TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  await ctx.close();
});

const prefix = () => ctx.config.REDIS_PREFIX;
const record = (hits: PresenceHit[], now: number) => recordPresence(ctx.redis, prefix(), hits, now);
const snapshot = (websiteId: string, now: number) => realtimeSnapshot(ctx.redis, prefix(), websiteId, now);
const hit = (websiteId: string, over: Partial<PresenceHit> = {}): PresenceHit => ({
  websiteId,
  visitorId: randomUUID(),
  pathname: '/',
  countryCode: '',
  ts: Date.now(),
  ...over,
});

async function keysOf(websiteId: string): Promise<string[]> {
  return (await ctx.redis.keys(redisKey(prefix(), 'rt', websiteId, '*'))).sort();
}

/** The hooks are fire-and-forget: poll until the snapshot satisfies `done`, then return it. */
async function waitForSnapshot(
  websiteId: string,
  done: (s: RealtimeData) => boolean,
  timeoutMs = 5_000,
): Promise<RealtimeData> {
  const end = Date.now() + timeoutMs;
  let s = await realtimeSnapshot(ctx.redis, prefix(), websiteId);
  while (!done(s) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    s = await realtimeSnapshot(ctx.redis, prefix(), websiteId);
  }
  return s;
}

describe('through server ingestion (POST /api/v1/events)', () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await ingestFixture(ctx, 'pro');
  });

  it('records accepted pageviews only: latest page per visitor, countries from props and geo', async () => {
    const now = Date.now();
    const a = randomUUID();
    const b = randomUUID();
    const c = randomUUID();
    const res = await fx.post(
      [
        // Visitor a moves from /pricing to /checkout; the later page is sent first to prove ts, not order, decides.
        pageview({ visitorId: a, ts: now - 1_000 }, { url: 'https://shop.example.com/checkout', country_code: 'de' }),
        pageview({ visitorId: a, ts: now - 2_000 }, { url: 'https://shop.example.com/pricing', country_code: 'DE' }),
        // No country prop: geo of the batch's client address fills it.
        pageview({ visitorId: b }, { url: 'https://shop.example.com/pricing' }),
        // Accepted but not pageviews, or too old to be live or in the 30-minute window: not counted.
        { type: 'event', ts: now, sessionId: randomUUID(), visitorId: randomUUID(), props: { name: 'signup' } },
        pageview({ visitorId: randomUUID(), ts: now - 40 * MIN }, { url: 'https://shop.example.com/old' }),
        // Rejected: not counted.
        pageview({ visitorId: 'not-a-uuid' }, { url: 'https://shop.example.com/rejected' }),
      ],
      { serverContext: { clientIp: '8.8.8.8' } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ acceptedCount: 5, rejectedCount: 1 });

    // A repeat of an accepted event is deduped and must not count again; c arrives after it on the same
    // connection, so once c is visible the repeat would have been too.
    const repeat = pageview(
      { visitorId: randomUUID() },
      { url: 'https://shop.example.com/pricing', country_code: 'FR' },
    );
    expect((await fx.post([repeat])).body).toMatchObject({ acceptedCount: 1 });
    expect((await fx.post([repeat])).body).toMatchObject({ acceptedCount: 0, dedupedCount: 1 });
    expect((await fx.post([pageview({ visitorId: c }, { url: 'https://shop.example.com/about' })])).body).toMatchObject(
      { acceptedCount: 1 },
    );

    const s = await waitForSnapshot(fx.website.id, (x) => x.top_pages.some((p) => p.url === '/about'));
    expect(realtimeData.parse(s)).toEqual(s);
    expect(s).toMatchObject({
      website_id: fx.website.id,
      live_visitors: 4,
      pageviews_last_30m: 5,
      top_pages: [
        { url: '/pricing', visitors: 2 },
        { url: '/about', visitors: 1 },
        { url: '/checkout', visitors: 1 },
      ],
      // c has neither a country prop nor a client address: unknown, so absent.
      countries: [
        { country_code: 'DE', visitors: 1 },
        { country_code: 'FR', visitors: 1 },
        { country_code: 'US', visitors: 1 },
      ],
    });
  });
});

describe('through browser ingestion (POST /api/events/:code)', () => {
  it('records accepted pageviews; custom events and ignored requests are not counted', async () => {
    const owner = await registerUser(ctx, 'pro', 'presence');
    const site = await createWebsite(ctx, owner, 'www.example.com');
    const call = client(ctx.baseUrl);
    const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call('POST', `/api/events/${site.tracking_code}`, {
        headers: { 'user-agent': CHROME, ...headers },
        body: {
          session_id: `sess-${randomUUID()}`,
          device_type: 'desktop',
          browser: 'Chrome',
          os: 'macOS',
          user_agent: CHROME,
          ...body,
        },
      });

    const custom = await send({
      event_type: 'custom',
      event_name: 'cta',
      url: 'https://www.example.com/custom',
      visitor_id: randomUUID(),
    });
    expect(custom.body.data.type).toBe('event_recorded');
    const bot = await send(
      { event_type: 'pageview', url: 'https://www.example.com/bot' },
      { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' },
    );
    expect(bot.body.data.type).toBe('event_ignored');

    const visitor = randomUUID();
    for (const path of ['/docs/start', '/docs/install']) {
      const res = await send(
        { event_type: 'pageview', url: `https://www.example.com${path}?x=1`, visitor_id: visitor },
        { 'x-forwarded-for': '8.8.8.8' },
      );
      expect(res.body.data.type).toBe('event_recorded');
    }
    // Cookieless and from loopback: a hashed visitor id, unknown country.
    expect((await send({ event_type: 'pageview', url: 'https://www.example.com/docs/start' })).body.data.type).toBe(
      'event_recorded',
    );

    const s = await waitForSnapshot(site.id, (x) => x.pageviews_last_30m >= 3);
    expect(s).toMatchObject({
      website_id: site.id,
      live_visitors: 2,
      pageviews_last_30m: 3,
      top_pages: [
        { url: '/docs/install', visitors: 1 },
        { url: '/docs/start', visitors: 1 },
      ],
      countries: [{ country_code: 'US', visitors: 1 }],
    });
  });
});

describe('recordPresence and realtimeSnapshot', () => {
  it('a visitor is live for 5 minutes after their last pageview, and stale visitors are pruned on read', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record([hit(site, { ts: t, pathname: '/a', countryCode: 'SE' })], t);

    const at4 = await snapshot(site, t + 4 * MIN);
    expect(at4).toMatchObject({
      live_visitors: 1,
      top_pages: [{ url: '/a', visitors: 1 }],
      countries: [{ country_code: 'SE', visitors: 1 }],
    });
    expect(at4.as_of).toBe(new Date(t + 4 * MIN).toISOString());

    const at6 = await snapshot(site, t + 6 * MIN);
    expect(at6).toMatchObject({ live_visitors: 0, pageviews_last_30m: 1, top_pages: [], countries: [] });
    // The read removed the stale member from both structures (an empty zset or hash is deleted).
    expect(await keysOf(site)).toEqual([redisKey(prefix(), 'rt', site, 'pv', String(Math.floor(t / MIN)))]);
  });

  it('a visitor who moved pages counts once, on their latest page, whatever the arrival order', async () => {
    const site = randomUUID();
    const v = randomUUID();
    const t = Date.now();
    await record([hit(site, { visitorId: v, ts: t - 2 * MIN, pathname: '/first' })], t);
    await record([hit(site, { visitorId: v, ts: t - MIN, pathname: '/latest', countryCode: 'NO' })], t);
    // A late hit with an older ts must not move the visitor back.
    await record([hit(site, { visitorId: v, ts: t - 3 * MIN, pathname: '/late' })], t);
    // Within one call, too: the later ts wins even when it comes first.
    const w = randomUUID();
    await record(
      [
        hit(site, { visitorId: w, ts: t, pathname: '/w-latest' }),
        hit(site, { visitorId: w, ts: t - MIN, pathname: '/w-earlier' }),
      ],
      t,
    );

    const s = await snapshot(site, t);
    expect(s).toMatchObject({
      live_visitors: 2,
      pageviews_last_30m: 5,
      top_pages: [
        { url: '/latest', visitors: 1 },
        { url: '/w-latest', visitors: 1 },
      ],
      countries: [{ country_code: 'NO', visitors: 1 }],
    });
    // Last seen follows the newest hit: just over 5 minutes after it, v is gone while w (seen a minute later) is not.
    expect(Number(await ctx.redis.zscore(redisKey(prefix(), 'rt', site, 'seen'), v))).toBe(t - MIN);
    expect((await snapshot(site, t - MIN + LIVE_MS + 1)).live_visitors).toBe(1);
  });

  it('pageviews count for 30 minutes (per-minute buckets), not 31', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record([hit(site, { ts: t }), hit(site, { ts: t })], t);
    expect((await snapshot(site, t)).pageviews_last_30m).toBe(2);
    expect((await snapshot(site, t + 29 * MIN)).pageviews_last_30m).toBe(2);
    expect((await snapshot(site, t + 31 * MIN)).pageviews_last_30m).toBe(0);
  });

  it('realtimeCounts gives the snapshot’s counts at every moment, stale visitors and old minutes excluded', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record(
      [
        hit(site, { ts: t - 6 * MIN }),
        hit(site, { ts: t - 4 * MIN }),
        hit(site, { ts: t }),
        hit(site, { ts: t, visitorId: '' }),
      ],
      t,
    );
    expect(await realtimeCounts(ctx.redis, prefix(), site, t)).toMatchObject({
      live_visitors: 2,
      pageviews_last_30m: 4,
    });
    for (const at of [t, t + 2 * MIN, t + 5 * MIN + 1, t + 25 * MIN, t + 31 * MIN]) {
      // Counts first: the snapshot prunes what it walks, and the counts must not depend on that.
      const counts = await realtimeCounts(ctx.redis, prefix(), site, at);
      const s = await snapshot(site, at);
      expect(counts).toEqual({
        live_visitors: s.live_visitors,
        pageviews_last_30m: s.pageviews_last_30m,
        as_of: s.as_of,
      });
    }
  });

  it('ignores hits older than 30 minutes and clamps future ones to now', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record(
      [hit(site, { ts: t - 31 * MIN }), hit(site, { ts: t - 30 * MIN - 1 }), hit(site, { ts: Number.NaN })],
      t,
    );
    expect(await keysOf(site)).toEqual([]);
    expect(await snapshot(site, t)).toMatchObject({ live_visitors: 0, pageviews_last_30m: 0 });

    // 10 to 30 minutes old: a pageview in the window, but not a live visitor.
    await record([hit(site, { ts: t - 10 * MIN, pathname: '/earlier' })], t);
    expect(await snapshot(site, t)).toMatchObject({ live_visitors: 0, pageviews_last_30m: 1, top_pages: [] });

    const future = randomUUID();
    await record([hit(site, { visitorId: future, ts: t + 10 * MIN, pathname: '/future' })], t);
    expect(Number(await ctx.redis.zscore(redisKey(prefix(), 'rt', site, 'seen'), future))).toBe(t);
    expect((await snapshot(site, t + 4 * MIN)).live_visitors).toBe(1);
    expect((await snapshot(site, t + 6 * MIN)).live_visitors).toBe(0);
  });

  it('gives every key a TTL: 6 minutes for presence, minute start + 31 minutes for counters', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record([hit(site, { ts: t, pathname: '/x', countryCode: 'FI' }), hit(site, { ts: t - 12 * MIN })], t);
    const keys = await keysOf(site);
    expect(keys).toHaveLength(4); // seen, where, two minute counters
    for (const key of keys) {
      const ttl = await ctx.redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      if (key.endsWith(':seen') || key.endsWith(':where')) {
        expect(ttl).toBeLessThanOrEqual(6 * MIN);
        expect(ttl).toBeGreaterThan(5 * MIN);
      } else {
        const minute = Number(key.split(':').pop());
        const expected = minute * MIN + 31 * MIN - t;
        expect(Math.abs(ttl - expected)).toBeLessThan(5_000);
      }
    }
  });

  it('prunes stale visitors on write, so an active website does not accumulate them', async () => {
    const site = randomUUID();
    const t = Date.now();
    await record(
      Array.from({ length: 150 }, () => hit(site, { ts: t })),
      t,
    );
    const seen = () => ctx.redis.zcard(redisKey(prefix(), 'rt', site, 'seen'));
    const where = () => ctx.redis.hlen(redisKey(prefix(), 'rt', site, 'where'));
    // One small write removes a bounded number of stale members (so its cost stays small)…
    await record([hit(site, { ts: t + 6 * MIN })], t + 6 * MIN);
    const afterOne = await seen();
    expect(afterOne).toBeLessThan(151);
    expect(await where()).toBe(afterOne);
    // …and the next ones finish the job: only the two live visitors remain, in both structures.
    await record([hit(site, { ts: t + 6 * MIN })], t + 6 * MIN);
    expect(await seen()).toBe(2);
    expect(await where()).toBe(2);
  });

  it('countries exclude unknown ones; lists sort by visitors then name and stop at 10', async () => {
    const site = randomUUID();
    const t = Date.now();
    const hits = [
      hit(site, { countryCode: 'de', pathname: '/b' }),
      hit(site, { countryCode: 'DE', pathname: '/b' }),
      hit(site, { countryCode: 'AT', pathname: '/a' }),
      hit(site, { countryCode: 'CH', pathname: '/a' }),
      hit(site, { countryCode: '', pathname: '/c' }),
      hit(site, { countryCode: 'unknown', pathname: '/c' }),
      hit(site, { countryCode: 'A\t', pathname: '/c' }),
      ...Array.from({ length: 12 }, (_, i) => hit(site, { pathname: `/p${String(i).padStart(2, '0')}` })),
    ].map((h) => ({ ...h, ts: t }));
    await record(hits, t);
    const s = await snapshot(site, t);
    expect(s.live_visitors).toBe(hits.length);
    expect(s.countries).toEqual([
      { country_code: 'DE', visitors: 2 },
      { country_code: 'AT', visitors: 1 },
      { country_code: 'CH', visitors: 1 },
    ]);
    expect(s.top_pages).toHaveLength(10);
    expect(s.top_pages.slice(0, 5)).toEqual([
      { url: '/c', visitors: 3 },
      { url: '/a', visitors: 2 },
      { url: '/b', visitors: 2 },
      { url: '/p00', visitors: 1 },
      { url: '/p01', visitors: 1 },
    ]);
    expect(s.top_pages[9]).toEqual({ url: '/p06', visitors: 1 });
  });

  it('handles several websites in one call and keeps them apart', async () => {
    const one = randomUUID();
    const two = randomUUID();
    const t = Date.now();
    await record(
      [
        hit(one, { pathname: '/one', ts: t }),
        hit(two, { pathname: '/two', ts: t }),
        hit(two, { pathname: '/two', ts: t }),
      ],
      t,
    );
    expect(await snapshot(one, t)).toMatchObject({
      live_visitors: 1,
      pageviews_last_30m: 1,
      top_pages: [{ url: '/one', visitors: 1 }],
    });
    expect(await snapshot(two, t)).toMatchObject({
      live_visitors: 2,
      pageviews_last_30m: 2,
      top_pages: [{ url: '/two', visitors: 2 }],
    });
    expect(await snapshot(randomUUID(), t)).toMatchObject({
      live_visitors: 0,
      pageviews_last_30m: 0,
      top_pages: [],
      countries: [],
    });
  });

  it('the ingest hook never throws and logs Redis failures at warn', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('warn', 'test', sink);
    // Stand-ins for a Redis that refuses the command, asynchronously (the usual case) and synchronously.
    const failing = (fail: () => Promise<unknown>) =>
      ({ defineCommand: () => undefined, tidemarkPresenceWrite: fail }) as unknown as Redis;
    const rejects = presenceSink(
      failing(() => Promise.reject(new Error('connection is closed'))),
      prefix(),
      logger,
    );
    const throws = presenceSink(
      failing(() => {
        throw new Error('stream not writeable');
      }),
      prefix(),
      logger,
    );

    expect(() => rejects([hit(randomUUID())])).not.toThrow();
    expect(() => throws([hit(randomUUID())])).not.toThrow();
    const end = Date.now() + 2_000;
    while (lines.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(
      lines
        .map((l) => JSON.parse(l))
        .map((l) => [l.level, l.msg, l.err])
        .sort(),
    ).toEqual([
      [40, 'realtime presence not recorded', 'connection is closed'],
      [40, 'realtime presence not recorded', 'stream not writeable'],
    ]);
  });
});
