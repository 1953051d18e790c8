// The email-reports job (docs/notifications.md): on a website's local Monday the weekly report of the week that
// ended, on its local 1st the monthly report of the month that ended, to each subscribed recipient. It runs
// hourly so that each time zone gets its report early in its day; the sent log makes every later run of that
// day (and any re-run with scope.date) send nothing new.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { notFound } from '../lib/errors';
import {
  EMAIL_OFF,
  mailer,
  type NotifyContext,
  notifySettings,
  subscribedRecipients,
  unsubscribeFor,
} from '../lib/notifications/deliver';
import { buildReport, periodKey, type ReportKind, renderReport, reportPeriod } from '../lib/notifications/report';
import { sendOnce } from '../lib/notifications/sentLog';
import { type LocalDate, today } from '../lib/stats/time';
import { usableTimeZone } from '../lib/stats/timeZones';
import type { JobScope } from './context';
import { scopeDay } from './scope';

export interface EmailReportsRun {
  websites: number;
  reports: number;
  sent: number;
  failed: number;
  email: string;
}

interface SiteRow {
  id: string;
  name: string;
  domain: string;
  timezone: string;
  weekly_report: boolean;
  monthly_report: boolean;
  report_recipients: string[];
}

export async function emailReports(
  ctx: NotifyContext & { pool: Pool; clickhouse: ClickHouseClient },
  scope: JobScope,
  now = Date.now(),
): Promise<EmailReportsRun> {
  const requested = scopeDay(scope);
  const settings = notifySettings(ctx);
  const mail = mailer(ctx);
  const run: EmailReportsRun = { websites: 0, reports: 0, sent: 0, failed: 0, email: 'on' };
  if (!mail) {
    // Nothing is read or attempted: with email off a report has nowhere to go.
    run.email = EMAIL_OFF;
    return run;
  }
  const { rows: sites } = await ctx.pool.query<SiteRow>(
    `SELECT w.id, w.name, w.domain, w.timezone, n.weekly_report, n.monthly_report, n.report_recipients
     FROM website_notifications n JOIN websites w ON w.id = n.website_id
     WHERE (n.weekly_report OR n.monthly_report) AND w.is_active AND ($1::uuid IS NULL OR w.id = $1)
     ORDER BY w.created_at, w.id`,
    [scope.websiteId ?? null],
  );
  if (scope.websiteId && sites.length === 0) {
    const { rowCount } = await ctx.pool.query('SELECT 1 FROM websites WHERE id = $1', [scope.websiteId]);
    if (!rowCount) throw notFound(`Website ${scope.websiteId} not found`);
  }
  run.websites = sites.length;
  for (const site of sites) {
    const timezone = usableTimeZone(site.timezone);
    const day: LocalDate = requested ?? today(timezone, now);
    const kinds: ReportKind[] = [];
    if (site.weekly_report) kinds.push('weekly');
    if (site.monthly_report) kinds.push('monthly');
    for (const kind of kinds) {
      const period = reportPeriod(kind, day);
      if (!period) continue;
      const recipients = await subscribedRecipients(ctx.pool, site.id, site.report_recipients);
      if (recipients.length === 0) continue;
      try {
        // Read once, sent to each recipient with their own unsubscribe link.
        const report = await buildReport(ctx.pool, ctx.clickhouse, { ...site, timezone }, kind, period);
        run.reports++;
        for (const to of recipients) {
          const unsubscribe = unsubscribeFor(settings, site.id, to);
          try {
            const sent = await sendOnce(
              ctx.pool,
              { websiteId: site.id, kind: `${kind}_report`, subject: periodKey(period), recipient: to },
              () => mail.send({ to, ...renderReport(report, unsubscribe.link), headers: unsubscribe.headers }),
            );
            if (sent === 'sent') run.sent++;
          } catch (err) {
            run.failed++;
            ctx.logger.warn({ websiteId: site.id, kind, err: (err as Error).message }, 'report email failed');
          }
        }
      } catch (err) {
        run.failed++;
        ctx.logger.error({ websiteId: site.id, kind, err: (err as Error).message }, 'report could not be built');
      }
    }
  }
  if (run.failed) throw new Error(`email-reports: ${run.failed} failure(s) (${JSON.stringify(run)})`);
  return run;
}
