// The anomaly-alerts job (docs/notifications.md): every few minutes, for each website with alerts on, one
// message per open anomaly at or above its minimum severity to each recipient and its Slack webhook, and one
// more to each of them when that anomaly resolves. The sent log (lib/notifications/sentLog.ts) makes a re-run
// send nothing new.
import type { Pool } from 'pg';
import { ANOMALY_SEVERITIES } from '../lib/accounts/settingsSchemas';
import { notFound } from '../lib/errors';
import type { Logger } from '../lib/log';
import { type AnomalyFacts, anomalyAlert, anomalyResolved } from '../lib/notifications/anomalyMessages';
import {
  EMAIL_OFF,
  mailer,
  type NotifyContext,
  notifySettings,
  subscribedRecipients,
  unsubscribeFor,
} from '../lib/notifications/deliver';
import { type NotificationKind, sendOnce, wasSent } from '../lib/notifications/sentLog';
import { postToSlack } from '../lib/notifications/slack';
import type { JobScope } from './context';

/** Anomalies detected longer ago than this are not alerted any more (e.g. when alerts are switched on). */
export const ALERT_LOOKBACK_MS = 24 * 3600_000;

/** A resolution is told within this long of resolving (runs every few minutes: only missed runs need it). */
const RESOLUTION_LOOKBACK_MS = 7 * 24 * 3600_000;

export interface AnomalyAlertsRun {
  websites: number;
  alerts: number;
  resolutions: number;
  failed: number;
  email: string;
}

interface SiteRow {
  id: string;
  name: string;
  domain: string;
  report_recipients: string[];
  anomaly_min_severity: (typeof ANOMALY_SEVERITIES)[number];
  slack_webhook_url: string | null;
}

export async function anomalyAlerts(
  ctx: NotifyContext & { logger: Logger; pool: Pool },
  scope: JobScope,
  now = Date.now(),
): Promise<AnomalyAlertsRun> {
  const settings = notifySettings(ctx);
  const mail = mailer(ctx);
  const { rows: sites } = await ctx.pool.query<SiteRow>(
    `SELECT w.id, w.name, w.domain, n.report_recipients, n.anomaly_min_severity, n.slack_webhook_url
     FROM website_notifications n JOIN websites w ON w.id = n.website_id
     WHERE n.anomaly_alerts AND w.is_active AND ($1::uuid IS NULL OR w.id = $1)
     ORDER BY w.created_at, w.id`,
    [scope.websiteId ?? null],
  );
  if (scope.websiteId && sites.length === 0) {
    const { rowCount } = await ctx.pool.query('SELECT 1 FROM websites WHERE id = $1', [scope.websiteId]);
    if (!rowCount) throw notFound(`Website ${scope.websiteId} not found`);
  }
  const run: AnomalyAlertsRun = { websites: sites.length, alerts: 0, resolutions: 0, failed: 0, email: 'on' };
  if (!mail) run.email = EMAIL_OFF;

  for (const site of sites) {
    const minimum = ANOMALY_SEVERITIES.indexOf(site.anomaly_min_severity);
    const severities = ANOMALY_SEVERITIES.slice(minimum);
    const { rows: anomalies } = await ctx.pool.query<AnomalyFacts & { is_resolved: boolean }>(
      `SELECT a.id, a.metric_name, g.name AS goal_name, a.expected_value, a.actual_value, a.deviation_percentage,
              a.severity, a.started_at, a.resolved_at, a.is_resolved
       FROM anomalies a LEFT JOIN goals g ON g.id = a.goal_id
       WHERE a.website_id = $1 AND a.severity = ANY($2)
         AND ((NOT a.is_resolved AND a.detected_at >= $3) OR (a.is_resolved AND a.resolved_at >= $4))
       ORDER BY a.detected_at, a.id`,
      [site.id, severities, new Date(now - ALERT_LOOKBACK_MS), new Date(now - RESOLUTION_LOOKBACK_MS)],
    );
    const emails = mail ? await subscribedRecipients(ctx.pool, site.id, site.report_recipients) : [];
    const targets: { recipient: string; send: (m: ReturnType<typeof anomalyAlert>) => Promise<void> }[] = [
      ...emails.map((email) => ({
        recipient: email,
        send: async (m: ReturnType<typeof anomalyAlert>) => {
          await mail?.send({ to: email, ...m.mail, headers: unsubscribeFor(settings, site.id, email).headers });
        },
      })),
      ...(site.slack_webhook_url
        ? [
            {
              recipient: 'slack',
              send: (m: ReturnType<typeof anomalyAlert>) =>
                postToSlack(site.slack_webhook_url as string, m.slack, {
                  allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE,
                }),
            },
          ]
        : []),
    ];
    for (const anomaly of anomalies) {
      for (const target of targets) {
        const key = (kind: NotificationKind) => ({
          websiteId: site.id,
          kind,
          subject: anomaly.id,
          recipient: target.recipient,
        });
        const link =
          target.recipient === 'slack' ? undefined : unsubscribeFor(settings, site.id, target.recipient).link;
        try {
          if (!anomaly.is_resolved) {
            const sent = await sendOnce(ctx.pool, key('anomaly_alert'), () =>
              target.send(anomalyAlert(site, anomaly, settings.PUBLIC_URL, link)),
            );
            if (sent === 'sent') run.alerts++;
          } else if (await wasSent(ctx.pool, key('anomaly_alert'))) {
            // Only who was told of the anomaly is told that it ended.
            const sent = await sendOnce(ctx.pool, key('anomaly_resolved'), () =>
              target.send(anomalyResolved(site, anomaly, settings.PUBLIC_URL, link)),
            );
            if (sent === 'sent') run.resolutions++;
          }
        } catch (err) {
          run.failed++;
          ctx.logger.warn(
            {
              websiteId: site.id,
              anomalyId: anomaly.id,
              to: target.recipient === 'slack' ? 'slack' : 'email',
              err: (err as Error).message,
            },
            'anomaly notification failed',
          );
        }
      }
    }
  }
  // Failed messages were released: the queue's retry (and the next run) tries them again.
  if (run.failed) throw new Error(`anomaly-alerts: ${run.failed} message(s) failed (${JSON.stringify(run)})`);
  return run;
}
