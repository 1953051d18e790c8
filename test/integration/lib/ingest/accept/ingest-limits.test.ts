import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createApp } from '../../../../../api/app';
import { setTeamLimits } from '../../../../../lib/accounts/teams';
import { shardOf } from '../../../../../lib/ingest/accept/dedupe';
import { createProducerQueue, QUEUE_NAMES } from '../../../../../lib/queue/queues';
import { createApiKey, createWebsite } from '../../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { client } from '../../../../helpers/http';
import {
  CHROME,
  countEvents,
  type IngestFixture,
  ingestFixture,
  pageview,
  startTestWorker,
  waitForEvents,
} from '../../../../helpers/ingest';
import { startPrivateRedis } from '../../../../helpers/privateRedis';

let ctx: TestContext;
let fx: IngestFixture;

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx, 'pro');
});
afterAll(() => ctx.close());

describe('rate limits', () => {
  it('sends X-RateLimit-* on every response and 429 with Retry-After past the per-minute limit', async () => {
    await setTeamLimits(ctx.pool, fx.user.teamId, { rpm: 3 });
    const { key } = await createApiKey(ctx, fx.user);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await fx.post([pageview()], { key }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(replies.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
    expect(replies.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    const reset = Number(replies[0].headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    expect(Number(replies[3].headers.get('retry-after'))).toBeGreaterThan(0);
    expect(replies[3].body).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    // Every ingestion 429 also says where the monthly quota stands.
    expect(Number(replies[3].headers.get('x-usage-limit'))).toBe(10_000);
    expect(Number(replies[3].headers.get('x-usage-remaining'))).toBeLessThan(10_000);
    expect(Number(replies[3].headers.get('x-usage-reset'))).toBeGreaterThan(Date.now() / 1000);
    // Windows are per key: another key of the same team is not limited by this one.
    const other = await createApiKey(ctx, fx.user);
    expect((await fx.post([pageview()], { key: other.key })).status).toBe(200);
  });

  it('401s are not counted against the window', async () => {
    await setTeamLimits(ctx.pool, fx.user.teamId, { rpm: 2 });
    const { key } = await createApiKey(ctx, fx.user);
    for (let i = 0; i < 5; i++) expect((await fx.post([pageview()], { key: `${key}x` })).status).toBe(401);
    expect((await fx.post([pageview()], { key })).status).toBe(200);
    // Later tests of this file send many requests with the fixture's key.
    await setTeamLimits(ctx.pool, fx.user.teamId, { rpm: null, monthly: null });
  });

  it('the monthly quota answers 429 with X-Usage-* and refunds requests that fail', async () => {
    // The quota is per team: a fresh team starts at zero.
    const own = await ingestFixture(ctx, 'pro');
    await setTeamLimits(ctx.pool, own.user.teamId, { rpm: null, monthly: 2 });
    const key = own.key;
    const post = own.post;
    const bad = await post([pageview()], { key, trackingCode: 'tm-unknown' });
    expect(bad.status).toBe(404); // refunded: does not use the quota
    const ok1 = await post([pageview()], { key });
    const ok2 = await post([pageview()], { key });
    const over = await post([pageview()], { key });
    expect([ok1.status, ok2.status, over.status]).toEqual([200, 200, 429]);
    expect(ok1.headers.get('x-usage-limit')).toBe('2');
    expect(ok1.headers.get('x-usage-remaining')).toBe('1');
    expect(over.headers.get('x-usage-limit')).toBe('2');
    expect(over.headers.get('x-usage-remaining')).toBe('0');
    const reset = Number(over.headers.get('x-usage-reset'));
    const now = new Date();
    expect(reset).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000);
    expect(over.body.error.code).toBe('RATE_LIMITED');
  });
});

describe('Redis unreachable for the queue', () => {
  it('answers 503 with Retry-After, writes nothing, and frees the keys so the retry is accepted once', async () => {
    // A queue whose Redis is a closed port; limits and idempotency keys stay on the shared Redis.
    const deadQueue = createProducerQueue(QUEUE_NAMES.ingest, 'redis://127.0.0.1:1', ctx.config.REDIS_PREFIX);
    const app = createApp({ ...ctx, ingestQueue: deadQueue });
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const worker = await startTestWorker(ctx);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const events = [pageview(), pageview(), pageview()];
      const body = { trackingCode: fx.website.tracking_code, events };
      const refused = await client(url)('POST', '/api/v1/events', { token: fx.key, body });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const retry = await client(ctx.baseUrl)('POST', '/api/v1/events', { token: fx.key, body });
      expect(retry.body).toEqual({ acceptedCount: 3, dedupedCount: 0, rejectedCount: 0, errors: [] });
      const where = `idempotency_key IN (${events.map((e) => `'${e.idempotencyKey}'`).join(',')})`;
      expect(await waitForEvents(ctx, 3, where)).toBe(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(await countEvents(ctx, where)).toBe(3);
    } finally {
      server.close();
      await deadQueue.close().catch(() => undefined);
      await worker.stop();
    }
  });
});

describe('queue Redis nearly full (QUEUE_MEMORY_LIMIT_PERCENT)', () => {
  it('answers 503 with Retry-After on both ingestion paths without claiming a key, and takes the same events once there is room', async () => {
    // The queue on a Redis of this test's own, whose maxmemory the test moves; keys stay on the shared one.
    const own = await startPrivateRedis();
    const queue = createProducerQueue(QUEUE_NAMES.ingest, own.url, ctx.config.REDIS_PREFIX);
    const app = createApp({ ...ctx, config: { ...ctx.config, QUEUE_MEMORY_LIMIT_PERCENT: 90 }, ingestQueue: queue });
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const call = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const jobs = async () =>
      Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).reduce((a, b) => a + b, 0);
    const usedMemory = async () => Number(/^used_memory:(\d+)/m.exec(await own.admin.info('memory'))![1]);
    const afterSample = () => new Promise((r) => setTimeout(r, 1_100)); // the web samples INFO memory once a second
    const domain = `full-${randomUUID().slice(0, 8)}.example.com`;
    const website = await createWebsite(ctx, fx.user, domain);
    const events = [pageview(), pageview(), pageview()];
    const body = { trackingCode: website.tracking_code, events };
    const browserEvent = {
      event_type: 'pageview',
      session_id: `sess-${randomUUID()}`,
      url: `https://${domain}/a`,
      referrer: '',
      device_type: 'desktop',
      browser: 'Chrome',
      os: 'macOS',
      user_agent: CHROME,
      screen_width: 1440,
      screen_height: 900,
      language: 'en-US',
    };
    try {
      // Room: accepted and queued.
      expect(
        (
          await call('POST', '/api/v1/events', {
            token: fx.key,
            body: { trackingCode: website.tracking_code, events: [pageview()] },
          })
        ).status,
      ).toBe(200);
      expect(await jobs()).toBe(1);
      // 95 % of maxmemory used: refused.
      await own.admin.config('SET', 'maxmemory', String(Math.ceil((await usedMemory()) / 0.95)));
      await afterSample();
      const refused = await call('POST', '/api/v1/events', { token: fx.key, body });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
      expect(refused.headers.get('retry-after')).toBe('10');
      // Refused before the claim: no claim and no tombstone of a released one.
      const day = Math.floor(Number((await ctx.redis.time())[0]) / 86400);
      for (const e of events) {
        expect(
          await ctx.redis.hget(
            `${ctx.config.REDIS_PREFIX}:idem2:{${website.id}}:${day}:${shardOf(e.idempotencyKey)}`,
            e.idempotencyKey,
          ),
        ).toBeNull();
      }
      const beacon = await call('POST', `/api/events/${website.tracking_code}`, {
        headers: { 'user-agent': CHROME },
        body: browserEvent,
      });
      expect([beacon.status, beacon.body.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(await jobs()).toBe(1);
      // Room again: the same events are accepted, not taken for duplicates of the refused request.
      await own.admin.config('SET', 'maxmemory', '0');
      await afterSample();
      const retry = await call('POST', '/api/v1/events', { token: fx.key, body });
      expect(retry.body).toEqual({ acceptedCount: 3, dedupedCount: 0, rejectedCount: 0, errors: [] });
      expect(
        (
          await call('POST', `/api/events/${website.tracking_code}`, {
            headers: { 'user-agent': CHROME },
            body: browserEvent,
          })
        ).status,
      ).toBe(200);
      expect(await jobs()).toBe(3);
    } finally {
      server.close();
      await queue.close().catch(() => undefined);
      await own.stop();
    }
  });
});

describe('property: any batch is fully accounted for and never a 500', () => {
  it('random batches', async () => {
    const base = Date.now();
    const id = fc.oneof(fc.uuid(), fc.string({ maxLength: 10 }), fc.constant(undefined), fc.integer());
    const anyValue = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
    );
    const event = fc.oneof(
      fc.record(
        {
          type: fc.oneof(
            fc.constantFrom('pageview', 'event', 'identify', 'goal', 'purchase'),
            fc.string({ maxLength: 8 }),
          ),
          ts: fc.oneof(
            fc.integer({ min: base - 30 * 3600_000, max: base + 30 * 3600_000 }),
            fc.string({ maxLength: 5 }),
            fc.constant(undefined),
          ),
          sessionId: id,
          visitorId: id,
          idempotencyKey: fc.oneof(fc.string({ maxLength: 140 }), fc.constant(undefined), fc.integer()),
          consent: fc.oneof(
            fc.constantFrom('opt-in', 'opt-out', 'unknown'),
            fc.constant(undefined),
            fc.string({ maxLength: 4 }),
          ),
          props: fc.oneof(
            fc.dictionary(
              fc.constantFrom(
                'url',
                'name',
                'email',
                'amount',
                'payment_provider',
                'currency',
                'referrer',
                'screen_width',
                'x',
              ),
              anyValue,
            ),
            anyValue,
          ),
        },
        { requiredKeys: [] },
      ),
      anyValue,
      fc.array(anyValue, { maxLength: 2 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 30 }), fc.boolean(), async (events, gpc) => {
        const res = await fx.post(events, { headers: gpc ? { 'sec-gpc': '1' } : {} });
        expect(res.status).toBe(200);
        const b = res.body;
        expect(b.acceptedCount + b.dedupedCount + b.rejectedCount).toBe(events.length);
        expect(b.errors).toHaveLength(b.rejectedCount);
        const indexes = b.errors.map((e: { index: number }) => e.index);
        expect([...indexes].sort((x, y) => x - y)).toEqual(indexes);
        expect(new Set(indexes).size).toBe(indexes.length);
        if (gpc) expect(b.acceptedCount).toBe(0);
      }),
      { numRuns: 60 },
    );
  });
});

describe('key hygiene', () => {
  it('stores neither the raw client IP nor the API key anywhere in Redis, PostgreSQL or ClickHouse', async () => {
    const worker = await startTestWorker(ctx);
    try {
      const ip = '203.0.113.77';
      const ev = pageview({ idempotencyKey: randomUUID() });
      expect((await fx.post([ev], { serverContext: { clientIp: ip } })).status).toBe(200);
      await waitForEvents(ctx, 1, `idempotency_key = '${ev.idempotencyKey}'`);
      const dump = await (await ctx.clickhouse.query({ query: 'SELECT * FROM events', format: 'TabSeparated' })).text();
      expect(dump).toContain(ev.idempotencyKey);
      expect(dump).not.toContain(ip);
      expect(dump).not.toContain(fx.key);
      const tables = await ctx.pool.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
      for (const { tablename } of tables.rows) {
        const rows = await ctx.pool.query(`SELECT row_to_json(t)::text AS r FROM ${tablename} t`);
        const text = rows.rows.map((r) => r.r).join('\n');
        expect(text).not.toContain(ip);
        expect(text).not.toContain(fx.key);
      }
      const keys = await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:*`);
      for (const k of keys) {
        expect(k).not.toContain(ip);
        expect(k).not.toContain(fx.key);
        const type = await ctx.redis.type(k);
        const value =
          type === 'string'
            ? await ctx.redis.get(k)
            : type === 'hash'
              ? JSON.stringify(await ctx.redis.hgetall(k))
              : '';
        expect(value ?? '').not.toContain(ip);
        expect(value ?? '').not.toContain(fx.key);
      }
    } finally {
      await worker.stop();
    }
  });
});
