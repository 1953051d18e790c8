// Read helpers of lib/stats against a hand-made fixture posted through the real API and stored by a real
// worker. Every expected value below was worked out by hand from the fixture table in beforeAll.
import { createHash, randomUUID } from 'node:crypto';
import { createGoal } from '../../lib/accounts/goals';
import { storeRows } from '../helpers/statsFixture';
import { chSeconds, chTime, type EventRow } from '../../lib/ingest/job/rows';
import { apiKeyActivity } from '../../lib/stats/apiKeyActivity';
import {
  customEvents,
  goalCompletions,
  identifiedUsers,
  pagesViewed,
  realtimePageviews,
  revenueSummary,
  visitorProfile,
} from '../../lib/stats/appearances';
import { createApiKey, createWebsite } from '../helpers/accounts';
import { createTestContext, type TestContext } from '../helpers/context';
import { ingestFixture, startTestWorker, waitForEvents, type IngestFixture } from '../helpers/ingest';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SITE = 'https://shop.example.com';

let ctx: TestContext;
let fx: IngestFixture;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let T: number; // the fixture's "now"
let websiteB: { id: string; tracking_code: string };
let key1Id: string;
let key2: { id: string; key: string };

// Visitors and sessions (pageview ids must be UUIDs; others need not be).
const V1 = randomUUID(), V2 = randomUUID(), V3 = randomUUID(), V5 = randomUUID();
const V4 = 'cust-4';
const S1a = randomUUID(), S1b = randomUUID(), S2 = randomUUID(), S3 = randomUUID(), S5 = randomUUID(), SB = randomUUID();

type Ev = { type: string; ts: number; visitorId?: string; sessionId?: string; props: Record<string, unknown>; consent?: string };
/** Labelled fixture events; the label is the number used in the comments and expectations. */
const fixture = new Map<number, Ev>();
const at = (n: number) => fixture.get(n)!;
const iso = (ms: number) => new Date(ms).toISOString();

function pv(visitorId: string, sessionId: string, ts: number, url: string, referrer?: string): Ev {
  return { type: 'pageview', ts, visitorId, sessionId, props: { url, ...(referrer ? { referrer } : {}) } };
}

