// What every notification sender shares: who receives a website's email (its recipients less the addresses
// that unsubscribed), the unsubscribe headers, and the settings the senders read.
import type { Pool } from 'pg';
import type { Config } from '../config';
import type { Logger } from '../log';
import { type Mailer, mailerFor } from './mailer';
import { unsubscribed, unsubscribeUrl } from './unsubscribe';

export type NotifySettings = Pick<
  Config,
  'SMTP_URL' | 'MAIL_FROM' | 'PUBLIC_URL' | 'JWT_SECRET' | 'WEBHOOK_ALLOW_PRIVATE'
>;

export interface NotifyContext {
  pool: Pool;
  logger: Logger;
  config?: NotifySettings;
}

/** What a run says about email when it cannot send any. */
export const EMAIL_OFF = 'off (SMTP_URL is not set)';

/** The settings of a job run; a context built without them is a wiring mistake, not a reason to skip quietly. */
export function notifySettings(ctx: NotifyContext): NotifySettings {
  if (!ctx.config) throw new Error('notifications need the configuration in the job context');
  return ctx.config;
}

export function mailer(ctx: NotifyContext): Mailer | undefined {
  return mailerFor(notifySettings(ctx), ctx.logger);
}

/** The recipients still subscribed, lower case, in their order. */
export async function subscribedRecipients(pool: Pool, websiteId: string, recipients: string[]): Promise<string[]> {
  const gone = await unsubscribed(pool, websiteId);
  return [...new Set(recipients.map((r) => r.toLowerCase()))].filter((r) => !gone.has(r));
}

/** An address's unsubscribe link and the headers that let mail clients offer it (RFC 2369, RFC 8058). */
export function unsubscribeFor(settings: NotifySettings, websiteId: string, email: string) {
  const link = unsubscribeUrl(settings.PUBLIC_URL, settings.JWT_SECRET, websiteId, email);
  return {
    link,
    headers: { 'List-Unsubscribe': `<${link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
