// The webhooks' two queues (docs/webhooks.md). `webhook-events` holds one job per event that happened (added
// by the ingest writer's fan-out, lib/webhooks/events.ts); each becomes one job per subscribed webhook on
// `webhook-deliveries`, whose id is derived from (webhook, event key) so a repeated event job never doubles a
// delivery. A delivery job is one signed POST, retried on the schedule below, logged attempt by attempt.
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Pool } from 'pg';
import type { Logger } from '../lib/log';
import { QUEUE_NAMES } from '../lib/queue/queues';
import { bullPrefix, type Redis, redisKey } from '../lib/redis';
import { type WebhookEventJob, webhookEventJob } from '../lib/webhooks/events';
import { type WebhookCaps, WebhookLimiter } from '../lib/webhooks/limits';
import { sendWebhook } from '../lib/webhooks/send';
import {
  abandonDelivery,
  activeSubscriptions,
  countAttempt,
  deliveryIdFor,
  type FailureRule,
  getWebhook,
  openDelivery,
  pruneDeliveries,
  recordAttempt,
  type Subscription,
  takes,
} from '../lib/webhooks/store';
import type { ResolveHost, TargetRules } from '../lib/webhooks/target';

/** Waits after attempt 1, 2, …: 8 attempts over about 15.6 h, so a receiver down for hours still gets it. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];

export interface WebhookWorkerOptions {
  pool: Pool;
  /** A blocking (worker) connection. */
  connection: Redis;
  redisPrefix: string;
  logger: Logger;
  rules: TargetRules;
  resolve: ResolveHost;
  timeoutMs?: number;
  /** The wait after each failed attempt; its length + 1 is the number of attempts. */
  retryDelaysMs?: number[];
  caps?: WebhookCaps;
  /** Attempts in flight in this process, over all webhooks. */
  concurrency?: number;
  disableAfter?: FailureRule;
  /** Days a finished delivery stays in the log. */
  logDays?: number;
  /** Told when a run of failures disabled a webhook (the row keeps disabled_at and disabled_notified_at too). */
  onWebhookDisabled?: (webhook: { id: string; websiteId: string; url: string; reason: string }) => Promise<void> | void;
}

export const DEFAULT_CAPS: WebhookCaps = { concurrency: 16, perSecond: 1_000 };
const DEFAULT_CONCURRENCY = 64;
export const DEFAULT_DISABLE_AFTER: FailureRule = { failures: 20, overMs: 24 * 3_600_000 };
const DEFAULT_TIMEOUT_MS = 10_000;
const SUBSCRIPTIONS_TTL_MS = 1_000;

