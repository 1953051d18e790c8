// The email carrying an invite link (DESIGN §5: invites are emailed when SMTP is configured). The invite itself
// never depends on it: the web role sends after answering, the CLI after printing the link, and a failure is
// logged, not returned as an error.
import type { InviteView } from '../accounts/responses';
import type { Logger } from '../log';
import { escapeHtml } from '../public/html';
import { type MailSettingsOf, mailerFor } from './mailer';

export type InviteEmailOutcome = { status: 'sent' } | { status: 'off' } | { status: 'failed'; reason: string };

/** Never throws: the outcome says whether the email went, and why not. */
export async function sendInviteEmail(
  settings: MailSettingsOf,
  logger: Logger,
  invite: Pick<InviteView, 'email' | 'role' | 'expires_at' | 'team'>,
  url: string,
): Promise<InviteEmailOutcome> {
  const subject = `You are invited to join ${invite.team.name} on Tidemark`;
  const until = invite.expires_at.slice(0, 10);
  const line = `You have been invited to join the team ${invite.team.name} on Tidemark as ${invite.role}.`;
  const how = `Open this link to accept, signing in or creating your account on the way (valid until ${until}; it works once):`;
  try {
    const mail = mailerFor(settings, logger);
    if (!mail) return { status: 'off' };
    await mail.send({
      to: invite.email,
      subject,
      text: `${line}\n\n${how}\n${url}\n\nIf you did not expect this, ignore this email.\n`,
      html: `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>
<p>${escapeHtml(line)}</p><p>${escapeHtml(how)}</p><p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>
<p>If you did not expect this, ignore this email.</p></body></html>`,
    });
    return { status: 'sent' };
  } catch (err) {
    const reason = (err as Error).message;
    // Never the URL: it holds the token.
    logger.warn({ err: reason }, 'invite email failed');
    return { status: 'failed', reason };
  }
}
