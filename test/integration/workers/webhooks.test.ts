// Delivery of issue 26 (docs/webhooks.md): event jobs on `webhook-events` become one signed POST per subscribed
// webhook, retried on a (here shortened) schedule, logged per attempt, capped per webhook, never doubled; a run
// of failures disables the webhook; the address judged is the address connected to.

import type { Queue } from 'bullmq';
import { createProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { createRedis } from '../../../lib/redis';
import type { WebhookEventJob } from '../../../lib/webhooks/events';
import { sendWebhook } from '../../../lib/webhooks/send';
import { createWebhook, deliveryIdFor } from '../../../lib/webhooks/store';
import type { ResolveHost } from '../../../lib/webhooks/target';
import { startWorker } from '../../../workers/main';
import { startWebhookWorkers, type WebhookWorkerOptions } from '../../../workers/webhooks';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { type Receiver, startReceiver, verifySignature } from '../../helpers/webhookReceiver';

let ctx: TestContext;
let owner: TestUser;
let connection: ReturnType<typeof createRedis>;
let events: Queue;
let workers: ReturnType<typeof startWebhookWorkers>;
const receivers: Receiver[] = [];
const disabled: { id: string; websiteId: string; reason: string }[] = [];

const DELAYS = [20, 40, 80, 160, 320]; // 6 attempts
const resolve: ResolveHost = async (host) => {
  if (host === 'rebind.example.com') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

function start(overrides: Partial<WebhookWorkerOptions> = {}) {
  return startWebhookWorkers({
    pool: ctx.pool,
    connection,
    redisPrefix: ctx.config.REDIS_PREFIX,
    logger: ctx.logger,
    rules: { allowPrivate: true, production: false },
    resolve,
    timeoutMs: 2_000,
    retryDelaysMs: DELAYS,
    caps: { concurrency: 2, perSecond: 1_000 },
    concurrency: 8,
    disableAfter: { failures: 8, overMs: 300 },
    onWebhookDisabled: (w) => {
      disabled.push(w);
    },
    ...overrides,
  });
}

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await registerUser(ctx, 'enterprise', 'delivery-owner');
  connection = createRedis(ctx.config.REDIS_URL, 'worker', 'tidemark-test-webhooks');
  events = createProducerQueue(QUEUE_NAMES.webhookEvents, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
  workers = start();
});
afterAll(async () => {
  await workers.close();
  await events.close();
  await Promise.all(receivers.map((r) => r.close()));
  await connection.quit();
  await ctx.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

let sites = 0;
async function hook(url: string, events: WebhookEventJob['event'][], eventNames: string[] | null = null) {
  const site = await createWebsite(ctx, owner, `delivery-${++sites}.example.com`);
  const secret = `secret-for-site-${sites}-0123456789`;
  const webhook = await createWebhook(ctx.pool, site.id, owner.id, { url, events, event_names: eventNames }, secret);
  return { site, webhook, secret };
}

let keys = 0;
function eventJob(websiteId: string, over: Partial<WebhookEventJob> = {}): WebhookEventJob {
  return {
    websiteId,
    event: 'goal.completed',
    key: `evt-${++keys}-${Date.now()}`,
    timestamp: '2026-11-25T10:00:00.000Z',
    data: { goal_id: 'g1', goal_name: 'Signup', visitor_id: 'v1', session_id: 's1', value: 12.5 },
    ...over,
  };
}
const fire = (job: WebhookEventJob) => events.add(job.event, job, { jobId: job.key });

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition') {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function deliveryRow(id: string) {
  return (await ctx.pool.query('SELECT * FROM webhook_deliveries WHERE id = $1', [id])).rows[0];
}

describe('delivery', () => {
  it('POSTs {event, timestamp, data}, signed, with the event and delivery ids, and logs the attempt', async () => {
    const r = await receiver();
    const { webhook, secret } = await hook(r.url, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await fire(job);
    await until(() => r.received.length === 1, 10_000, 'the delivery');
    const got = r.received[0];
    expect(JSON.parse(got.body)).toEqual({ event: 'goal.completed', timestamp: job.timestamp, data: job.data });
    expect(got.headers['x-tidemark-event']).toBe('goal.completed');
    const id = deliveryIdFor(webhook.id, job.key);
    expect(got.headers['x-tidemark-delivery']).toBe(id);
    expect(
      verifySignature(secret, String(got.headers['x-tidemark-signature']), got.body, Math.floor(Date.now() / 1000)),
    ).toBe(true);
    await until(async () => (await deliveryRow(id))?.status === 'succeeded', 5_000, 'the log');
    const row = await deliveryRow(id);
    expect(row).toMatchObject({
      webhook_id: webhook.id,
      event: 'goal.completed',
      event_key: job.key,
      attempts: 1,
      response_status: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(row.duration_ms).toBeGreaterThanOrEqual(0);
    expect(row.completed_at).toBeInstanceOf(Date);
  });

  it('sends only what a webhook subscribed to, event.tracked by name when filtered, nothing to one turned off', async () => {
    const r = await receiver();
    const { site, webhook: filtered } = await hook(r.url, ['event.tracked'], ['signup']);
    const other = await createWebhook(
      ctx.pool,
      site.id,
      owner.id,
      { url: `${r.url}?all`, events: ['event.tracked', 'goal.completed'] },
      'x'.repeat(20),
    );
    const off = await createWebhook(
      ctx.pool,
      site.id,
      owner.id,
      { url: `${r.url}?off`, events: ['event.tracked'] },
      'y'.repeat(20),
    );
    await ctx.pool.query('UPDATE webhooks SET is_active = false WHERE id = $1', [off.id]);
    const tracked = (name: string) =>
      eventJob(site.id, {
        event: 'event.tracked',
        eventName: name,
        data: { event_id: `e-${name}`, type: 'event', name, visitor_id: 'v', session_id: 's' },
      });
    await fire(tracked('signup'));
    await fire(tracked('other'));
    await fire(eventJob(site.id, { event: 'visitor.identified', data: { visitor_id: 'v', user_id: 'u' } }));
    await until(() => r.received.length >= 3, 10_000, 'three deliveries');
    await sleep(300);
    const names = (path: string) =>
      r.received
        .filter((g) => g.path === path)
        .map((g) => JSON.parse(g.body).data.name)
        .sort();
    expect(names('/hook')).toEqual(['signup']);
    expect(names('/hook?all')).toEqual(['other', 'signup']);
    expect(names('/hook?off')).toEqual([]);
    expect(r.received).toHaveLength(3);
    const rows = await ctx.pool.query(
      'SELECT webhook_id, event_key FROM webhook_deliveries WHERE webhook_id = ANY($1)',
      [[filtered.id, other.id, off.id]],
    );
    expect(rows.rows.filter((x) => x.webhook_id === filtered.id)).toHaveLength(1);
    expect(rows.rows.filter((x) => x.webhook_id === other.id)).toHaveLength(2);
    expect(rows.rows.filter((x) => x.webhook_id === off.id)).toHaveLength(0);
  });

  it('delivers an event job added twice once, also when added again after its first run was forgotten', async () => {
    const r = await receiver();
    const { webhook } = await hook(r.url, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await Promise.all([fire(job), fire(job)]);
    await until(() => r.received.length === 1, 10_000, 'the delivery');
    const id = deliveryIdFor(webhook.id, job.key);
    await until(async () => (await deliveryRow(id))?.status === 'succeeded', 5_000, 'the log');
    // BullMQ forgets finished jobs: the event job and the delivery job both gone, the event comes again.
    await events.remove(job.key);
    const deliveries = createProducerQueue(
      QUEUE_NAMES.webhookDeliveries,
      ctx.config.REDIS_URL,
      ctx.config.REDIS_PREFIX,
    );
    await deliveries.remove(`${webhook.id}-${job.key}`);
    await deliveries.close();
    await fire(job);
    await until(async () => (await events.getJobState(job.key)) === 'completed', 5_000, 'the repeated event');
    await sleep(300);
    expect(r.received).toHaveLength(1);
    expect((await deliveryRow(id)).attempts).toBe(1);
  });

  it('retries a receiver that fails, with the same delivery id, until it recovers', async () => {
    const r = await receiver();
    let calls = 0;
    r.answer = () => ({ status: ++calls <= 2 ? 503 : 200 });
    const { webhook } = await hook(r.url, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await fire(job);
    await until(() => r.received.length === 3, 10_000, 'three attempts');
    const id = deliveryIdFor(webhook.id, job.key);
    expect(new Set(r.received.map((g) => g.headers['x-tidemark-delivery']))).toEqual(new Set([id]));
    expect(r.received.map((g) => g.body)).toEqual(Array(3).fill(r.received[0].body));
    // The waits follow the schedule: at least 20 ms, then 40 ms.
    expect(r.received[1].at - r.received[0].at).toBeGreaterThanOrEqual(15);
    expect(r.received[2].at - r.received[1].at).toBeGreaterThanOrEqual(35);
    await until(async () => (await deliveryRow(id))?.status === 'succeeded', 5_000, 'the log');
    expect(await deliveryRow(id)).toMatchObject({ attempts: 3, response_status: 200, last_error: null });
    const w = await ctx.pool.query('SELECT failure_streak, failing_since, is_active FROM webhooks WHERE id = $1', [
      webhook.id,
    ]);
    expect(w.rows[0]).toEqual({ failure_streak: 0, failing_since: null, is_active: true });
  });

  it('gives up after the last attempt and logs why', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 500 });
    const { webhook } = await hook(r.url, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await fire(job);
    const id = deliveryIdFor(webhook.id, job.key);
    await until(async () => (await deliveryRow(id))?.status === 'failed', 10_000, 'the last attempt');
    expect(r.received).toHaveLength(DELAYS.length + 1);
    expect(await deliveryRow(id)).toMatchObject({
      attempts: 6,
      response_status: 500,
      last_error: 'HTTP 500',
      next_attempt_at: null,
    });
    // 6 failures < the 8 that disable.
    const w = await ctx.pool.query('SELECT failure_streak, is_active FROM webhooks WHERE id = $1', [webhook.id]);
    expect(w.rows[0]).toEqual({ failure_streak: 6, is_active: true });
  });

  it('disables a webhook after the run of failures and tells the hook once', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 500 });
    const { webhook } = await hook(r.url, ['goal.completed']);
    const jobs = [eventJob(webhook.website_id), eventJob(webhook.website_id)];
    for (const j of jobs) await fire(j);
    await until(() => disabled.some((d) => d.id === webhook.id), 10_000, 'the webhook disabled');
    const w = (await ctx.pool.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id])).rows[0];
    expect(w).toMatchObject({ is_active: false, disabled_notified_at: null });
    // Both conditions: at least 8 failures, and the run at least 300 ms long when it disabled the webhook.
    expect(w.failure_streak).toBeGreaterThanOrEqual(8);
    expect(w.disabled_at.getTime() - w.failing_since.getTime()).toBeGreaterThanOrEqual(300);
    expect(w.disabled_reason).toBe('8 consecutive failed attempts over at least 0 h');
    expect(w.disabled_at).toBeInstanceOf(Date);
    expect(disabled.filter((d) => d.id === webhook.id)).toEqual([
      { id: webhook.id, websiteId: webhook.website_id, url: webhook.url, reason: w.disabled_reason },
    ]);
    // Both deliveries end failed; nothing more is sent.
    await until(
      async () => {
        const rows = await ctx.pool.query('SELECT status FROM webhook_deliveries WHERE webhook_id = $1', [webhook.id]);
        return rows.rows.length === 2 && rows.rows.every((x) => x.status === 'failed');
      },
      10_000,
      'both deliveries ended',
    );
    const sent = r.received.length;
    expect(sent).toBe(w.failure_streak); // every attempt counted, none after the webhook was disabled
    await fire(eventJob(webhook.website_id));
    await sleep(300);
    expect(r.received).toHaveLength(sent);
  });

  it('keeps one slow receiver from delaying another, and holds it to its concurrency cap', async () => {
    const slow = await receiver();
    const fast = await receiver();
    let inFlight = 0;
    let maxInFlight = 0;
    slow.answer = () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => inFlight--, 800);
      return { status: 200, delayMs: 800 };
    };
    const s = await hook(slow.url, ['goal.completed']);
    const f = await hook(fast.url, ['goal.completed']);
    for (let i = 0; i < 12; i++) await fire(eventJob(s.webhook.website_id));
    await sleep(50);
    const startedAt = Date.now();
    for (let i = 0; i < 6; i++) await fire(eventJob(f.webhook.website_id));
    await until(() => fast.received.length === 6, 10_000, 'the fast deliveries');
    const fastDone = Date.now() - startedAt;
    expect(fastDone).toBeLessThan(700); // under one slow answer, let alone 12 / 2 of them
    expect(slow.received.length).toBeLessThan(12);
    await until(() => slow.received.length === 12, 15_000, 'the slow deliveries');
    expect(maxInFlight).toBe(2);
  });

  it('connects to the address it judged: a name resolved by the injected resolver, Host kept', async () => {
    const r = await receiver();
    const { webhook } = await hook(`http://rebind.example.com:${r.port}/hook`, ['goal.completed']);
    await fire(eventJob(webhook.website_id));
    await until(() => r.received.length === 1, 10_000, 'the delivery');
    expect(r.received[0].headers.host).toBe(`rebind.example.com:${r.port}`);
  });

  it('times out an attempt that gets no answer', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 200, delayMs: 1_000 });
    const result = await sendWebhook({
      url: r.url,
      secret: 's'.repeat(20),
      event: 'goal.completed',
      deliveryId: 'd',
      body: '{}',
      timeoutMs: 200,
      rules: { allowPrivate: true, production: false },
      resolve,
    });
    expect(result).toMatchObject({ ok: false, error: 'no answer within 200 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
    expect(result.durationMs).toBeLessThan(900);
  });
});

