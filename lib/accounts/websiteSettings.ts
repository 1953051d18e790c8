// A website's notification preferences, revenue settings and domains (spec "Website settings"), and the mark
// browser ingestion leaves when the tracker is first seen on the website's own domains.
import type { Pool } from 'pg';
import { withTransaction } from '../db/pool';
import { badRequest, notFound } from '../errors';
import type {
  DomainsBody,
  DomainsView,
  NotificationPreferences,
  NotificationsBody,
  NotificationsView,
  RevenueBody,
  RevenueView,
} from './settingsSchemas';

interface NotificationsRow extends NotificationPreferences {
  website_id: string;
  created_at: Date;
  updated_at: Date;
}

const NOTIFICATION_COLUMNS = `website_id, weekly_report, monthly_report, report_recipients, anomaly_alerts,
  anomaly_min_severity, slack_webhook_url, created_at, updated_at`;

export async function getNotifications(pool: Pool, websiteId: string): Promise<NotificationsRow | undefined> {
  const { rows } = await pool.query<NotificationsRow>(
    `SELECT ${NOTIFICATION_COLUMNS} FROM website_notifications WHERE website_id = $1`,
    [websiteId],
  );
  return rows[0];
}

/** Why merged preferences could never be delivered, if they could not. */
function undeliverable(p: NotificationPreferences): string | undefined {
  const reports = p.weekly_report || p.monthly_report;
  if (reports && p.report_recipients.length === 0) {
    return 'report_recipients: at least one address is needed while weekly_report or monthly_report is on';
  }
  if (p.anomaly_alerts && p.report_recipients.length === 0 && p.slack_webhook_url === null) {
    return 'anomaly_alerts: needs report_recipients or slack_webhook_url to send alerts to';
  }
  return undefined;
}

/**
 * Upsert with merge: the first save starts from the defaults (everything off, minimum severity `warning`),
 * later ones change only the fields given. The row is locked while merging, so concurrent saves of different
 * fields both land.
 */
export async function saveNotifications(
  pool: Pool,
  websiteId: string,
  changes: NotificationsBody,
): Promise<NotificationsRow> {
  return withTransaction(pool, async (client) => {
    await client.query('INSERT INTO website_notifications (website_id) VALUES ($1) ON CONFLICT DO NOTHING', [
      websiteId,
    ]);
    const { rows } = await client.query<NotificationsRow>(
      `SELECT ${NOTIFICATION_COLUMNS} FROM website_notifications WHERE website_id = $1 FOR UPDATE`,
      [websiteId],
    );
    const current = rows[0];
    const merged: NotificationPreferences = {
      weekly_report: changes.weekly_report ?? current.weekly_report,
      monthly_report: changes.monthly_report ?? current.monthly_report,
      report_recipients: changes.report_recipients ?? current.report_recipients,
      anomaly_alerts: changes.anomaly_alerts ?? current.anomaly_alerts,
      anomaly_min_severity: changes.anomaly_min_severity ?? current.anomaly_min_severity,
      slack_webhook_url:
        changes.slack_webhook_url !== undefined ? changes.slack_webhook_url : current.slack_webhook_url,
    };
    const problem = undeliverable(merged);
    if (problem) throw badRequest(problem);
    const saved = await client.query<NotificationsRow>(
      `UPDATE website_notifications SET weekly_report = $2, monthly_report = $3, report_recipients = $4,
         anomaly_alerts = $5, anomaly_min_severity = $6, slack_webhook_url = $7, updated_at = now()
       WHERE website_id = $1 RETURNING ${NOTIFICATION_COLUMNS}`,
      [
        websiteId,
        merged.weekly_report,
        merged.monthly_report,
        merged.report_recipients,
        merged.anomaly_alerts,
        merged.anomaly_min_severity,
        merged.slack_webhook_url,
      ],
    );
    return saved.rows[0];
  });
}

/** The webhook is a bearer secret: readers learn whether one is set and where it goes, never the URL itself. */
export function notificationsView(websiteId: string, row: NotificationsRow | undefined): NotificationsView {
  if (!row) return { website_id: websiteId };
  let host: string | null = null;
  if (row.slack_webhook_url) {
    try {
      host = new URL(row.slack_webhook_url).hostname;
    } catch {
      host = null; // stored before validation could only be this strict; shown as set, host unknown
    }
  }
  return {
    website_id: row.website_id,
    weekly_report: row.weekly_report,
    monthly_report: row.monthly_report,
    report_recipients: row.report_recipients,
    anomaly_alerts: row.anomaly_alerts,
    anomaly_min_severity: row.anomaly_min_severity,
    slack_webhook_set: row.slack_webhook_url !== null,
    slack_webhook_host: host,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Sets the given revenue fields; `updated_at` moves even when none is given (a PUT is a save). */
export async function updateRevenue(pool: Pool, websiteId: string, body: RevenueBody): Promise<RevenueView> {
  const { rows } = await pool.query<{
    id: string;
    revenue_provider: RevenueView['revenue_provider'];
    revenue_currency: string;
    updated_at: Date;
  }>(
    `UPDATE websites SET
       revenue_provider = CASE WHEN $2 THEN $3 ELSE revenue_provider END,
       revenue_currency = COALESCE($4, revenue_currency),
       updated_at = now()
     WHERE id = $1 RETURNING id, revenue_provider, revenue_currency, updated_at`,
    [websiteId, body.revenue_provider !== undefined, body.revenue_provider ?? null, body.revenue_currency ?? null],
  );
  if (!rows[0]) throw notFound('Website not found');
  return { ...rows[0], updated_at: rows[0].updated_at.toISOString() };
}

interface DomainsRow {
  id: string;
  domain: string;
  allowed_domains: string[];
  verification_status: DomainsView['verification_status'];
  verified_at: Date | null;
  updated_at: Date;
}
const DOMAIN_COLUMNS = 'id, domain, allowed_domains, verification_status, verified_at, updated_at';

function domainsView(row: DomainsRow | undefined): DomainsView {
  if (!row) throw notFound('Website not found');
  return {
    website_id: row.id,
    primary_domain: row.domain,
    allowed_domains: row.allowed_domains,
    verification_status: row.verification_status,
    verified_at: row.verified_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  };
}

export async function getDomains(pool: Pool, websiteId: string): Promise<DomainsView> {
  const { rows } = await pool.query<DomainsRow>(`SELECT ${DOMAIN_COLUMNS} FROM websites WHERE id = $1`, [websiteId]);
  return domainsView(rows[0]);
}

/** A new primary domain resets verification (a trigger of migration 009 does it for every route). */
export async function updateDomains(pool: Pool, websiteId: string, body: DomainsBody): Promise<DomainsView> {
  const { rows } = await pool.query<DomainsRow>(
    `UPDATE websites SET domain = COALESCE($2, domain), allowed_domains = COALESCE($3, allowed_domains),
       updated_at = now()
     WHERE id = $1 RETURNING ${DOMAIN_COLUMNS}`,
    [websiteId, body.domain ?? null, body.allowed_domains ?? null],
  );
  return domainsView(rows[0]);
}

/**
 * Marks the website verified, once: a no-op when it already is, or when its domains changed since the caller
 * read them (an event seen under the old domains does not verify the new ones).
 */
export async function markVerified(
  pool: Pool,
  website: { id: string; domain: string; allowed_domains: readonly string[] },
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE websites SET verification_status = 'verified', verified_at = now()
     WHERE id = $1 AND verified_at IS NULL AND domain = $2 AND allowed_domains = $3::text[]`,
    [website.id, website.domain, website.allowed_domains],
  );
  return rowCount === 1;
}