/** A row written straight to ClickHouse: the API refuses ts older than 24 h, so old activity is inserted. */
function oldRow(over: Partial<EventRow>): EventRow {
  return {
    website_id: websiteB.id, event_id: randomUUID(), type: 'event', name: '', source: 'server', ts: '', received_at: '',
    session_id: '', visitor_id: 'old-visitor', url: '', hostname: '', pathname: '', referrer: '', referrer_domain: '',
    source_name: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_content: '', utm_term: '', device_type: '',
    browser: '', browser_version: '', os: '', os_version: '', country_code: '', region: '', city: '', screen_width: 0,
    screen_height: 0, language: '', ip_hash: 'unknown', engagement_ms: 0, scroll_depth: 0, revenue: 0, currency: '',
    props: '{}', idempotency_key: '', api_key_id: '', expire_at: chSeconds(T + 30 * DAY), ...over,
  };
}

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
  worker = await startTestWorker(ctx);
  websiteB = await createWebsite(ctx, fx.user, `other-${randomUUID().slice(0, 8)}.example.com`);
  key2 = await createApiKey(ctx, fx.user);
  const sha = createHash('sha256').update(fx.key).digest('hex');
  key1Id = (await ctx.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE key_hash = $1', [sha])).rows[0].id;
  await createGoal(ctx.pool, fx.website.id, fx.user.id, { name: 'Signup' });
  await createGoal(ctx.pool, fx.website.id, fx.user.id, { name: 'Newsletter' });

  T = Date.now();
  // Website A, key 1.
  fixture.set(1, pv(V1, S1a, T - 5 * HOUR, `${SITE}/`, 'https://www.google.com/search?q=shoes'));
  fixture.set(2, pv(V1, S1a, T - 5 * HOUR + MIN, `${SITE}/pricing`));
  fixture.set(3, pv(V1, S1a, T - 5 * HOUR + 1.5 * MIN, `${SITE}/pricing`));
  fixture.set(4, { type: 'event', ts: T - 5 * HOUR + 2 * MIN, visitorId: V1, sessionId: S1a, props: { name: 'Clicked CTA', button: 'hero' } });
  fixture.set(5, { type: 'goal', ts: T - 5 * HOUR + 3 * MIN, visitorId: V1, sessionId: S1a, props: { name: 'Signup', value: 10 } });
  fixture.set(6, { type: 'identify', ts: T - 5 * HOUR + 4 * MIN, visitorId: V1, props: { email: 'alice@example.com', name: 'Alice', plan: 'pro' } });
  fixture.set(7, { type: 'purchase', ts: T - 5 * HOUR + 5 * MIN, visitorId: V1, sessionId: S1a, props: { amount: 49.5 } });
  fixture.set(8, { type: 'purchase', ts: T - 6 * HOUR, visitorId: V1, props: { amount: 5 } });
  fixture.set(9, pv(V1, S1b, T - HOUR, `${SITE}/blog?utm_source=newsletter`));
  fixture.set(10, { type: 'purchase', ts: T - HOUR + MIN, visitorId: V1, sessionId: S1b, props: { amount: 20, plan_name: 'Pro' } });
  fixture.set(11, { type: 'identify', ts: T - HOUR + 2 * MIN, visitorId: V1, props: { company: 'Wonder' } });
  fixture.set(12, pv(V2, S2, T - 3 * HOUR, `${SITE}/`));
  fixture.set(13, pv(V2, S2, T - 3 * HOUR + MIN, `${SITE}/docs`));
  fixture.set(14, { type: 'event', ts: T - 3 * HOUR + 2 * MIN, visitorId: V2, sessionId: S2, props: { name: 'Clicked CTA' } });
  fixture.set(15, { type: 'event', ts: T - 3 * HOUR + 3 * MIN, visitorId: V2, sessionId: S2, props: { name: 'Downloaded' } });
  fixture.set(16, { type: 'event', ts: T - 3 * HOUR + 3.5 * MIN, visitorId: V2, sessionId: S2, props: { name: 'Downloaded' } });
  fixture.set(17, { type: 'goal', ts: T - 3 * HOUR + 4 * MIN, visitorId: V2, sessionId: S2, props: { name: 'Signup', value: 5 } });
  fixture.set(18, { type: 'purchase', ts: T - 3 * HOUR + 5 * MIN, visitorId: V2, sessionId: S2, props: { amount: 30, currency: 'eur', payment_provider: 'stripe', provider_event_id: 'evt_18' } });
  fixture.set(19, { type: 'purchase', ts: T - 3 * HOUR + 6 * MIN, visitorId: V2, sessionId: S2, props: { amount: 12, currency: 'EUR', status: 'refunded' } });
  fixture.set(20, { type: 'identify', ts: T - 3 * HOUR + 7 * MIN, visitorId: V2, props: { customer_id: 'cus_2', company: 'Acme' } });
  fixture.set(21, pv(V3, S3, T - 10 * MIN, `${SITE}/pricing`, 'https://news.ycombinator.com/item?id=1'));
  fixture.set(22, { type: 'purchase', ts: T - 9 * MIN, visitorId: V3, sessionId: S3, props: { amount: 100, currency: 'EUR' } });
  fixture.set(23, { type: 'goal', ts: T - 8 * MIN, visitorId: V3, sessionId: S3, props: { name: 'Newsletter' } });
  fixture.set(24, { type: 'purchase', ts: T - 2 * HOUR, visitorId: V4, props: { amount: 15, customer_email: 'dave@example.com' } });
  fixture.set(25, { type: 'identify', ts: T - 2 * HOUR + MIN, visitorId: V4, props: { email: 'dave@example.com' } });
  fixture.set(26, { type: 'event', ts: T - 4 * HOUR, props: { name: 'Clicked CTA' } }); // a backend event: no visitor
  // Website A, key 2.
  fixture.set(27, pv(V5, S5, T - 20 * MIN, `${SITE}/`));
  fixture.set(28, { type: 'event', ts: T - 19 * MIN, visitorId: V5, sessionId: S5, props: { name: 'Clicked CTA' } });
  // Website B, key 1 (same visitor id as on A).
  fixture.set(29, pv(V1, SB, T - 30 * MIN, `${SITE}/`, 'https://www.google.com/'));
  fixture.set(30, { type: 'event', ts: T - 29 * MIN, visitorId: V1, sessionId: SB, props: { name: 'Clicked CTA' } });
  fixture.set(31, { type: 'purchase', ts: T - 28 * MIN, visitorId: V1, sessionId: SB, props: { amount: 999 } });
  fixture.set(32, { type: 'identify', ts: T - 27 * MIN, visitorId: V1, props: { email: 'other@example.com' } });

  const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => at(a + i));
  const rejected = [
    { ...pv(V1, S1a, T - 25 * HOUR, `${SITE}/rejected`) },
    { type: 'goal', ts: T, visitorId: V1, sessionId: S1a, props: { name: 'Unknown' } },
    { type: 'event', ts: T, visitorId: V1, props: { name: 'Secret' }, consent: 'opt-out' },
  ];
  const a1 = await fx.post([...range(1, 10), ...range(12, 26), ...rejected]);
  expect(a1.body).toMatchObject({ acceptedCount: 25, dedupedCount: 0, rejectedCount: 3 });
  expect(a1.body.errors.map((e: { index: number; reason: string }) => [e.index, e.reason])).toEqual([
    [25, 'invalid_ts'],
    [26, 'unknown_goal'],
    [27, 'consent_opted_out'],
  ]);
  // Alice's second identify goes alone, after the first is stored, so it merges through the upsert path.
  expect(await waitForEvents(ctx, 25)).toBe(25);
  expect((await fx.post([at(11)])).body.acceptedCount).toBe(1);
  expect((await fx.post(range(27, 28), { key: key2.key })).body.acceptedCount).toBe(2);
  expect((await fx.post(range(29, 32), { trackingCode: websiteB.tracking_code })).body.acceptedCount).toBe(4);
  // Old activity: key 1 three days ago, key 2 eight days ago (outside both windows).
  await storeRows(ctx.clickhouse, [
    oldRow({ api_key_id: key1Id, name: 'Old', ts: chTime(T - 3 * DAY), received_at: chTime(T - 3 * DAY) }),
    oldRow({ api_key_id: key2.id, type: 'pageview', url: `${SITE}/old`, pathname: '/old', session_id: 'old-session', ts: chTime(T - 8 * DAY), received_at: chTime(T - 8 * DAY) }),
  ]);
  expect(await waitForEvents(ctx, 26 + 2 + 4 + 2)).toBe(34);
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await ctx?.close();
});