describe('delivery with WEBHOOK_ALLOW_PRIVATE off', () => {
  beforeAll(async () => {
    await workers.close();
    workers = start({ rules: { allowPrivate: false, production: false } });
  });

  it('refuses at delivery time a name that now resolves to a private address (DNS rebinding)', async () => {
    const r = await receiver();
    const { webhook } = await hook(`http://rebind.example.com:${r.port}/hook`, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await fire(job);
    const id = deliveryIdFor(webhook.id, job.key);
    await until(async () => (await deliveryRow(id))?.attempts >= 1, 10_000, 'the first attempt');
    expect(await deliveryRow(id)).toMatchObject({
      last_error: 'url: the host resolves to a private, loopback or link-local address',
      response_status: null,
    });
    await sleep(200);
    expect(r.received).toHaveLength(0);
  });

  it('refuses a literal private address at delivery time too', async () => {
    const r = await receiver();
    const { webhook } = await hook(r.url, ['goal.completed']);
    const job = eventJob(webhook.website_id);
    await fire(job);
    const id = deliveryIdFor(webhook.id, job.key);
    await until(async () => (await deliveryRow(id))?.attempts >= 1, 10_000, 'the first attempt');
    expect((await deliveryRow(id)).last_error).toBe('url: must point at a public host, not a private or local one');
    expect(r.received).toHaveLength(0);
  });
});

describe('the worker role', () => {
  it('serves both webhook queues (workers/main.ts)', async () => {
    await workers.close();
    const role = await startWorker({ ...ctx.config, WEBHOOK_ALLOW_PRIVATE: true });
    try {
      const r = await receiver();
      const { webhook } = await hook(r.url, ['visitor.converted']);
      await fire(
        eventJob(webhook.website_id, {
          event: 'visitor.converted',
          data: { visitor_id: 'v9', amount: 49, currency: 'EUR' },
        }),
      );
      await until(() => r.received.length === 1, 15_000, 'the delivery through the worker role');
      expect(JSON.parse(r.received[0].body).data).toEqual({ visitor_id: 'v9', amount: 49, currency: 'EUR' });
    } finally {
      await role.stop();
      workers = start(); // afterAll closes it
    }
  });
});
