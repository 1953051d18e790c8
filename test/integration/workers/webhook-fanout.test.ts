// The ingest writer's webhook fan-out (issue 26 point 2): one webhook-events job per event that happened in
// what was stored, never for what was not, never twice, retries and regrouped jobs included.
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { createLogger } from '../../../lib/log';
import { QUEUE_NAMES } from '../../../lib/queue/queues';
import { bullPrefix, createRedis, type Redis } from '../../../lib/redis';
import { VALUE_SCORE_SQL } from '../../../lib/stats/sql/valueScore';
import type { WebhookEventJob } from '../../../lib/webhooks/events';
import { WebhookFanout } from '../../../lib/webhooks/fanout';
import { highValueKey } from '../../../lib/webhooks/happenings';
import { WebhookSubscriptions } from '../../../lib/webhooks/subscriptions';
import { IngestWriter } from '../../../workers/ingestWriter';
import { createWebsite } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { type IngestFixture, ingestFixture, waitForEvents } from '../../helpers/ingest';

let ctx: TestContext;
let fx: IngestFixture;
let events: Queue;
let eventsConnection: ReturnType<TestContext['redis']['duplicate']>;
const logger = createLogger(process.env.TEST_LOG ?? 'silent', 'test');
const MIN = 60_000;

/**
 * The webhooks table is the webhooks API's (sql/postgres/017_webhooks.sql, website_id, events text[],
 * active); until it is merged, a stub with just those columns stands in for it in this test only.
 */
async function ensureWebhooksTable() {
  await ctx.pool.query(`CREATE TABLE IF NOT EXISTS webhooks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    website_id uuid NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
    events text[] NOT NULL,
    active boolean NOT NULL DEFAULT true)`);
}

/** A webhook row: the columns the fan-out reads, any other required column filled with a plausible value. */
async function addWebhook(websiteId: string, subscribed: string[], active = true) {
  await ctx.pool.query(
    `INSERT INTO webhooks (website_id, url, events, secret, is_active) VALUES ($1, $2, $3, 'whsec_test', $4)`,
    [websiteId, `https://receiver.example.com/${randomUUID()}`, subscribed, active],
  );
}

async function addGoal(
  websiteId: string,
  name: string,
  kind: 'event' | 'page' | 'purchase',
  path?: string,
  active = true,
) {
  const { rows } = await ctx.pool.query<{ id: string }>(
    'INSERT INTO goals (website_id, name, kind, path, is_active) VALUES ($1, $2, $3, $4, $5) RETURNING id::text AS id',
    [websiteId, name, kind, path ?? null, active],
  );
  return rows[0].id;
}

/** A writer with the fan-out, as the worker role runs it; `wrap` may replace the fan-out's behaviour. */
function startWriter(opts: { fanout?: (real: WebhookFanout) => WebhookFanout; maxWaitMs?: number } = {}) {
  const connection = createRedis(ctx.config.REDIS_URL, 'worker', 'test-writer');
  const queue = new Queue(QUEUE_NAMES.webhookEvents, { connection, prefix: bullPrefix(ctx.config.REDIS_PREFIX) });
  const real = new WebhookFanout({
    redis: connection,
    redisPrefix: ctx.config.REDIS_PREFIX,
    pool: ctx.pool,
    queue,
    subscriptions: new WebhookSubscriptions(ctx.pool, 0),
  });
  const writer = new IngestWriter({
    clickhouse: ctx.clickhouse,
    pool: ctx.pool,
    queueRedis: connection,
    logger,
    concurrency: 8,
    maxWaitMs: opts.maxWaitMs ?? 100,
    webhooks: opts.fanout ? opts.fanout(real) : real,
  });
  const worker = new Worker(QUEUE_NAMES.ingest, writer.process, {
    connection,
    prefix: bullPrefix(ctx.config.REDIS_PREFIX),
    concurrency: 8,
    stalledInterval: 1_000,
  });
  writer.attach(worker);
  worker.on('error', () => undefined);
  return {
    async stop() {
      await worker.close();
      await writer.drain(); // as the worker role stops: completed jobs' payloads and marks deleted
      await queue.close();
      await connection.quit().catch(() => undefined);
    },
  };
}

/** Every queued webhook event job (nothing consumes them in this test). */
async function queued(websiteId?: string): Promise<WebhookEventJob[]> {
  const jobs = await events.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized']);
  return jobs.map((j) => j.data as WebhookEventJob).filter((d) => !websiteId || d.websiteId === websiteId);
}

