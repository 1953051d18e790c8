// Request and response schemas of a website's notification, revenue and domain settings (spec "Website
// settings"; docs/api.md describes the fields). Unknown fields are stripped, every string and array is capped.
import { PAYMENT_PROVIDERS } from '../ingest/accept/serverSchemas';
import { z } from '../zod';
import { domainName, email } from './schemas';
import { text } from './storable';
import { webhookUrlProblem } from './webhookUrl';

/** The spec's anomaly severities ("Anomaly"), least severe first. */
export const ANOMALY_SEVERITIES = ['info', 'warning', 'critical'] as const;
export const MAX_REPORT_RECIPIENTS = 20;
export const MAX_ALLOWED_DOMAINS = 100;
export const VERIFICATION_STATUSES = ['unverified', 'verified'] as const;

const isoTime = z.string().datetime();

/**
 * PUT /notifications: every field optional; given fields replace the stored ones, the others keep their value
 * (defaults on the first save). `slack_webhook_url: null` removes the webhook.
 */
export function notificationsBody(allowPrivateWebhooks: boolean) {
  return z.object({
    weekly_report: z.boolean().optional(),
    monthly_report: z.boolean().optional(),
    report_recipients: z
      .array(email)
      .max(MAX_REPORT_RECIPIENTS, `may hold at most ${MAX_REPORT_RECIPIENTS} addresses`)
      .transform((list) => [...new Set(list)])
      .optional(),
    anomaly_alerts: z.boolean().optional(),
    anomaly_min_severity: z.enum(ANOMALY_SEVERITIES).optional(),
    slack_webhook_url: text()
      .trim()
      .max(2048)
      .superRefine((value, ctx) => {
        const problem = webhookUrlProblem(value, allowPrivateWebhooks);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .nullable()
      .optional(),
  });
}
export type NotificationsBody = z.infer<ReturnType<typeof notificationsBody>>;

/** Stored preferences: the body's fields, all present. */
export const notificationPreferences = z.object({
  weekly_report: z.boolean(),
  monthly_report: z.boolean(),
  report_recipients: z.array(z.string()),
  anomaly_alerts: z.boolean(),
  anomaly_min_severity: z.enum(ANOMALY_SEVERITIES),
  slack_webhook_url: z.string().nullable(),
});
export type NotificationPreferences = z.infer<typeof notificationPreferences>;

/** What GET and PUT answer: the preferences with the webhook shown only as set or not, and its host. */
export const notificationsView = z.union([
  z.object({
    website_id: z.string(),
    weekly_report: z.boolean(),
    monthly_report: z.boolean(),
    report_recipients: z.array(z.string()),
    anomaly_alerts: z.boolean(),
    anomaly_min_severity: z.enum(ANOMALY_SEVERITIES),
    slack_webhook_set: z.boolean(),
    slack_webhook_host: z.string().nullable(),
    created_at: isoTime,
    updated_at: isoTime,
  }),
  z.object({ website_id: z.string() }).strict(),
]);
export type NotificationsView = z.infer<typeof notificationsView>;

// The runtime's ICU data: the ISO 4217 codes in use.
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export const revenueBody = z.object({
  revenue_provider: z.enum(PAYMENT_PROVIDERS).nullable().optional(),
  revenue_currency: text()
    .trim()
    .toUpperCase()
    .refine((c) => CURRENCIES.has(c), 'must be an ISO 4217 currency code such as USD or EUR')
    .optional(),
});
export type RevenueBody = z.infer<typeof revenueBody>;
export const revenueView = z.object({
  id: z.string(),
  revenue_provider: z.enum(PAYMENT_PROVIDERS).nullable(),
  revenue_currency: z.string(),
  updated_at: isoTime,
});
export type RevenueView = z.infer<typeof revenueView>;

export const domainsBody = z.object({
  domain: domainName.optional(),
  allowed_domains: z
    .array(domainName)
    .max(MAX_ALLOWED_DOMAINS, `may hold at most ${MAX_ALLOWED_DOMAINS} domains`)
    .transform((list) => [...new Set(list)])
    .optional(),
});
export type DomainsBody = z.infer<typeof domainsBody>;

export const domainsView = z.object({
  website_id: z.string(),
  primary_domain: z.string(),
  allowed_domains: z.array(z.string()),
  verification_status: z.enum(VERIFICATION_STATUSES),
  verified_at: isoTime.nullable(),
  updated_at: isoTime,
});
export type DomainsView = z.infer<typeof domainsView>;