interface DeliveryJob {
  webhookId: string;
  deliveryId: string;
  event: string;
  key: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export function startWebhookWorkers(o: WebhookWorkerOptions) {
  const prefix = bullPrefix(o.redisPrefix);
  const delays = o.retryDelaysMs ?? RETRY_DELAYS_MS;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const disableAfter = o.disableAfter ?? DEFAULT_DISABLE_AFTER;
  const deliveries = new Queue<DeliveryJob>(QUEUE_NAMES.webhookDeliveries, { connection: o.connection, prefix });
  deliveries.on('error', () => undefined);
  const limiter = new WebhookLimiter(o.connection, o.redisPrefix, o.caps ?? DEFAULT_CAPS, timeoutMs * 2 + 5_000);

  // A website's subscriptions, read at most once a second per process: a busy website's events would otherwise
  // each cost a query. A change reaches the fan-out within that second; the delivery re-reads the webhook.
  const subscriptions = new Map<string, { at: number; list: Promise<Subscription[]> }>();
  const subscriptionsOf = (websiteId: string) => {
    const now = Date.now();
    const cached = subscriptions.get(websiteId);
    if (cached && now - cached.at < SUBSCRIPTIONS_TTL_MS) return cached.list;
    if (subscriptions.size > 10_000) subscriptions.clear();
    const list = activeSubscriptions(o.pool, websiteId);
    subscriptions.set(websiteId, { at: now, list });
    list.catch(() => subscriptions.delete(websiteId));
    return list;
  };

  const fanOut = async (job: Job) => {
    const event = webhookEventJob.parse(job.data) as WebhookEventJob;
    const subscribed = (await subscriptionsOf(event.websiteId)).filter((s) => takes(s, event.event, event.eventName));
    for (const { id: webhookId } of subscribed) {
      const deliveryId = deliveryIdFor(webhookId, event.key);
      // Logged first: a delivery attempted to its end is not queued again when its event job is repeated after
      // BullMQ forgot the delivery job; one still pending is (re)added, and its job id keeps it single.
      if (!(await openDelivery(o.pool, { id: deliveryId, webhookId, event: event.event, key: event.key }))) continue;
      await deliveries.add(
        event.event,
        {
          webhookId,
          deliveryId,
          event: event.event,
          key: event.key,
          timestamp: event.timestamp,
          data: event.data,
        },
        {
          jobId: `${webhookId}-${event.key}`,
          attempts: delays.length + 1,
          backoff: { type: 'webhook' },
          removeOnComplete: { age: 3_600, count: 10_000 },
          removeOnFail: { age: 24 * 3_600, count: 10_000 },
        },
      );
      await pruneOccasionally(webhookId);
    }
  };

  // The log is trimmed per webhook at most once an hour, by whichever worker gets there first.
  const pruneOccasionally = async (webhookId: string) => {
    const key = redisKey(o.redisPrefix, 'webhook', webhookId, 'pruned');
    if ((await o.connection.set(key, '1', 'EX', 3_600, 'NX')) !== 'OK') return;
    await pruneDeliveries(o.pool, webhookId, o.logDays ?? 30);
  };

  const deliver = async (job: Job<DeliveryJob>, token?: string) => {
    const d = job.data;
    const webhook = await getWebhook(o.pool, d.webhookId);
    if (!webhook) return; // deleted: its log went with it
    if (!webhook.is_active) {
      await abandonDelivery(o.pool, d.deliveryId, webhook.disabled_at ? 'webhook disabled' : 'webhook turned off');
      return;
    }
    const slot = `${job.id}#${job.attemptsStarted}`;
    if (!(await limiter.take(webhook.id, slot))) {
      // At its cap: wait a moment without spending an attempt, leaving this worker's slot to other webhooks.
      await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 400), token);
      throw new DelayedError();
    }
    let outcome: Awaited<ReturnType<typeof sendWebhook>>;
    try {
      outcome = await sendWebhook({
        url: webhook.url,
        secret: webhook.secret,
        event: d.event,
        deliveryId: d.deliveryId,
        body: JSON.stringify({ event: d.event, timestamp: d.timestamp, data: d.data }),
        timeoutMs,
        rules: o.rules,
        resolve: o.resolve,
      });
    } finally {
      await limiter.release(webhook.id, slot);
    }
    const attempt = job.attemptsMade + 1;
    const next = !outcome.ok && attempt <= delays.length ? new Date(Date.now() + delays[attempt - 1]) : null;
    // A success only matters to the failure run when there is one (the common case costs no query).
    const disabled =
      outcome.ok && webhook.failure_streak === 0
        ? undefined
        : await countAttempt(o.pool, webhook.id, outcome.ok, disableAfter);
    await recordAttempt(o.pool, d.deliveryId, outcome, disabled ? null : next);
    if (outcome.ok) return;
    if (disabled) {
      o.logger.warn({ webhookId: webhook.id, websiteId: webhook.website_id }, 'webhook disabled after failures');
      await o.onWebhookDisabled?.({
        id: webhook.id,
        websiteId: webhook.website_id,
        url: webhook.url,
        reason: disabled,
      });
      throw new UnrecoverableError('webhook disabled');
    }
    throw new Error(outcome.error ?? 'delivery failed');
  };

  const events = new Worker(QUEUE_NAMES.webhookEvents, fanOut, { connection: o.connection, prefix, concurrency: 8 });
  const sender = new Worker<DeliveryJob>(QUEUE_NAMES.webhookDeliveries, deliver, {
    connection: o.connection,
    prefix,
    concurrency: o.concurrency ?? DEFAULT_CONCURRENCY,
    settings: { backoffStrategy: (attemptsMade: number) => delays[Math.min(attemptsMade, delays.length) - 1] ?? 0 },
  });
  events.on('failed', (job, err) =>
    o.logger.error({ jobId: job?.id, err: err.message }, 'webhook fan-out failed; retried by BullMQ'),
  );
  // A failed attempt is already in the deliveries log; its reason never holds the URL or the secret.
  sender.on('failed', (job, err) =>
    o.logger.debug(
      { deliveryId: job?.data.deliveryId, attempts: job?.attemptsMade, err: err.message },
      'attempt failed',
    ),
  );
  return {
    events,
    sender,
    async close() {
      await Promise.all([events.close(), sender.close()]);
      await deliveries.close();
    },
  };
}