async function idle(redis: Redis) {
  const prefix = bullPrefix(ctx.config.REDIS_PREFIX);
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const [active, wait, delayed] = await Promise.all([
      redis.llen(`${prefix}:${QUEUE_NAMES.ingest}:active`),
      redis.llen(`${prefix}:${QUEUE_NAMES.ingest}:wait`),
      redis.zcard(`${prefix}:${QUEUE_NAMES.ingest}:delayed`),
    ]);
    if (active + wait + delayed === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('ingest queue never emptied');
}

const byEvent = (jobs: WebhookEventJob[], event: string) => jobs.filter((j) => j.event === event);

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
  await ensureWebhooksTable();
  eventsConnection = ctx.redis.duplicate();
  events = new Queue(QUEUE_NAMES.webhookEvents, {
    connection: eventsConnection,
    prefix: bullPrefix(ctx.config.REDIS_PREFIX),
  });
});
afterAll(async () => {
  await events.close();
  // BullMQ leaves a connection it was handed open.
  eventsConnection.disconnect();
  await ctx.close();
});

describe('a website with webhooks for all five events', () => {
  const v1 = randomUUID();
  const s1 = randomUUID();
  let goals: { signup: string; pricing: string; buy: string };
  let w: ReturnType<typeof startWriter>;

  beforeAll(async () => {
    await addWebhook(fx.website.id, [
      'visitor.identified',
      'visitor.high_value',
      'event.tracked',
      'goal.completed',
      'visitor.converted',
    ]);
    goals = {
      signup: await addGoal(fx.website.id, 'signup', 'event'),
      pricing: await addGoal(fx.website.id, 'Visit pricing', 'page', '/pricing*'),
      buy: await addGoal(fx.website.id, 'Buy', 'purchase'),
    };
    await addGoal(fx.website.id, 'retired', 'event', undefined, false);
    w = startWriter();
  });
  afterAll(() => w.stop());

  it('fires each event once for what was stored, and nothing for rejected, deduplicated or GPC events', async () => {
    const base = Date.now() - 30 * MIN;
    const pv = (path: string, at: number, key?: string) => ({
      type: 'pageview',
      ts: base + at,
      sessionId: s1,
      visitorId: v1,
      idempotencyKey: key ?? randomUUID(),
      props: { url: `https://shop.example.com${path}` },
    });
    const dupKey = randomUUID();
    const res = await fx.post([
      pv('/pricing/pro', 0, dupKey),
      pv('/a', MIN),
      pv('/b', 2 * MIN),
      pv('/c', 3 * MIN),
      { type: 'goal', ts: base + 200_000, sessionId: s1, visitorId: v1, props: { name: 'signup', value: 12.5 } },
      {
        type: 'identify',
        ts: base + 4 * MIN,
        sessionId: s1,
        visitorId: v1,
        props: { email: 'a@example.com', customer_id: 'cus_1', plan: 'pro' },
      },
      { type: 'event', ts: base + 5 * MIN, visitorId: v1, props: { name: 'signup' } },
      { type: 'event', ts: base + 5 * MIN, visitorId: v1, props: { name: 'retired' } },
      {
        type: 'purchase',
        ts: base + 6 * MIN,
        visitorId: v1,
        props: { amount: 49, currency: 'EUR', provider_event_id: 'ord_1' },
      },
      { type: 'purchase', ts: base + 7 * MIN, visitorId: v1, props: { amount: 10, currency: 'EUR' } },
      { type: 'purchase', ts: base + 7 * MIN, visitorId: randomUUID(), props: { amount: 5, status: 'failed' } },
      // Rejected: unknown type; a goal no active goal names.
      { type: 'bogus', ts: base, props: {} },
      { type: 'goal', ts: base, sessionId: s1, visitorId: v1, props: { name: 'retired' } },
      // Deduplicated within the batch.
      pv('/pricing/again', 0, dupKey),
    ]);
    expect(res.body).toMatchObject({ acceptedCount: 11, dedupedCount: 1, rejectedCount: 2 });
    // A repeat of a stored event, and a whole batch refused by Sec-GPC.
    const again = await fx.post([pv('/pricing/pro', 0, dupKey)]);
    expect(again.body).toMatchObject({ acceptedCount: 0, dedupedCount: 1 });
    const gpc = await fx.post(
      [pv('/pricing/gpc', 0), { type: 'event', ts: base, visitorId: v1, props: { name: 'signup' } }],
      {
        headers: { 'Sec-GPC': '1' },
      },
    );
    expect(gpc.body).toMatchObject({ acceptedCount: 0, rejectedCount: 2 });

    expect(await waitForEvents(ctx, 11, `website_id = '${fx.website.id}'`)).toBe(11);
    await idle(ctx.redis);
    const jobs = await queued(fx.website.id);

    // event.tracked: one per stored event, keyed by its id, with its name for delivery's filter.
    const stored = await (
      await ctx.clickhouse.query({
        query: 'SELECT toString(event_id) AS id, type, name FROM events WHERE website_id = {w:UUID}',
        query_params: { w: fx.website.id },
        format: 'JSONEachRow',
      })
    ).json<{ id: string; type: string; name: string }>();
    const tracked = byEvent(jobs, 'event.tracked');
    expect(tracked.map((j) => j.key).sort()).toEqual(stored.map((s) => `event.tracked.${s.id}`).sort());
    for (const s of stored) {
      const job = tracked.find((j) => j.key === `event.tracked.${s.id}`)!;
      expect(job.eventName).toBe(s.name);
      expect(job.data).toMatchObject({ event_id: s.id, type: s.type, name: s.name });
    }
    const firstView = tracked.find((j) => (j.data as { url?: string }).url === 'https://shop.example.com/pricing/pro')!;
    expect(firstView.timestamp).toBe(new Date(base).toISOString());
    expect(firstView.data).toMatchObject({ visitor_id: v1, session_id: s1, type: 'pageview', name: '' });

    // goal.completed: the path goal's pageview, the event goal's custom event and goal event, the purchase goal's
    // two succeeded purchases; not the retired goal's event, not the failed purchase.
    const completed = byEvent(jobs, 'goal.completed');
    const completedBy = (goal: string) => completed.filter((j) => j.data.goal_id === goal);
    expect(completed).toHaveLength(5);
    expect(completedBy(goals.pricing)).toHaveLength(1);
    expect(completedBy(goals.pricing)[0].data).toEqual({
      goal_id: goals.pricing,
      goal_name: 'Visit pricing',
      visitor_id: v1,
      session_id: s1,
      page: '/pricing/pro',
    });
    expect(
      completedBy(goals.signup)
        .map((j) => j.data.value ?? null)
        .sort(),
    ).toEqual([12.5, null]);
    expect(
      completedBy(goals.buy)
        .map((j) => j.data.value)
        .sort(),
    ).toEqual([10, 49]);

    // visitor.identified: the identify event.
    const identified = byEvent(jobs, 'visitor.identified');
    expect(identified).toHaveLength(1);
    expect(identified[0].data).toEqual({
      visitor_id: v1,
      user_id: 'cus_1',
      traits: { email: 'a@example.com', plan: 'pro' },
    });
    expect(identified[0].timestamp).toBe(new Date(base + 4 * MIN).toISOString());

    // visitor.converted: the first succeeded purchase only.
    const converted = byEvent(jobs, 'visitor.converted');
    expect(converted).toHaveLength(1);
    expect(converted[0].data).toEqual({ visitor_id: v1, order_id: 'ord_1', amount: 49, currency: 'EUR' });

    // visitor.high_value: 4 pageviews (40) + an interaction (15) + a goal (20) + identified (10) = 85, reached
    // by the batch; the page is the latest pageview's, the time the visit's first to last event (4 minutes).
    const high = byEvent(jobs, 'visitor.high_value');
    expect(high).toHaveLength(1);
    expect(high[0].data).toEqual({ visitor_id: v1, score: 85, current_page: '/c', time_on_site: 240 });
    const day = new Date(base + 4 * MIN).toISOString().slice(0, 10);
    expect(high[0].key).toBe(highValueKey(fx.website.id, v1, day));
    // The score the stats read for that visit is the same.
    const read = await (
      await ctx.clickhouse.query({
        query: `SELECT ${VALUE_SCORE_SQL} AS score FROM (SELECT sum(pageviews) AS pv, sum(interactions) AS it,
          sum(engagement_ms) AS eng, sum(goals) AS goals, max(identified) AS idf, sum(purchases) AS buys
          FROM sessions WHERE website_id = {w:UUID} AND session_id = {s:String})`,
        query_params: { w: fx.website.id, s: s1 },
        format: 'JSONEachRow',
      })
    ).json<{ score: number }>();
    expect(Number(read[0].score)).toBe(85);
    expect(jobs).toHaveLength(stored.length + 5 + 1 + 1 + 1);
  });

  it('scores visits incrementally across jobs: high-value once per visitor per day; converted only once', async () => {
    const before = await queued(fx.website.id);
    const s2 = randomUUID();
    const v2 = randomUUID();
    const base = Date.now() - 20 * MIN;
    const pv = (visitor: string, session: string, path: string, at: number) => ({
      type: 'pageview',
      ts: base + at,
      sessionId: session,
      visitorId: visitor,
      props: { url: `https://shop.example.com${path}` },
    });
    // v2's visit in three requests: 2 pageviews (20), then 2 more (40), then a goal and a purchase-less
    // identify: 40 + 15 + 20 + 10 = 85 with the third job only.
    await fx.post([pv(v2, s2, '/x', 0), pv(v2, s2, '/y', MIN)]);
    await fx.post([pv(v2, s2, '/z', 2 * MIN), pv(v2, s2, '/w', 3 * MIN)]);
    // v1 again, another visit reaching 85 the same day: no second high_value; another purchase: no conversion.
    const s3 = randomUUID();
    await fx.post([
      pv(v1, s3, '/1', 0),
      pv(v1, s3, '/2', MIN),
      pv(v1, s3, '/3', 2 * MIN),
      pv(v1, s3, '/4', 3 * MIN),
      { type: 'goal', ts: base + 4 * MIN, sessionId: s3, visitorId: v1, props: { name: 'signup' } },
      { type: 'identify', ts: base + 4 * MIN, sessionId: s3, visitorId: v1, props: { name: 'Ann' } },
      { type: 'purchase', ts: base + 5 * MIN, visitorId: v1, props: { amount: 1 } },
    ]);
    await waitForEvents(ctx, 11 + 4 + 7, `website_id = '${fx.website.id}'`);
    await idle(ctx.redis);
    expect(byEvent(await queued(fx.website.id), 'visitor.high_value')).toHaveLength(1);
    await fx.post([
      { type: 'goal', ts: base + 5 * MIN, sessionId: s2, visitorId: v2, props: { name: 'signup' } },
      { type: 'identify', ts: base + 6 * MIN, sessionId: s2, visitorId: v2, props: { email: 'b@example.com' } },
      { type: 'purchase', ts: base + 6 * MIN, visitorId: v2, props: { amount: 3, currency: 'USD' } },
    ]);
    await waitForEvents(ctx, 11 + 4 + 7 + 3, `website_id = '${fx.website.id}'`);
    await idle(ctx.redis);
    const after = await queued(fx.website.id);
    const high = byEvent(after, 'visitor.high_value');
    expect(high).toHaveLength(2);
    expect(high.find((j) => j.data.visitor_id === v2)?.data).toEqual({
      visitor_id: v2,
      score: 85,
      current_page: '/w',
      time_on_site: 360,
    });
    const converted = byEvent(after, 'visitor.converted');
    expect(converted.map((j) => j.data.visitor_id).sort()).toEqual([v1, v2].sort());
    expect(byEvent(after, 'visitor.identified')).toHaveLength(byEvent(before, 'visitor.identified').length + 2);
  });
});

