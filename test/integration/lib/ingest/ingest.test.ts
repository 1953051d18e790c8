import { randomUUID } from 'node:crypto';
import { createGoal } from '../../../../lib/accounts/goals';
import { createApiKey, createWebsite, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import {
  countEvents,
  type IngestFixture,
  ingestFixture,
  pageview,
  startTestWorker,
  waitForEvents,
} from '../../../helpers/ingest';

let ctx: TestContext;
let fx: IngestFixture;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker.stop();
  await ctx.close();
});

const HOUR = 3600_000;

describe('POST /api/v1/events — accepted events', () => {
  it('accepts a pageview, queues it durably, and the worker stores it enriched', async () => {
    const ev = pageview({}, { referrer: 'https://www.google.com/search?q=x', device_type: 'mobile' });
    const res = await fx.post([ev], {
      serverContext: {
        clientIp: '8.8.8.8',
        userAgent:
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        acceptLanguage: 'de-DE,de;q=0.9',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ acceptedCount: 1, dedupedCount: 0, rejectedCount: 0, errors: [] });
    expect(await waitForEvents(ctx, 1, `visitor_id = '${ev.visitorId}'`)).toBe(1);
    const [row] = await (
      await ctx.clickhouse.query({
        query: `SELECT * FROM events WHERE visitor_id = {v:String}`,
        query_params: { v: ev.visitorId },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    expect(row).toMatchObject({
      website_id: fx.website.id,
      type: 'pageview',
      source: 'server',
      session_id: ev.sessionId,
      hostname: 'shop.example.com',
      pathname: '/pricing',
      utm_source: 'newsletter',
      source_name: 'newsletter',
      referrer_domain: 'google.com',
      device_type: 'mobile',
      browser: 'Chrome',
      os: 'Windows',
      country_code: 'US',
      language: 'de-DE',
      idempotency_key: ev.idempotencyKey,
    });
    expect(row.ip_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain('8.8.8.8');
  });

  it('stores the sentinel "unknown" as IP hash when no clientIp is given, and fills sessions', async () => {
    const ev = pageview();
    expect((await fx.post([ev])).body.acceptedCount).toBe(1);
    expect(await waitForEvents(ctx, 1, `visitor_id = '${ev.visitorId}'`)).toBe(1);
    const [row] = await (
      await ctx.clickhouse.query({
        query: `SELECT ip_hash FROM events WHERE visitor_id = '${ev.visitorId}'`,
        format: 'JSONEachRow',
      })
    ).json<{ ip_hash: string }>();
    expect(row.ip_hash).toBe('unknown');
    const sessions = await (
      await ctx.clickhouse.query({
        query: `SELECT session_id, sum(pageviews) AS pv, argMinMerge(entry_page) AS entry FROM sessions WHERE session_id = {s:String} GROUP BY session_id`,
        query_params: { s: ev.sessionId },
        format: 'JSONEachRow',
      })
    ).json<{ session_id: string; pv: string; entry: string }>();
    expect(sessions).toEqual([{ session_id: ev.sessionId, pv: '1', entry: '/pricing' }]);
  });

  it('accepts every type and writes identify and purchase to PostgreSQL with defaults', async () => {
    await createGoal(ctx.pool, fx.website.id, fx.user.id, { name: 'Signup', kind: 'event' });
    const visitor = randomUUID();
    const session = randomUUID();
    const now = Date.now();
    const res = await fx.post([
      { type: 'event', ts: now, visitorId: visitor, props: { name: 'Clicked CTA', plan: 'pro' } },
      { type: 'identify', ts: now, visitorId: visitor, props: { email: 'ada@example.com', tier: 'gold' } },
      { type: 'identify', ts: now + 1, visitorId: visitor, props: { company: 'Acme', seats: 5 } },
      { type: 'goal', ts: now, visitorId: visitor, sessionId: session, props: { name: 'Signup', value: 3 } },
      {
        type: 'purchase',
        ts: now,
        visitorId: visitor,
        idempotencyKey: `buy-${visitor}`,
        props: { amount: 49.5, plan_name: 'Pro' },
      },
      {
        type: 'purchase',
        ts: now,
        visitorId: visitor,
        props: {
          amount: 10,
          currency: 'eur',
          payment_provider: 'stripe',
          status: 'refunded',
          provider_event_id: 'evt_1',
        },
      },
    ]);
    expect(res.body).toEqual({ acceptedCount: 6, dedupedCount: 0, rejectedCount: 0, errors: [] });
    expect(await waitForEvents(ctx, 6, `visitor_id = '${visitor}'`)).toBe(6);
    const user = await ctx.pool.query(
      'SELECT email, company, attributes FROM identified_users WHERE website_id = $1 AND visitor_id = $2',
      [fx.website.id, visitor],
    );
    expect(user.rows).toEqual([{ email: 'ada@example.com', company: 'Acme', attributes: { tier: 'gold', seats: 5 } }]);
    const pays = await ctx.pool.query(
      'SELECT amount::float AS amount, currency, payment_provider, status, plan_name, provider_event_id FROM payments WHERE website_id = $1 AND visitor_id = $2 ORDER BY amount',
      [fx.website.id, visitor],
    );
    expect(pays.rows).toEqual([
      {
        amount: 10,
        currency: 'EUR',
        payment_provider: 'stripe',
        status: 'refunded',
        plan_name: null,
        provider_event_id: 'evt_1',
      },
      {
        amount: 49.5,
        currency: 'USD',
        payment_provider: 'server',
        status: 'succeeded',
        plan_name: 'Pro',
        provider_event_id: null,
      },
    ]);
  });

  it('NUL characters and lone surrogates are cleaned instead of failing the write', async () => {
    const visitor = randomUUID();
    const res = await fx.post([
      {
        type: 'identify',
        ts: Date.now(),
        visitorId: visitor,
        props: { email: 'nul\u0000@example.com', 'k\u0000': 'v\u0000' },
      },
      { type: 'event', ts: Date.now(), visitorId: visitor, props: { name: 'lone \ud800 surrogate', note: '\udc00' } },
    ]);
    expect(res.body.acceptedCount).toBe(2);
    expect(await waitForEvents(ctx, 2, `visitor_id = '${visitor}'`)).toBe(2);
    const { rows } = await ctx.pool.query('SELECT email, attributes FROM identified_users WHERE visitor_id = $1', [
      visitor,
    ]);
    expect(rows).toEqual([{ email: 'nul@example.com', attributes: { k: 'v' } }]);
  });

  it('identify really upserts: a later batch merges into the same row', async () => {
    const visitor = randomUUID();
    await fx.post([
      { type: 'identify', ts: Date.now() - 1000, visitorId: visitor, props: { email: 'old@example.com', a: 1 } },
    ]);
    await waitForEvents(ctx, 1, `visitor_id = '${visitor}'`);
    await fx.post([{ type: 'identify', ts: Date.now(), visitorId: visitor, props: { name: 'Grace', b: 2 } }]);
    await waitForEvents(ctx, 2, `visitor_id = '${visitor}'`);
    const { rows } = await ctx.pool.query(
      'SELECT email, name, attributes FROM identified_users WHERE visitor_id = $1',
      [visitor],
    );
    expect(rows).toEqual([{ email: 'old@example.com', name: 'Grace', attributes: { a: 1, b: 2 } }]);
  });
});

describe('per-event reasons', () => {
  const now = () => Date.now();
  const cases: [string, string, Record<string, unknown>][] = [
    ['invalid_event_type', 'invalid_event_type', { type: 'click', ts: 0, props: {} }],
    ['not an object', 'invalid_event_type', 'pageview' as unknown as Record<string, unknown>],
    ['invalid_consent', 'invalid_consent', { ...pageview(), consent: 'maybe' }],
    ['consent_opted_out', 'consent_opted_out', { ...pageview(), consent: 'opt-out' }],
    ['ts missing', 'invalid_ts', { ...pageview(), ts: undefined }],
    ['ts as string', 'invalid_ts', { ...pageview(), ts: String(Date.now()) }],
    ['ts 25 h ago', 'invalid_ts', { ...pageview(), ts: Date.now() - 25 * HOUR }],
    ['empty idempotencyKey', 'invalid_idempotency_key', { ...pageview(), idempotencyKey: '' }],
    ['129-char idempotencyKey', 'invalid_idempotency_key', { ...pageview(), idempotencyKey: 'k'.repeat(129) }],
    ['pageview visitorId not a UUID', 'invalid_visitor_id', { ...pageview(), visitorId: 'abc' }],
    [
      'pageview nil visitorId',
      'invalid_visitor_id',
      { ...pageview(), visitorId: '00000000-0000-0000-0000-000000000000' },
    ],
    [
      'identify without visitorId',
      'invalid_visitor_id',
      { type: 'identify', ts: Date.now(), props: { email: 'a@b.c' } },
    ],
    ['pageview sessionId not a UUID', 'invalid_session_id', { ...pageview(), sessionId: 'sess-1' }],
    [
      'goal without sessionId',
      'invalid_session_id',
      { type: 'goal', ts: Date.now(), visitorId: 'v1', props: { name: 'Signup' } },
    ],
    ['props missing', 'invalid_props', { ...pageview(), props: undefined }],
    ['pageview without url', 'invalid_props', { ...pageview(), props: { referrer: 'x' } }],
    ['event without name', 'invalid_props', { type: 'event', ts: Date.now(), props: {} }],
    [
      'identify without identity',
      'invalid_props',
      { type: 'identify', ts: Date.now(), visitorId: 'v', props: { plan: 'x' } },
    ],
    ['purchase amount as string', 'invalid_props', { type: 'purchase', ts: Date.now(), props: { amount: '10' } }],
    [
      'unknown_goal',
      'unknown_goal',
      { type: 'goal', ts: Date.now(), visitorId: 'v', sessionId: 's', props: { name: 'Nope' } },
    ],
    [
      'goal value beyond ±1e12',
      'invalid_props',
      { type: 'goal', ts: Date.now(), visitorId: 'v', sessionId: 's', props: { name: 'Signup', value: 1e20 } },
    ],
    [
      'invalid_payment_provider',
      'invalid_payment_provider',
      { type: 'purchase', ts: Date.now(), props: { amount: 1, payment_provider: 'paypal' } },
    ],
  ];

  it.each(cases)('%s → %s', async (_label, reason, event) => {
    const res = await fx.post([event]);
    expect(res.status).toBe(200);
    expect(res.body.acceptedCount).toBe(0);
    expect(res.body.rejectedCount).toBe(1);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ index: 0, reason });
    expect(typeof res.body.errors[0].message).toBe('string');
  });

  it('a server goal event may name an event goal only: a page or purchase goal is unknown_goal', async () => {
    const goals = `/api/websites/${fx.website.id}/goals`;
    const call = client(ctx.baseUrl);
    for (const body of [
      { name: 'Booked demo' },
      { name: 'Pricing page', kind: 'page', path: '/pricing' },
      { name: 'Paid', kind: 'purchase' },
    ]) {
      expect((await call('POST', goals, { token: fx.user.token, body })).status).toBe(201);
    }
    const goal = (name: string) => ({ type: 'goal', ts: Date.now(), visitorId: 'v', sessionId: 's', props: { name } });
    const res = await fx.post([goal('Booked demo'), goal('Pricing page'), goal('Paid')]);
    expect(res.body.acceptedCount).toBe(1);
    expect(res.body.errors.map((e: { index: number; reason: string }) => [e.index, e.reason])).toEqual([
      [1, 'unknown_goal'],
      [2, 'unknown_goal'],
    ]);
  });

  it('names the failing prop in invalid_props', async () => {
    const res = await fx.post([{ ...pageview(), props: { url: 42 } }]);
    expect(res.body.errors[0].message).toMatch(/props\.url/);
  });

  it('mixes reasons in one batch with correct indexes and counts', async () => {
    const events = [
      pageview(),
      { ...pageview(), consent: 'opt-out' },
      pageview(),
      { type: 'nope' },
      { ...pageview(), ts: now() + 25 * HOUR },
    ];
    const res = await fx.post(events);
    expect(res.body.acceptedCount).toBe(2);
    expect(res.body.rejectedCount).toBe(3);
    expect(res.body.errors.map((e: { index: number; reason: string }) => [e.index, e.reason])).toEqual([
      [1, 'consent_opted_out'],
      [3, 'invalid_event_type'],
      [4, 'invalid_ts'],
    ]);
  });

  it('accepts ts exactly 24 h in the past and future, refuses 1 ms beyond', async () => {
    // A frozen clock is not available across processes; a small margin keeps "exactly" inside the window.
    const t = Date.now();
    const res = await fx.post([
      pageview({ ts: t - 24 * HOUR + 2_000 }),
      pageview({ ts: t + 24 * HOUR - 2_000 }),
      pageview({ ts: t - 24 * HOUR - 2_000 }),
      pageview({ ts: t + 24 * HOUR + 2_000 }),
    ]);
    expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([2, 3]);
    expect(res.body.acceptedCount).toBe(2);
  });

  it('Sec-GPC: 1 rejects the whole batch and stores nothing', async () => {
    const events = [pageview(), pageview()];
    const res = await fx.post(events, { headers: { 'sec-gpc': '1' } });
    expect(res.body).toMatchObject({ acceptedCount: 0, dedupedCount: 0, rejectedCount: 2 });
    expect(res.body.errors.every((e: { reason: string }) => e.reason === 'gpc_opted_out')).toBe(true);
    await new Promise((r) => setTimeout(r, 600));
    expect(await countEvents(ctx, `visitor_id IN ('${events[0].visitorId}', '${events[1].visitorId}')`)).toBe(0);
  });
});

describe('deduplication', () => {
  it('dedupes across requests, inside a batch, and never dedupes keyless events', async () => {
    const a = pageview();
    const first = await fx.post([a]);
    expect(first.body.acceptedCount).toBe(1);
    const again = await fx.post([{ ...a, visitorId: randomUUID() }]);
    expect(again.body).toMatchObject({ acceptedCount: 0, dedupedCount: 1, rejectedCount: 0 });
    const key = randomUUID();
    const inBatch = await fx.post([pageview({ idempotencyKey: key }), pageview({ idempotencyKey: key })]);
    expect(inBatch.body).toMatchObject({ acceptedCount: 1, dedupedCount: 1 });
    const v = randomUUID();
    const keyless = await fx.post([
      pageview({ idempotencyKey: undefined, visitorId: v }),
      pageview({ idempotencyKey: undefined, visitorId: v }),
    ]);
    expect(keyless.body.acceptedCount).toBe(2);
    expect(await waitForEvents(ctx, 2, `visitor_id = '${v}'`)).toBe(2);
  });

  it('accepts an event once under concurrent identical requests', async () => {
    const ev = pageview();
    const replies = await Promise.all(Array.from({ length: 8 }, () => fx.post([ev])));
    expect(replies.map((r) => r.body.acceptedCount).reduce((a, b) => a + b, 0)).toBe(1);
    expect(replies.map((r) => r.body.dedupedCount).reduce((a, b) => a + b, 0)).toBe(7);
    expect(await waitForEvents(ctx, 1, `idempotency_key = '${ev.idempotencyKey}'`)).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await countEvents(ctx, `idempotency_key = '${ev.idempotencyKey}'`)).toBe(1);
  });

  it('the same key on another website is not a duplicate', async () => {
    const other = await createWebsite(ctx, fx.user, `other-${randomUUID().slice(0, 6)}.example.com`);
    const ev = pageview();
    expect((await fx.post([ev])).body.acceptedCount).toBe(1);
    expect((await fx.post([ev], { trackingCode: other.tracking_code })).body.acceptedCount).toBe(1);
  });
});

describe('batch-level answers', () => {
  it('1,000 events are accepted, 1,001 refused with 400', async () => {
    const big = Array.from({ length: 1000 }, () => pageview());
    const ok = await fx.post(big);
    expect(ok.status).toBe(200);
    expect(ok.body.acceptedCount).toBe(1000);
    const tooMany = await fx.post([...big, pageview()]);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('VALIDATION_ERROR');
    expect(
      await waitForEvents(ctx, 1000, `idempotency_key IN (${big.map((e) => `'${e.idempotencyKey}'`).join(',')})`),
    ).toBe(1000);
  });

  it.each([
    ['bad JSON', { rawBody: '{"trackingCode": ' }],
    ['missing trackingCode', { body: { events: [pageview()] } }],
    ['events not an array', { body: { trackingCode: 'x', events: {} } }],
    ['empty events', { body: { trackingCode: 'x', events: [] } }],
  ])('%s → 400 VALIDATION_ERROR in the error envelope', async (_l, opts) => {
    const res = await client(ctx.baseUrl)('POST', '/api/v1/events', { token: fx.key, ...(opts as object) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('over 5 MB → 413', async () => {
    const res = await client(ctx.baseUrl)('POST', '/api/v1/events', {
      token: fx.key,
      rawBody: JSON.stringify({ trackingCode: 'x', events: [{ pad: 'x'.repeat(5 * 1024 * 1024) }] }),
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('unknown tracking code or another team’s website → 404; site key on another website → 403', async () => {
    expect((await fx.post([pageview()], { trackingCode: 'tm-nope' })).status).toBe(404);
    const stranger = await registerUser(ctx, 'pro', 'stranger');
    const theirs = await createWebsite(ctx, stranger, 'theirs.example.com');
    const cross = await fx.post([pageview()], { trackingCode: theirs.tracking_code });
    expect(cross.status).toBe(404);
    expect(cross.body.error.code).toBe('NOT_FOUND');
    const second = await createWebsite(ctx, fx.user, `second-${randomUUID().slice(0, 6)}.example.com`);
    const siteKey = await createApiKey(ctx, fx.user, 'site_access', second.id);
    const scoped = await fx.post([pageview()], { key: siteKey.key });
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe('FORBIDDEN');
    expect((await fx.post([pageview()], { key: siteKey.key, trackingCode: second.tracking_code })).status).toBe(200);
  });

  it('no key or a bad key → 401; a free team’s key → 403 API_PAID_PLAN_REQUIRED', async () => {
    const noKey = await client(ctx.baseUrl)('POST', '/api/v1/events', {
      body: { trackingCode: fx.website.tracking_code, events: [pageview()] },
    });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.code).toBe('UNAUTHORIZED');
    expect((await fx.post([pageview()], { key: 'tmk_bogus' })).status).toBe(401);
    const paid = await registerUser(ctx, 'pro', 'downgrade');
    const { key } = await createApiKey(ctx, paid);
    await ctx.pool.query(`UPDATE teams SET plan = 'free' WHERE id = $1`, [paid.teamId]);
    const res = await fx.post([pageview()], { key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('API_PAID_PLAN_REQUIRED');
  });
});
