// The API key activity read (lib/stats/reads/apiKeyActivity.ts) against a hand-made fixture posted through
// the real API and stored by a real worker. Every expected value below was worked out by hand from the
// fixture table in beforeAll.
import { createHash, randomUUID } from 'node:crypto';
import { createGoal } from '../../../../../lib/accounts/goals';
import { chSeconds, chTime, type EventRow } from '../../../../../lib/ingest/job/rows';
import { apiKeyActivity } from '../../../../../lib/stats/reads/apiKeyActivity';
import { createApiKey, createWebsite } from '../../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { type IngestFixture, ingestFixture, startTestWorker, waitForEvents } from '../../../../helpers/ingest';
import { storeRows } from '../../../../helpers/statsFixture';

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
const V1 = randomUUID(),
  V2 = randomUUID(),
  V3 = randomUUID(),
  V5 = randomUUID();
const V4 = 'cust-4';
const S1a = randomUUID(),
  S1b = randomUUID(),
  S2 = randomUUID(),
  S3 = randomUUID(),
  S5 = randomUUID(),
  SB = randomUUID();

type Ev = {
  type: string;
  ts: number;
  visitorId?: string;
  sessionId?: string;
  props: Record<string, unknown>;
  consent?: string;
};
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
    website_id: websiteB.id,
    event_id: randomUUID(),
    type: 'event',
    name: '',
    source: 'server',
    ts: '',
    received_at: '',
    session_id: '',
    visitor_id: 'old-visitor',
    url: '',
    hostname: '',
    pathname: '',
    referrer: '',
    referrer_domain: '',
    source_name: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_content: '',
    utm_term: '',
    device_type: '',
    browser: '',
    browser_version: '',
    os: '',
    os_version: '',
    country_code: '',
    region: '',
    city: '',
    screen_width: 0,
    screen_height: 0,
    language: '',
    ip_hash: 'unknown',
    engagement_ms: 0,
    scroll_depth: 0,
    revenue: 0,
    currency: '',
    props: '{}',
    idempotency_key: '',
    api_key_id: '',
    expire_at: chSeconds(T + 30 * DAY),
    ...over,
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
  await createGoal(ctx.pool, fx.website.id, fx.user.id, { name: 'Signup', kind: 'event' });
  await createGoal(ctx.pool, fx.website.id, fx.user.id, { name: 'Newsletter', kind: 'event' });

  T = Date.now();
  // Website A, key 1.
  fixture.set(1, pv(V1, S1a, T - 5 * HOUR, `${SITE}/`, 'https://www.google.com/search?q=shoes'));
  fixture.set(2, pv(V1, S1a, T - 5 * HOUR + MIN, `${SITE}/pricing`));
  fixture.set(3, pv(V1, S1a, T - 5 * HOUR + 1.5 * MIN, `${SITE}/pricing`));
  fixture.set(4, {
    type: 'event',
    ts: T - 5 * HOUR + 2 * MIN,
    visitorId: V1,
    sessionId: S1a,
    props: { name: 'Clicked CTA', button: 'hero' },
  });
  fixture.set(5, {
    type: 'goal',
    ts: T - 5 * HOUR + 3 * MIN,
    visitorId: V1,
    sessionId: S1a,
    props: { name: 'Signup', value: 10 },
  });
  fixture.set(6, {
    type: 'identify',
    ts: T - 5 * HOUR + 4 * MIN,
    visitorId: V1,
    props: { email: 'alice@example.com', name: 'Alice', plan: 'pro' },
  });
  fixture.set(7, {
    type: 'purchase',
    ts: T - 5 * HOUR + 5 * MIN,
    visitorId: V1,
    sessionId: S1a,
    props: { amount: 49.5 },
  });
  fixture.set(8, { type: 'purchase', ts: T - 6 * HOUR, visitorId: V1, props: { amount: 5 } });
  fixture.set(9, pv(V1, S1b, T - HOUR, `${SITE}/blog?utm_source=newsletter`));
  fixture.set(10, {
    type: 'purchase',
    ts: T - HOUR + MIN,
    visitorId: V1,
    sessionId: S1b,
    props: { amount: 20, plan_name: 'Pro' },
  });
  fixture.set(11, { type: 'identify', ts: T - HOUR + 2 * MIN, visitorId: V1, props: { company: 'Wonder' } });
  fixture.set(12, pv(V2, S2, T - 3 * HOUR, `${SITE}/`));
  fixture.set(13, pv(V2, S2, T - 3 * HOUR + MIN, `${SITE}/docs`));
  fixture.set(14, {
    type: 'event',
    ts: T - 3 * HOUR + 2 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { name: 'Clicked CTA' },
  });
  fixture.set(15, {
    type: 'event',
    ts: T - 3 * HOUR + 3 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { name: 'Downloaded' },
  });
  fixture.set(16, {
    type: 'event',
    ts: T - 3 * HOUR + 3.5 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { name: 'Downloaded' },
  });
  fixture.set(17, {
    type: 'goal',
    ts: T - 3 * HOUR + 4 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { name: 'Signup', value: 5 },
  });
  fixture.set(18, {
    type: 'purchase',
    ts: T - 3 * HOUR + 5 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { amount: 30, currency: 'eur', payment_provider: 'stripe', provider_event_id: 'evt_18' },
  });
  fixture.set(19, {
    type: 'purchase',
    ts: T - 3 * HOUR + 6 * MIN,
    visitorId: V2,
    sessionId: S2,
    props: { amount: 12, currency: 'EUR', status: 'refunded' },
  });
  fixture.set(20, {
    type: 'identify',
    ts: T - 3 * HOUR + 7 * MIN,
    visitorId: V2,
    props: { customer_id: 'cus_2', company: 'Acme' },
  });
  fixture.set(21, pv(V3, S3, T - 10 * MIN, `${SITE}/pricing`, 'https://news.ycombinator.com/item?id=1'));
  fixture.set(22, {
    type: 'purchase',
    ts: T - 9 * MIN,
    visitorId: V3,
    sessionId: S3,
    props: { amount: 100, currency: 'EUR' },
  });
  fixture.set(23, { type: 'goal', ts: T - 8 * MIN, visitorId: V3, sessionId: S3, props: { name: 'Newsletter' } });
  fixture.set(24, {
    type: 'purchase',
    ts: T - 2 * HOUR,
    visitorId: V4,
    props: { amount: 15, customer_email: 'dave@example.com' },
  });
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
    oldRow({
      api_key_id: key2.id,
      type: 'pageview',
      url: `${SITE}/old`,
      pathname: '/old',
      session_id: 'old-session',
      ts: chTime(T - 8 * DAY),
      received_at: chTime(T - 8 * DAY),
    }),
  ]);
  expect(await waitForEvents(ctx, 26 + 2 + 4 + 2)).toBe(34);
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await ctx?.close();
});

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
    expect(activity.recent_events.map(({ event_id, ...rest }) => rest)).toEqual(
      order.map((n) => recent(n, n >= 29 ? websiteB.id : fx.website.id)),
    );
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
      {
        website_id: websiteB.id,
        type: 'pageview',
        name: '',
        ts: iso(T - 8 * DAY),
        url: `${SITE}/old`,
        visitor_id: 'old-visitor',
        session_id: 'old-session',
      },
    ]);
  });

  it('honours `now`: two days later nothing is in the 24 h window, everything still in 7 d', async () => {
    const later = await apiKeyActivity(ctx.clickhouse, key1Id, new Date(T + 2 * DAY));
    expect([later.accepted_last_24h, later.accepted_last_7d]).toEqual([0, 31]);
    await expect(apiKeyActivity(ctx.clickhouse, '')).rejects.toThrow(RangeError);
  });
});