const wide = () => ({ from: new Date(T - 12 * HOUR), to: new Date(T + HOUR) });

/** The shape of a recent event for fixture event n, without its generated id. */
function recent(n: number, websiteId = fx.website.id) {
  const e = at(n);
  return {
    website_id: websiteId,
    type: e.type,
    name: e.type === 'event' || e.type === 'goal' ? (e.props.name as string) : '',
    ts: iso(e.ts),
    url: e.type === 'pageview' ? (e.props.url as string) : '',
    visitor_id: e.visitorId ?? '',
    session_id: e.sessionId ?? '',
  };
}

describe('apiKeyActivity', () => {
  it('counts, ranks types and lists the 20 most recent accepted events of the key (all its websites)', async () => {
    const activity = await apiKeyActivity(ctx.clickhouse, key1Id);
    // 26 on A + 4 on B accepted now; the row of 3 days ago counts in 7 d only. Rejected and key-2 events never.
    expect(activity.accepted_last_24h).toBe(30);
    expect(activity.accepted_last_7d).toBe(31);
    expect(activity.top_event_types).toEqual([
      { type: 'pageview', count: 8 }, // 1 2 3 9 12 13 21 29
      { type: 'purchase', count: 8 }, // 7 8 10 18 19 22 24 31
      { type: 'event', count: 7 }, // 4 14 15 16 26 30 + old
      { type: 'identify', count: 5 }, // 6 11 20 25 32
      { type: 'goal', count: 3 }, // 5 17 23
    ]);
    const order = [23, 22, 21, 32, 31, 30, 29, 11, 10, 9, 25, 24, 20, 19, 18, 17, 16, 15, 14, 13];
    expect(activity.recent_events.map(({ event_id, ...rest }) => rest)).toEqual(order.map((n) => recent(n, n >= 29 ? websiteB.id : fx.website.id)));
    expect(activity.recent_events.every((e) => UUID.test(e.event_id))).toBe(true);
  });

  it('shows only the second key’s own events, reaching back past 7 days for its recent list', async () => {
    const activity = await apiKeyActivity(ctx.clickhouse, key2.id);
    expect(activity).toMatchObject({
      accepted_last_24h: 2,
      accepted_last_7d: 2,
      top_event_types: [
        { type: 'event', count: 1 },
        { type: 'pageview', count: 1 },
      ],
    });
    expect(activity.recent_events.map(({ event_id, ...rest }) => rest)).toEqual([
      recent(28),
      recent(27),
      { website_id: websiteB.id, type: 'pageview', name: '', ts: iso(T - 8 * DAY), url: `${SITE}/old`, visitor_id: 'old-visitor', session_id: 'old-session' },
    ]);
  });

  it('honours `now`: two days later nothing is in the 24 h window, everything still in 7 d', async () => {
    const later = await apiKeyActivity(ctx.clickhouse, key1Id, new Date(T + 2 * DAY));
    expect([later.accepted_last_24h, later.accepted_last_7d]).toEqual([0, 31]);
    await expect(apiKeyActivity(ctx.clickhouse, '')).rejects.toThrow(RangeError);
  });
});

