// Anomaly insights: one per anomaly (sql/postgres/015_anomalies.sql), in words with its numbers, written after
// each run of the hourly anomaly job and by the nightly insights job. An anomaly whose figures the hourly job
// has since changed (its severity, its actual value) gets its insight rewritten; the rest are left alone.
import type { Pool } from 'pg';
import { formatDate, localParts } from '../stats/time';
import { usableTimeZone } from '../stats/timeZones';
import type { Severity } from './schemas';
import { type InsightDraft, upsertInsight } from './store';
import { num, signedPct } from './text';

interface AnomalyRow {
  id: string;
  website_id: string;
  metric_name: string;
  goal_name: string | null;
  expected_value: number;
  actual_value: number;
  deviation_percentage: number;
  severity: Severity;
  started_at: Date;
  detected_at: Date;
  timezone: string;
  annotations: string[] | null;
}

const LABELS: Record<string, { name: string; unit?: string; digits?: number; count?: boolean }> = {
  visitors: { name: 'visitors', count: true },
  pageviews: { name: 'pageviews', count: true },
  bounce_rate: { name: 'bounce rate', unit: '%' },
  visit_duration: { name: 'visit duration', unit: ' s' },
  error_rate: { name: 'error rate', unit: ' errors per pageview', digits: 3 },
};

const ADVICE: Record<string, { up: string; down: string }> = {
  visitors: {
    up: 'Check Sources for the hour: a mention, a campaign or bot traffic. If it is real, make sure the landing pages convert.',
    down: 'Check that the site was up and the tracking script loaded on every page during that hour, then compare sources with the same hour last week.',
  },
  pageviews: {
    up: 'Check Pages and Sources for the hour: a popular page, a campaign, or a crawler that the bot filter missed.',
    down: 'Check that pages were served and the tracking script loaded during that hour.',
  },
  bounce_rate: {
    up: 'Look at the landing pages of that hour: a broken or slow page, or traffic from a new source, makes visitors leave at once.',
    down: 'Fewer visitors left at once than usual; find out what changed so you can keep it.',
  },
  visit_duration: {
    up: 'Visits lasted longer than usual; check whether visitors were engaged or stuck (errors, a confusing step).',
    down: 'Visits were much shorter than usual: check for errors or slow pages on the most visited pages of that hour.',
  },
  error_rate: {
    up: 'Open Errors and look at the groups seen during that hour; a release near that time is the first suspect.',
    down: 'Fewer errors than usual; if a fix shipped, mark its groups resolved.',
  },
  goal_conversions: {
    up: 'More conversions than usual: find the source or campaign behind them and do more of it.',
    down: 'Conversions dropped: check that the goal’s form, page or checkout still works and still sends its event.',
  },
};

/** The insight of one anomaly (pure: a test can build the row by hand). */
export function anomalyInsight(a: AnomalyRow): InsightDraft {
  const tz = usableTimeZone(a.timezone);
  const label = a.goal_name
    ? { name: `conversions of the goal ${a.goal_name}`, count: true }
    : (LABELS[a.metric_name] ?? { name: a.metric_name.replace(/_/g, ' ') });
  const fmt = (x: number) => `${num(x, label.digits ?? 1)}${label.unit ?? ''}`;
  const up = a.actual_value >= a.expected_value;
  const p = localParts(a.started_at.getTime(), tz);
  const when = `${formatDate(p)} ${String(p.hour).padStart(2, '0')}:00 (${tz})`;
  const title = `${label.name[0].toUpperCase()}${label.name.slice(1)} ${num(Math.abs(a.deviation_percentage))}% ${up ? 'above' : 'below'} normal`;
  const suspects = (a.annotations ?? []).filter(Boolean);
  const advice = ADVICE[a.goal_name ? 'goal_conversions' : a.metric_name] ?? {
    up: 'Look at what changed around that hour.',
    down: 'Look at what changed around that hour.',
  };
  return {
    type: 'anomaly',
    rule: a.metric_name,
    subject: a.goal_name ?? '',
    period: a.id,
    severity: a.severity,
    title,
    description: `In the hour from ${when} ${label.count ? `there were ${fmt(a.actual_value)} ${label.name}` : `the ${label.name} was ${fmt(a.actual_value)}`} against the ${fmt(a.expected_value)} expected from the same hour of previous weeks (${signedPct(up ? Math.abs(a.deviation_percentage) : -Math.abs(a.deviation_percentage))}).${suspects.length ? ` Changes noted within two hours of it: ${suspects.map((s) => `“${s}”`).join(', ')}.` : ''}`,
    metric_name: a.metric_name,
    metric_value: a.actual_value,
    metric_change: up ? Math.abs(a.deviation_percentage) : -Math.abs(a.deviation_percentage),
    recommendation: `${suspects.length ? 'Start with the annotated changes near that hour. ' : ''}${up ? advice.up : advice.down}`,
    details: { expected_value: a.expected_value, started_at: a.started_at.toISOString() },
  };
}

/**
 * Turns anomalies that have no insight yet (or whose severity or actual value changed since) into `anomaly`
 * insights, for one website or all. Returns how many insights were written. Safe to call any number of times.
 */
export async function insightsFromAnomalies(pool: Pool, websiteId?: string): Promise<number> {
  const { rows } = await pool.query<AnomalyRow>(
    `SELECT a.id, a.website_id, a.metric_name, g.name AS goal_name, a.expected_value, a.actual_value,
            a.deviation_percentage, a.severity, a.started_at, a.detected_at, w.timezone,
            (SELECT array_agg(n.message ORDER BY n.occurred_at, n.id) FROM annotations n
              WHERE n.id = ANY(a.suspect_annotation_ids)) AS annotations
     FROM anomalies a
     JOIN websites w ON w.id = a.website_id
     LEFT JOIN goals g ON g.id = a.goal_id
     LEFT JOIN insights i ON i.anomaly_id = a.id
     WHERE ($1::uuid IS NULL OR a.website_id = $1)
       AND (i.id IS NULL OR i.severity <> a.severity OR i.metric_value <> a.actual_value)
     ORDER BY a.detected_at, a.id`,
    [websiteId ?? null],
  );
  for (const a of rows) {
    const draft = anomalyInsight(a);
    await upsertInsight(
      pool,
      a.website_id,
      draft,
      formatDate(localParts(a.started_at.getTime(), usableTimeZone(a.timezone))),
      a.detected_at,
      a.id,
    );
  }
  return rows.length;
}
