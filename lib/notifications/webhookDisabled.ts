// Telling a website's owner and admins that one of its webhooks was disabled after a run of failed deliveries
// (issue 26 §3). The webhook delivery worker calls this once it disables the webhook; at most one email per
// (webhook, day) reaches each person.
import { createHash } from 'node:crypto';
import { escapeHtml } from '../public/html';
import { dashboardUrl } from './anomalyMessages';
import { mailer, type NotifyContext, notifySettings } from './deliver';
import { sendOnce } from './sentLog';

export interface WebhookDisabledRun {
  sent: number;
  failed: number;
  email: 'on' | 'off';
}

/** Emails the owners and admins of the website's team; never throws for a failed send (logged and counted). */
export async function notifyWebhookDisabled(
  ctx: NotifyContext,
  websiteId: string,
  webhookUrl: string,
  reason: string,
  now = Date.now(),
): Promise<WebhookDisabledRun> {
  const settings = notifySettings(ctx);
  const mail = mailer(ctx);
  if (!mail) return { sent: 0, failed: 0, email: 'off' };
  const { rows } = await ctx.pool.query<{ email: string; name: string; domain: string }>(
    `SELECT lower(u.email) AS email, w.name, w.domain
     FROM websites w
     JOIN team_members m ON m.team_id = w.team_id AND m.deactivated_at IS NULL AND m.role IN ('owner', 'admin')
     JOIN users u ON u.id = m.user_id
     WHERE w.id = $1 ORDER BY u.email`,
    [websiteId],
  );
  // The URL is a secret (it may carry a token): the message names only its host.
  let host = 'an unknown host';
  try {
    host = new URL(webhookUrl).host;
  } catch {
    // keep the placeholder
  }
  const webhook = createHash('sha256').update(webhookUrl).digest('hex').slice(0, 16);
  const day = new Date(now).toISOString().slice(0, 10);
  const run: WebhookDisabledRun = { sent: 0, failed: 0, email: 'on' };
  for (const r of rows) {
    const subject = `A webhook of ${r.domain} was disabled`;
    const settingsLink = new URL('settings', `${dashboardUrl(settings.PUBLIC_URL, websiteId)}/`).href;
    const lines = [
      `Tidemark stopped delivering to the webhook at ${host} for ${r.name} (${r.domain}): ${reason}`,
      'Events are no longer sent to it. Fix the receiver, then turn the webhook back on in the website settings.',
    ];
    try {
      const sent = await sendOnce(
        ctx.pool,
        { websiteId, kind: 'webhook_disabled', subject: `${webhook}@${day}`, recipient: r.email },
        () =>
          mail.send({
            to: r.email,
            subject,
            text: `${lines.join('\n\n')}\n\nSettings: ${settingsLink}\n`,
            html: `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>${lines
              .map((l) => `<p>${escapeHtml(l)}</p>`)
              .join('')}<p><a href="${escapeHtml(settingsLink)}">Website settings</a></p></body></html>`,
          }),
      );
      if (sent === 'sent') run.sent++;
    } catch (err) {
      run.failed++;
      ctx.logger.warn({ websiteId, err: (err as Error).message }, 'webhook-disabled email failed');
    }
  }
  return run;
}