describe('pages, custom events, goals', () => {
  it('pagesViewed: views and visitors per path, ties by path', async () => {
    expect(await pagesViewed(ctx.clickhouse, fx.website.id, wide(), 10)).toEqual([
      { path: '/', views: 3, visitors: 3 }, // 1 12 27
      { path: '/pricing', views: 3, visitors: 2 }, // 2 3 21
      { path: '/blog', views: 1, visitors: 1 },
      { path: '/docs', views: 1, visitors: 1 },
    ]);
    expect(await pagesViewed(ctx.clickhouse, fx.website.id, wide(), 2)).toEqual([
      { path: '/', views: 3, visitors: 3 },
      { path: '/pricing', views: 3, visitors: 2 },
    ]);
    // Half-open: `from` is inclusive (1 at T−5h), `to` exclusive (12 at T−3h).
    expect(await pagesViewed(ctx.clickhouse, fx.website.id, { from: new Date(T - 5 * HOUR), to: new Date(T - 3 * HOUR) }, 10)).toEqual([
      { path: '/pricing', views: 2, visitors: 1 },
      { path: '/', views: 1, visitors: 1 },
    ]);
    expect(await pagesViewed(ctx.clickhouse, websiteB.id, wide(), 10)).toEqual([{ path: '/', views: 1, visitors: 1 }]);
  });

  it('customEvents: an event without a visitor counts but is no visitor', async () => {
    expect(await customEvents(ctx.clickhouse, fx.website.id, wide(), 10)).toEqual([
      { name: 'Clicked CTA', count: 4, visitors: 3 }, // 4 14 26 28
      { name: 'Downloaded', count: 2, visitors: 1 }, // 15 16
    ]);
    expect(await customEvents(ctx.clickhouse, fx.website.id, wide(), 1)).toHaveLength(1);
  });

  it('goalCompletions: completions, visitors and summed goal values', async () => {
    expect(await goalCompletions(ctx.clickhouse, fx.website.id, wide())).toEqual([
      { name: 'Signup', completions: 2, visitors: 2, value: 15 },
      { name: 'Newsletter', completions: 1, visitors: 1, value: 0 },
    ]);
  });

  it('refuses a bad limit or range', async () => {
    await expect(pagesViewed(ctx.clickhouse, fx.website.id, wide(), 0)).rejects.toThrow(RangeError);
    await expect(customEvents(ctx.clickhouse, fx.website.id, { from: new Date(NaN), to: new Date() }, 5)).rejects.toThrow(RangeError);
  });
});