it('a website without webhooks adds nothing, and an inactive webhook counts as none', async () => {
  const other = await createWebsite(ctx, fx.user, `quiet-${randomUUID().slice(0, 8)}.example.com`);
  await addWebhook(other.id, ['event.tracked'], false);
  const w = startWriter();
  try {
    const res = await fx.post(
      [
        {
          type: 'pageview',
          ts: Date.now(),
          sessionId: randomUUID(),
          visitorId: randomUUID(),
          props: { url: 'https://q.example.com/' },
        },
        { type: 'identify', ts: Date.now(), visitorId: randomUUID(), props: { email: 'q@example.com' } },
      ],
      { trackingCode: other.tracking_code },
    );
    expect(res.body.acceptedCount).toBe(2);
    expect(await waitForEvents(ctx, 2, `website_id = '${other.id}'`)).toBe(2);
    await idle(ctx.redis);
    expect(await queued(other.id)).toEqual([]);
    // No visit state or mark either.
    expect(await ctx.redis.keys(`${ctx.config.REDIS_PREFIX}:webhooks:*:${other.id}:*`)).toEqual([]);
  } finally {
    await w.stop();
  }
});

describe('retries', () => {
  let site: { id: string; tracking_code: string };
  beforeAll(async () => {
    site = await createWebsite(ctx, fx.user, `retry-${randomUUID().slice(0, 8)}.example.com`);
    await addWebhook(site.id, ['event.tracked', 'visitor.high_value', 'visitor.identified']);
  });

  /** A visit that reaches 100 in one request: 4 pageviews, 10 engaged minutes… as server events: 40+15+20+10. */
  const visit = (tag: string) => {
    const session = randomUUID();
    const visitor = randomUUID();
    const t = Date.now() - 10 * MIN;
    return [
      ...[0, 1, 2, 3].map((i) => ({
        type: 'pageview',
        ts: t + i * 1000,
        sessionId: session,
        visitorId: visitor,
        props: { url: `https://r.example.com/${tag}/${i}` },
      })),
      { type: 'goal', ts: t + 5000, sessionId: session, visitorId: visitor, props: { name: 'signup' } },
      {
        type: 'identify',
        ts: t + 6000,
        sessionId: session,
        visitorId: visitor,
        props: { email: `${tag}@example.com` },
      },
    ];
  };

  /** Removes (and returns) every queued webhook event job: as if delivery had taken them already. */
  async function consumeAll(): Promise<WebhookEventJob[]> {
    const jobs = await events.getJobs(['waiting']);
    const mine = jobs.filter((j) => (j.data as WebhookEventJob).websiteId === site.id);
    await Promise.all(mine.map((j) => j.remove()));
    return mine.map((j) => j.data as WebhookEventJob);
  }

  it('a job whose worker failed between the write and the fan-out fans out once on its retry', async () => {
    await addGoal(site.id, 'signup', 'event').catch(() => undefined);
    let calls = 0;
    const w = startWriter({
      fanout: (real) =>
        Object.assign(Object.create(real) as WebhookFanout, {
          fanOut: async (...args: Parameters<WebhookFanout['fanOut']>) => {
            calls++;
            // The first flush's events are stored; the "crash" comes before any of its fan-out.
            if (calls === 1) throw new Error('simulated crash after the write');
            return real.fanOut(...args);
          },
        }),
    });
    try {
      const res = await fx.post(visit('before'), { trackingCode: site.tracking_code });
      expect(res.body.acceptedCount).toBe(6);
      expect(await waitForEvents(ctx, 6, `website_id = '${site.id}'`)).toBe(6);
      await idle(ctx.redis);
      expect(calls).toBe(2);
      expect(await waitForEvents(ctx, 6, `website_id = '${site.id}'`)).toBe(6);
      const jobs = await consumeAll();
      expect(byEvent(jobs, 'event.tracked')).toHaveLength(6);
      expect(byEvent(jobs, 'visitor.identified')).toHaveLength(1);
      expect(byEvent(jobs, 'visitor.high_value')).toHaveLength(1);
      expect(byEvent(jobs, 'visitor.high_value')[0].data.score).toBe(85);
    } finally {
      await w.stop();
    }
  });

  it('a job whose fan-out was queued and delivered before its worker failed is not fanned out again, even regrouped', async () => {
    let calls = 0;
    const delivered: WebhookEventJob[] = [];
    const w = startWriter({
      maxWaitMs: 1_500,
      fanout: (real) =>
        Object.assign(Object.create(real) as WebhookFanout, {
          fanOut: async (...args: Parameters<WebhookFanout['fanOut']>) => {
            calls++;
            await real.fanOut(...args);
            // Delivery takes the jobs at once (BullMQ keeps no id to refuse a re-add), then the worker "dies".
            if (calls === 1) {
              delivered.push(...(await consumeAll()));
              throw new Error('simulated crash after the fan-out');
            }
          },
        }),
    });
    try {
      await fx.post(visit('after-a'), { trackingCode: site.tracking_code });
      await fx.post(visit('after-b'), { trackingCode: site.tracking_code });
      await waitForEvents(ctx, 6 + 12, `website_id = '${site.id}'`);
      // Posted while the failed jobs wait out their backoff: the retry's flush holds them and this one.
      await new Promise((r) => setTimeout(r, 300));
      await fx.post(visit('after-c'), { trackingCode: site.tracking_code });
      expect(await waitForEvents(ctx, 6 + 18, `website_id = '${site.id}'`)).toBe(24);
      await idle(ctx.redis);
      expect(calls).toBe(2);
      const later = await consumeAll();
      const all = [...delivered, ...later];
      // 12 events and 2 visits before the crash, delivered once; only the new request's 6 + 1 + 1 after it.
      expect(byEvent(delivered, 'event.tracked')).toHaveLength(12);
      expect(byEvent(later, 'event.tracked')).toHaveLength(6);
      expect(new Set(all.map((j) => j.key)).size).toBe(all.length);
      expect(byEvent(all, 'visitor.high_value')).toHaveLength(3);
      expect(byEvent(all, 'visitor.identified')).toHaveLength(3);
    } finally {
      await w.stop();
    }
    // The marks went with their completed jobs.
    expect(await ctx.redis.keys(`${bullPrefix(ctx.config.REDIS_PREFIX)}:${QUEUE_NAMES.ingest}:webhooks:*`)).toEqual([]);
  });
});
