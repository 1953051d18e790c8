// Idempotency of every notification per (website, kind, subject, recipient): a message is claimed by inserting
// its row before sending and released when the send fails. Two runs at once cannot both claim it; a worker that
// dies between the claim and the send loses that one message rather than ever sending it twice.
import type { Pool } from 'pg';

export type NotificationKind =
  | 'weekly_report'
  | 'monthly_report'
  | 'anomaly_alert'
  | 'anomaly_resolved'
  | 'webhook_disabled';

export interface SentKey {
  websiteId: string;
  kind: NotificationKind;
  subject: string;
  recipient: string;
}

const params = (k: SentKey) => [k.websiteId, k.kind, k.subject, k.recipient.toLowerCase()];

async function claim(pool: Pool, k: SentKey): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO notifications_sent (website_id, kind, subject, recipient) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    params(k),
  );
  return rowCount === 1;
}

async function release(pool: Pool, k: SentKey): Promise<void> {
  await pool.query(
    'DELETE FROM notifications_sent WHERE website_id = $1 AND kind = $2 AND subject = $3 AND recipient = $4',
    params(k),
  );
}

/**
 * Sends unless this key was sent already: 'sent', 'skipped' (sent before), or the send's error is thrown after
 * the claim is released.
 */
export async function sendOnce(pool: Pool, k: SentKey, send: () => Promise<void>): Promise<'sent' | 'skipped'> {
  if (!(await claim(pool, k))) return 'skipped';
  try {
    await send();
  } catch (err) {
    await release(pool, k);
    throw err;
  }
  return 'sent';
}

/** Whether a key was sent (or is being sent). */
export async function wasSent(pool: Pool, k: SentKey): Promise<boolean> {
  const { rowCount } = await pool.query(
    'SELECT 1 FROM notifications_sent WHERE website_id = $1 AND kind = $2 AND subject = $3 AND recipient = $4',
    params(k),
  );
  return rowCount === 1;
}