describe('revenueSummary', () => {
  it('sums succeeded payments per currency and attributes them to the last session before the purchase', async () => {
    expect(await revenueSummary(ctx.clickhouse, ctx.pool, fx.website.id, wide())).toEqual({
      by_currency: [
        { currency: 'EUR', amount: 130, purchases: 2 }, // 18 22 (19 refunded)
        { currency: 'USD', amount: 89.5, purchases: 4 }, // 7 8 10 24 (31 is website B)
      ],
      by_source: [
        { source: 'Hacker News', currency: 'EUR', amount: 100, purchases: 1 }, // 22 ← S3
        { source: 'Direct / None', currency: 'EUR', amount: 30, purchases: 1 }, // 18 ← S2 (no referrer)
        { source: 'Google', currency: 'USD', amount: 49.5, purchases: 1 }, // 7 ← S1a
        { source: 'Direct / None', currency: 'USD', amount: 20, purchases: 2 }, // 8 (before any session), 24 (no pageviews)
        { source: 'newsletter', currency: 'USD', amount: 20, purchases: 1 }, // 10 ← S1b, not S1a
      ],
    });
  });

  it('uses the half-open range on payments', async () => {
    const range = { from: new Date(T - 6 * HOUR), to: new Date(at(10).ts) };
    expect(await revenueSummary(ctx.clickhouse, ctx.pool, fx.website.id, range)).toEqual({
      by_currency: [
        { currency: 'EUR', amount: 30, purchases: 1 },
        { currency: 'USD', amount: 69.5, purchases: 3 }, // 8 7 24
      ],
      by_source: [
        { source: 'Direct / None', currency: 'EUR', amount: 30, purchases: 1 },
        { source: 'Google', currency: 'USD', amount: 49.5, purchases: 1 },
        { source: 'Direct / None', currency: 'USD', amount: 20, purchases: 2 },
      ],
    });
  });

  it('website B sees only its own purchase, attributed through its own session', async () => {
    expect(await revenueSummary(ctx.clickhouse, ctx.pool, websiteB.id, wide())).toEqual({
      by_currency: [{ currency: 'USD', amount: 999, purchases: 1 }],
      by_source: [{ source: 'Google', currency: 'USD', amount: 999, purchases: 1 }],
    });
  });
});

