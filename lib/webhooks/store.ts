// Webhooks and their deliveries log in PostgreSQL (sql/postgres/017_webhooks.sql).
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { conflict, notFound } from '../errors';
import type { WebhookEventName } from './events';
import {
  type CreateWebhookBody,
  type DeliveryView,
  MAX_WEBHOOKS_PER_WEBSITE,
  type UpdateWebhookBody,
  type WebhookView,
} from './schemas';

export interface WebhookRow {
  id: string;
  website_id: string;
  url: string;
  events: WebhookEventName[];
  event_names: string[] | null;
  secret: string;
  is_active: boolean;
  failure_streak: number;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, website_id, url, events, event_names, secret, is_active, failure_streak, failing_since,
  disabled_at, disabled_reason, created_by, created_at, updated_at`;

/** Never the secret. */
export function webhookView(w: WebhookRow): WebhookView {
  return {
    id: w.id,
    website_id: w.website_id,
    url: w.url,
    events: w.events,
    event_names: w.event_names,
    is_active: w.is_active,
    failure_streak: w.failure_streak,
    disabled_at: w.disabled_at?.toISOString() ?? null,
    disabled_reason: w.disabled_reason,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
  };
}

export async function createWebhook(
  pool: Pool,
  websiteId: string,
  userId: string | null,
  body: CreateWebhookBody,
  secret: string,
): Promise<WebhookRow> {
  // The count and the insert in one statement: two concurrent registrations cannot both pass the cap.
  const { rows } = await pool.query<WebhookRow>(
    `INSERT INTO webhooks (website_id, url, events, event_names, secret, created_by)
     SELECT $1, $2, $3, $4, $5, $6
     WHERE (SELECT count(*) FROM webhooks WHERE website_id = $1) < $7
     RETURNING ${COLUMNS}`,
    [websiteId, body.url, body.events, body.event_names ?? null, secret, userId, MAX_WEBHOOKS_PER_WEBSITE],
  );
  if (!rows[0]) throw conflict(`A website may have at most ${MAX_WEBHOOKS_PER_WEBSITE} webhooks`);
  return rows[0];
}

export async function listWebhooks(pool: Pool, websiteId: string): Promise<WebhookRow[]> {
  const { rows } = await pool.query<WebhookRow>(
    `SELECT ${COLUMNS} FROM webhooks WHERE website_id = $1 ORDER BY created_at, id`,
    [websiteId],
  );
  return rows;
}

/** The website's webhook, else 404 (another website's id answers the same). */
export async function requireWebhook(pool: Pool, websiteId: string, webhookId: string): Promise<WebhookRow> {
  const { rows } = await pool.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $1 AND website_id = $2`, [
    webhookId,
    websiteId,
  ]);
  if (!rows[0]) throw notFound('Webhook not found');
  return rows[0];
}

export async function getWebhook(pool: Pool, webhookId: string): Promise<WebhookRow | undefined> {
  const { rows } = await pool.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $1`, [webhookId]);
  return rows[0];
}

export async function updateWebhook(
  pool: Pool,
  websiteId: string,
  webhookId: string,
  body: UpdateWebhookBody,
): Promise<WebhookRow> {
  const { rows } = await pool.query<WebhookRow>(
    `UPDATE webhooks SET
       url = COALESCE($3, url),
       events = COALESCE($4, events),
       event_names = CASE WHEN $5 THEN $6 ELSE event_names END,
       is_active = COALESCE($7, is_active),
       -- Turning a webhook on starts its failure run afresh (and re-enables one disabled after failures).
       failure_streak = CASE WHEN $7 THEN 0 ELSE failure_streak END,
       failing_since = CASE WHEN $7 THEN NULL ELSE failing_since END,
       disabled_at = CASE WHEN $7 THEN NULL ELSE disabled_at END,
       disabled_reason = CASE WHEN $7 THEN NULL ELSE disabled_reason END,
       disabled_notified_at = CASE WHEN $7 THEN NULL ELSE disabled_notified_at END,
       updated_at = now()
     WHERE id = $1 AND website_id = $2 RETURNING ${COLUMNS}`,
    [
      webhookId,
      websiteId,
      body.url ?? null,
      body.events ?? null,
      body.event_names !== undefined,
      body.event_names ?? null,
      body.is_active ?? null,
    ],
  );
  if (!rows[0]) throw notFound('Webhook not found');
  return rows[0];
}

export async function deleteWebhook(pool: Pool, websiteId: string, webhookId: string): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM webhooks WHERE id = $1 AND website_id = $2', [
    webhookId,
    websiteId,
  ]);
  if (!rowCount) throw notFound('Webhook not found');
}

export type Subscription = Pick<WebhookRow, 'id' | 'events' | 'event_names'>;

/** The website's active webhooks and what they take. */
export async function activeSubscriptions(pool: Pool, websiteId: string): Promise<Subscription[]> {
  const { rows } = await pool.query<Subscription>(
    'SELECT id, events, event_names FROM webhooks WHERE website_id = $1 AND is_active ORDER BY id',
    [websiteId],
  );
  return rows;
}

/** Whether a webhook takes this event (event.tracked: and its name filter admits the event's name). */
export function takes(s: Subscription, event: WebhookEventName, eventName: string | undefined): boolean {
  if (!s.events.includes(event)) return false;
  return event !== 'event.tracked' || s.event_names === null || s.event_names.includes(eventName ?? '');
}

/**
 * The delivery id of (webhook, event key): a UUID derived from both, so a repeated fan-out names the same
 * delivery and the receiver sees one X-Tidemark-Delivery however often it is attempted.
 */
export function deliveryIdFor(webhookId: string, eventKey: string): string {
  const h = createHash('sha256').update(`${webhookId}\n${eventKey}`).digest();
  h[6] = (h[6] & 0x0f) | 0x80; // version 8: custom
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Logs a delivery before its first attempt; answers false when it was already attempted to its end. */
export async function openDelivery(
  pool: Pool,
  d: { id: string; webhookId: string; event: string; key: string },
): Promise<boolean> {
  const { rows } = await pool.query<{ status: string }>(
    `WITH added AS (
       INSERT INTO webhook_deliveries (id, webhook_id, event, event_key, status) VALUES ($1, $2, $3, $4, 'pending')
       ON CONFLICT (webhook_id, event_key) DO NOTHING RETURNING status)
     SELECT status FROM added UNION ALL SELECT status FROM webhook_deliveries WHERE id = $1 LIMIT 1`,
    [d.id, d.webhookId, d.event, d.key],
  );
  return rows[0]?.status === 'pending' || rows[0]?.status === 'retrying';
}

export interface AttemptOutcome {
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

/** One attempt in the log: final when it succeeded or no attempt is left; else when the next one is due. */
export async function recordAttempt(
  pool: Pool,
  deliveryId: string,
  outcome: AttemptOutcome,
  nextAttemptAt: Date | null,
): Promise<void> {
  const status = outcome.ok ? 'succeeded' : nextAttemptAt ? 'retrying' : 'failed';
  await pool.query(
    `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, response_status = $3, last_error = $4,
       duration_ms = $5, last_attempt_at = now(), next_attempt_at = $6,
       completed_at = CASE WHEN $2 IN ('succeeded', 'failed') THEN now() END
     WHERE id = $1`,
    [deliveryId, status, outcome.status ?? null, outcome.error ?? null, outcome.durationMs, nextAttemptAt],
  );
}

/** A delivery given up without an attempt (its webhook was deleted, disabled or turned off meanwhile). */
export async function abandonDelivery(pool: Pool, deliveryId: string, reason: string): Promise<void> {
  await pool.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, completed_at = now()
     WHERE id = $1`,
    [deliveryId, reason],
  );
}

