// The words of an anomaly alert and of its resolution, for email (HTML + text) and for a Slack-compatible
// webhook. Numbers are the anomaly row's own (lib/anomalies), rounded for reading.
import { escapeHtml } from '../public/html';
import type { RenderedMail } from './report';
import type { SlackMessage } from './slack';

export interface AnomalyFacts {
  id: string;
  metric_name: string;
  goal_name: string | null;
  expected_value: number;
  actual_value: number;
  deviation_percentage: number;
  severity: 'info' | 'warning' | 'critical';
  started_at: Date;
  resolved_at: Date | null;
}

const METRIC_NAMES: Record<string, string> = {
  visitors: 'Visitors',
  pageviews: 'Pageviews',
  bounce_rate: 'Bounce rate',
  visit_duration: 'Visit duration',
  error_rate: 'Error rate',
  goal_conversions: 'Goal conversions',
};

function metricLabel(a: AnomalyFacts): string {
  const name = METRIC_NAMES[a.metric_name] ?? a.metric_name;
  return a.goal_name ? `${name} (${a.goal_name})` : name;
}

const number = (v: number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 }).format(v);
const utcHour = (d: Date) => `${d.toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;

function deviation(a: AnomalyFacts): string {
  const pct = Math.round(Math.abs(a.deviation_percentage));
  return `${pct}% ${a.actual_value >= a.expected_value ? 'above' : 'below'} expected`;
}

export interface AnomalyMessage {
  mail: RenderedMail;
  slack: SlackMessage;
}

interface Site {
  id: string;
  name: string;
  domain: string;
}

function message(
  site: Site,
  dashboard: string,
  headline: string,
  lines: string[],
  unsubscribe: string | undefined,
): AnomalyMessage {
  const text = [
    headline,
    '',
    ...lines,
    '',
    `Dashboard: ${dashboard}`,
    ...(unsubscribe ? ['', `Stop these emails: ${unsubscribe}`] : []),
  ].join('\n');
  const footer = unsubscribe
    ? `<a href="${escapeHtml(unsubscribe)}">Unsubscribe</a> from ${escapeHtml(site.name)}'s alerts and reports.`
    : '';
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(headline)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#1f2933">
<h1 style="font-size:18px">${escapeHtml(headline)}</h1>
${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n')}
<p><a href="${escapeHtml(dashboard)}">Open the dashboard of ${escapeHtml(site.name)}</a></p>
${footer ? `<p style="font-size:12px;color:#52606d">${footer}</p>` : ''}
</body></html>`;
  const slackText = `*${headline}*\n${lines.join('\n')}\n<${dashboard}|Open the dashboard>`;
  return {
    mail: { subject: headline, html, text: `${text}\n` },
    slack: {
      text: `${headline}\n${lines.join('\n')}`,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: slackText } }],
    },
  };
}

/** `unsubscribe` (already a link) goes under the email only; the Slack message has none. */
export function anomalyAlert(site: Site, a: AnomalyFacts, publicUrl: string, unsubscribe?: string): AnomalyMessage {
  const severity = a.severity[0].toUpperCase() + a.severity.slice(1);
  const headline = `${severity} anomaly on ${site.domain}: ${metricLabel(a)} ${deviation(a)}`;
  return message(
    site,
    dashboardUrl(publicUrl, site.id),
    headline,
    [
      `${metricLabel(a)} was ${number(a.actual_value)} in the hour from ${utcHour(a.started_at)}, against about ${number(a.expected_value)} expected (${deviation(a)}).`,
      `Severity: ${a.severity}. You will get one more message when it is back to normal.`,
    ],
    unsubscribe,
  );
}

export function anomalyResolved(site: Site, a: AnomalyFacts, publicUrl: string, unsubscribe?: string): AnomalyMessage {
  const headline = `Resolved on ${site.domain}: ${metricLabel(a)} is back to normal`;
  return message(
    site,
    dashboardUrl(publicUrl, site.id),
    headline,
    [
      `${metricLabel(a)} has been back within its expected range since ${a.resolved_at ? utcHour(a.resolved_at) : 'the last hour'}.`,
      `The anomaly began in the hour from ${utcHour(a.started_at)} (${number(a.actual_value)} against about ${number(a.expected_value)} expected).`,
    ],
    unsubscribe,
  );
}

export const dashboardUrl = (publicUrl: string, websiteId: string) => new URL(`/sites/${websiteId}`, publicUrl).href;