describe('identified users and visitor profile', () => {
  const alice = () => ({
    visitor_id: V1,
    email: 'alice@example.com',
    name: 'Alice',
    customer_id: null,
    phone: null,
    company: 'Wonder',
    attributes: { plan: 'pro' },
    first_seen_at: iso(at(6).ts),
    last_seen_at: iso(at(11).ts),
  });
  const dave = () => ({
    visitor_id: V4, email: 'dave@example.com', name: null, customer_id: null, phone: null, company: null, attributes: {},
    first_seen_at: iso(at(25).ts), last_seen_at: iso(at(25).ts),
  });
  const bob = () => ({
    visitor_id: V2, email: null, name: null, customer_id: 'cus_2', phone: null, company: 'Acme', attributes: {},
    first_seen_at: iso(at(20).ts), last_seen_at: iso(at(20).ts),
  });

  it('identifiedUsers: newest last_seen first, paginated, with the total', async () => {
    expect(await identifiedUsers(ctx.pool, fx.website.id, { limit: 10, offset: 0 })).toEqual({ users: [alice(), dave(), bob()], total: 3 });
    expect(await identifiedUsers(ctx.pool, fx.website.id, { limit: 1, offset: 1 })).toEqual({ users: [dave()], total: 3 });
    expect(await identifiedUsers(ctx.pool, fx.website.id, { limit: 5, offset: 9 })).toEqual({ users: [], total: 3 });
  });

  // Two identifies of one visitor merged in one flush keep the earliest as first_seen_at.
  it('first_seen_at is the earliest identify even when both arrive in one batch', async () => {
    const v = randomUUID();
    const t0 = Date.now() - HOUR;
    const res = await fx.post([
      { type: 'identify', ts: t0, visitorId: v, props: { email: 'eve@example.com' } },
      { type: 'identify', ts: t0 + MIN, visitorId: v, props: { name: 'Eve' } },
    ], { trackingCode: websiteB.tracking_code }); // website B: A's expectations stay untouched
    expect(res.body.acceptedCount).toBe(2);
    await waitForEvents(ctx, 2, `visitor_id = '${v}'`);
    const profile = await visitorProfile(ctx.clickhouse, ctx.pool, websiteB.id, v);
    expect(profile.identity).toMatchObject({ first_seen_at: iso(t0), last_seen_at: iso(t0 + MIN) });
  });

  it('visitorProfile: identity, payments and the timeline of this website only, newest first', async () => {
    const profile = await visitorProfile(ctx.clickhouse, ctx.pool, fx.website.id, V1);
    expect(profile.visitor_id).toBe(V1);
    expect(profile.identity).toEqual(alice());
    const payment = (n: number, extra: Record<string, unknown> = {}) => ({
      session_id: at(n).sessionId ?? null, amount: at(n).props.amount, currency: 'USD', payment_provider: 'server', status: 'succeeded',
      provider_event_id: null, customer_email: null, plan_name: null, occurred_at: iso(at(n).ts), ...extra,
    });
    expect(profile.payments.map(({ event_id, ...p }) => p)).toEqual([payment(10, { plan_name: 'Pro' }), payment(7), payment(8)]);
    const purchaseProps = { payment_provider: 'server', status: 'succeeded' };
    const item = (n: number, props: Record<string, unknown> = {}) => ({ ...recent(n), props });
    const expected = [
      item(11, { company: 'Wonder' }),
      item(10, { ...purchaseProps, plan_name: 'Pro' }),
      item(9),
      item(7, purchaseProps),
      item(6, { plan: 'pro', email: 'alice@example.com', name: 'Alice' }),
      item(5),
      item(4, { button: 'hero' }),
      item(3),
      item(2),
      item(1),
      item(8, purchaseProps),
    ].map(({ website_id, visitor_id, ...rest }) => rest);
    expect(profile.timeline.map(({ event_id, ...e }) => e)).toEqual(expected);
    // Every timeline id is the stored event's, and each payment is its purchase event.
    expect(profile.timeline.every((e) => UUID.test(e.event_id))).toBe(true);
    const purchaseIds = profile.timeline.filter((e) => e.type === 'purchase').map((e) => e.event_id);
    expect(profile.payments.map((p) => p.event_id)).toEqual(purchaseIds);

    const short = await visitorProfile(ctx.clickhouse, ctx.pool, fx.website.id, V1, { limit: 2 });
    expect(short.timeline.map((e) => e.ts)).toEqual([iso(at(11).ts), iso(at(10).ts)]);
    expect(short.payments).toHaveLength(2);
  });

  it('a visitor without identity and a stranger', async () => {
    const v3 = await visitorProfile(ctx.clickhouse, ctx.pool, fx.website.id, V3);
    expect(v3.identity).toBeNull();
    expect(v3.payments.map((p) => [p.amount, p.currency])).toEqual([[100, 'EUR']]);
    expect(v3.timeline.map((e) => [e.type, e.name])).toEqual([['goal', 'Newsletter'], ['purchase', ''], ['pageview', '']]);
    expect(await visitorProfile(ctx.clickhouse, ctx.pool, fx.website.id, randomUUID())).toMatchObject({ identity: null, payments: [], timeline: [] });
  });
});

describe('realtimePageviews', () => {
  it('counts pageviews of the last N minutes', async () => {
    const now = new Date(T);
    expect(await realtimePageviews(ctx.clickhouse, fx.website.id, 30, now)).toEqual({
      pageviews: 2, // 21 27 (29 is website B)
      visitors: 2,
      top_pages: [
        { path: '/', views: 1 },
        { path: '/pricing', views: 1 },
      ],
    });
    expect(await realtimePageviews(ctx.clickhouse, fx.website.id, 15, now)).toEqual({ pageviews: 1, visitors: 1, top_pages: [{ path: '/pricing', views: 1 }] });
    // Defaults: 30 minutes up to the real clock, which has moved on by a few seconds only.
    expect((await realtimePageviews(ctx.clickhouse, fx.website.id)).pageviews).toBe(2);
  });
});