export interface FailureRule {
  /** Consecutive failed attempts… */
  failures: number;
  /** …spanning at least this long disable the webhook. */
  overMs: number;
}

/**
 * Counts an attempt against the webhook's failure run: a success ends the run; a failure extends it and
 * disables the webhook when the run is long enough both in attempts and in time. Answers the reason when this
 * attempt disabled it.
 */
export async function countAttempt(
  pool: Pool,
  webhookId: string,
  ok: boolean,
  rule: FailureRule,
): Promise<string | undefined> {
  if (ok) {
    await pool.query(
      'UPDATE webhooks SET failure_streak = 0, failing_since = NULL WHERE id = $1 AND failure_streak > 0',
      [webhookId],
    );
    return undefined;
  }
  const reason = `${rule.failures} consecutive failed attempts over at least ${Math.round(rule.overMs / 3_600_000)} h`;
  const { rows } = await pool.query<{ disabled: boolean }>(
    `UPDATE webhooks w SET failure_streak = w.failure_streak + 1, failing_since = COALESCE(w.failing_since, now()),
       is_active = CASE WHEN d.disable THEN false ELSE w.is_active END,
       disabled_at = CASE WHEN d.disable THEN now() ELSE w.disabled_at END,
       disabled_reason = CASE WHEN d.disable THEN $4 ELSE w.disabled_reason END
     FROM (SELECT id, is_active AND failure_streak + 1 >= $2
                  AND COALESCE(failing_since, now()) <= now() - make_interval(secs => $3 / 1000.0) AS disable
           FROM webhooks WHERE id = $1 FOR UPDATE) d
     WHERE w.id = d.id RETURNING d.disable AS disabled`,
    [webhookId, rule.failures, rule.overMs, reason],
  );
  return rows[0]?.disabled ? reason : undefined;
}

interface DeliveryRow {
  id: string;
  event: string;
  status: DeliveryView['status'];
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: Date;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  completed_at: Date | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function deliveryView(d: DeliveryRow): DeliveryView {
  return {
    id: d.id,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    response_status: d.response_status,
    last_error: d.last_error,
    duration_ms: d.duration_ms,
    created_at: d.created_at.toISOString(),
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: iso(d.next_attempt_at),
    completed_at: iso(d.completed_at),
  };
}

const DELIVERY_COLUMNS = `id, event, status, attempts, response_status, last_error, duration_ms, created_at,
  last_attempt_at, next_attempt_at, completed_at`;

/** Newest first. */
export async function listDeliveries(
  pool: Pool,
  webhookId: string,
  limit: number,
  offset: number,
): Promise<{ deliveries: DeliveryRow[]; total: number }> {
  const [page, count] = await Promise.all([
    pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1
       ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [webhookId, limit, offset],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]),
  ]);
  return { deliveries: page.rows, total: count.rows[0].n };
}

export async function getDelivery(pool: Pool, deliveryId: string): Promise<DeliveryRow | undefined> {
  const { rows } = await pool.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1`, [
    deliveryId,
  ]);
  return rows[0];
}

/** The log is bounded: finished deliveries older than `days` go. */
export async function pruneDeliveries(pool: Pool, webhookId: string, days: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND completed_at IS NOT NULL
       AND created_at < now() - make_interval(days => $2)`,
    [webhookId, days],
  );
  return rowCount ?? 0;
}

/** The owner was told the webhook was disabled (email, when SMTP is on). */
export async function markDisabledNotified(pool: Pool, webhookId: string): Promise<void> {
  await pool.query('UPDATE webhooks SET disabled_notified_at = now() WHERE id = $1', [webhookId]);
}
