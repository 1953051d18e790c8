// Email through SMTP (SMTP_URL, MAIL_FROM; DESIGN §5). Without SMTP_URL email is off: nothing is attempted and
// that is logged once per process, not once per message.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config';
import type { Logger } from '../log';

export interface MailMessage {
  to: string;
  subject: string;
  html: string;
  text: string;
  headers?: Record<string, string>;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export type MailSettingsOf = Pick<Config, 'SMTP_URL' | 'MAIL_FROM' | 'PUBLIC_URL'>;
type MailSettings = MailSettingsOf;

/** Per attempt: a server that does not answer must not hold a job for minutes. */
const SMTP_TIMEOUT_MS = 20_000;

let toldOff = false;
const mailers = new WeakMap<MailSettings, Mailer>();

/** The From address: MAIL_FROM, else tidemark@ the public URL's host. */
export function mailFrom(settings: MailSettings): string {
  return settings.MAIL_FROM ?? `Tidemark <tidemark@${new URL(settings.PUBLIC_URL).hostname}>`;
}

/** The configuration's mailer (one transport per configuration), or undefined when SMTP_URL is unset. */
export function mailerFor(settings: MailSettings, logger: Logger): Mailer | undefined {
  if (!settings.SMTP_URL) {
    if (!toldOff) {
      toldOff = true;
      logger.info('email is off: SMTP_URL is not set (reports, alerts and invite links are not emailed)');
    }
    return undefined;
  }
  let mailer = mailers.get(settings);
  if (!mailer) {
    const transport: Transporter = nodemailer.createTransport({
      url: settings.SMTP_URL,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    });
    const from = mailFrom(settings);
    mailer = {
      async send(m) {
        await transport.sendMail({
          from,
          to: m.to,
          subject: m.subject,
          html: m.html,
          text: m.text,
          headers: m.headers,
        });
      },
    };
    mailers.set(settings, mailer);
  }
  return mailer;
}
