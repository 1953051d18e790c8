// Insights in PostgreSQL (sql/postgres/016_insights.sql): the nightly job's rows written by their stable key,
// and the endpoint's filtered, paginated read.
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../db/pool';
import type { Insight, InsightsData, InsightsQuery, InsightType, Severity } from './schemas';
import { finite } from './text';

/** An insight as a rule computes it, before it has an id. */
export interface InsightDraft {
  type: InsightType;
  /** The rule that produced it (docs/intelligence.md names each). */
  rule: string;
  /** What it is about: '' for the site, a page path, a source, a country code, a metric. */
  subject: string;
  /** The period it belongs to: the ISO week's Monday, the month (YYYY-MM), or the anomaly's id. */
  period: string;
  severity: Severity;
  title: string;
  description: string;
  metric_name: string;
  metric_value: number;
  metric_change: number | null;
  recommendation: string;
  details?: Record<string, unknown>;
}

export const insightKey = (d: Pick<InsightDraft, 'type' | 'rule' | 'subject' | 'period'>): string =>
  `${d.type}:${d.rule}:${d.subject}:${d.period}`;

const COLUMNS =
  'website_id, key, type, rule, severity, title, description, metric_name, metric_value, metric_change, recommendation, as_of, anomaly_id, details, created_at';

/**
 * Writes one insight by its key. A row already there is rewritten only by a run for the same or a later day
 * (re-running an older day never takes a week's insight back in time), and only when something changed.
 */
export async function upsertInsight(
  db: Pool | PoolClient,
  websiteId: string,
  d: InsightDraft,
  asOf: string,
  createdAt: Date,
  anomalyId: string | null = null,
): Promise<void> {
  await db.query(
    `INSERT INTO insights (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (website_id, key) DO UPDATE SET
       severity = EXCLUDED.severity, title = EXCLUDED.title, description = EXCLUDED.description,
       metric_name = EXCLUDED.metric_name, metric_value = EXCLUDED.metric_value,
       metric_change = EXCLUDED.metric_change, recommendation = EXCLUDED.recommendation, as_of = EXCLUDED.as_of,
       details = EXCLUDED.details, created_at = EXCLUDED.created_at
     WHERE insights.as_of <= EXCLUDED.as_of
       AND (insights.severity, insights.title, insights.description, insights.metric_value,
            insights.metric_change, insights.recommendation, insights.as_of, insights.details, insights.created_at)
           IS DISTINCT FROM
           (EXCLUDED.severity, EXCLUDED.title, EXCLUDED.description, EXCLUDED.metric_value,
            EXCLUDED.metric_change, EXCLUDED.recommendation, EXCLUDED.as_of, EXCLUDED.details, EXCLUDED.created_at)`,
    [
      websiteId,
      insightKey(d),
      d.type,
      d.rule,
      d.severity,
      d.title,
      d.description,
      d.metric_name,
      finite(d.metric_value),
      d.metric_change === null || !Number.isFinite(d.metric_change) ? null : d.metric_change,
      d.recommendation,
      asOf,
      anomalyId,
      JSON.stringify(d.details ?? {}),
      createdAt,
    ],
  );
}

/**
 * The nightly job's insights of one website for one day, in one transaction: each written by its key, and the
 * day's earlier rows that this run no longer finds removed, so a re-run leaves exactly what it computes.
 */
export async function writeDayInsights(
  pool: Pool,
  websiteId: string,
  asOf: string,
  createdAt: Date,
  drafts: readonly InsightDraft[],
): Promise<void> {
  await withTransaction(pool, async (client) => {
    for (const d of drafts) await upsertInsight(client, websiteId, d, asOf, createdAt);
    await client.query(
      `DELETE FROM insights WHERE website_id = $1 AND as_of = $2 AND anomaly_id IS NULL AND NOT (key = ANY($3))`,
      [websiteId, asOf, drafts.map(insightKey)],
    );
  });
}

interface InsightRow {
  id: string;
  type: InsightType;
  severity: Severity;
  title: string;
  description: string;
  metric_name: string;
  metric_value: number;
  metric_change: number | null;
  recommendation: string;
  created_at: Date;
}

const view = (r: InsightRow): Insight => ({
  id: r.id,
  type: r.type,
  severity: r.severity,
  title: r.title,
  description: r.description,
  metric_name: r.metric_name,
  metric_value: finite(r.metric_value),
  metric_change: r.metric_change === null || !Number.isFinite(r.metric_change) ? null : r.metric_change,
  recommendation: r.recommendation,
  created_at: r.created_at.toISOString(),
});

/** A website's insights created in [start, end), filtered, newest first (critical first within an instant). */
export async function listInsights(
  pool: Pool,
  websiteId: string,
  window: { start: number; end: number },
  q: Pick<InsightsQuery, 'type' | 'severity' | 'limit' | 'offset'>,
): Promise<InsightsData> {
  const where = `website_id = $1 AND created_at >= $2 AND created_at < $3
    AND ($4::text IS NULL OR type = $4) AND ($5::text IS NULL OR severity = $5)`;
  const args = [websiteId, new Date(window.start), new Date(window.end), q.type ?? null, q.severity ?? null];
  const [rows, total] = await Promise.all([
    pool.query<InsightRow>(
      `SELECT id, type, severity, title, description, metric_name, metric_value, metric_change, recommendation, created_at
       FROM insights WHERE ${where}
       ORDER BY created_at DESC, CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, key
       LIMIT $6 OFFSET $7`,
      [...args, q.limit, q.offset],
    ),
    pool.query<{ n: string }>(`SELECT count(*) AS n FROM insights WHERE ${where}`, args),
  ]);
  const n = Number(total.rows[0].n);
  return {
    insights: rows.rows.map(view),
    pagination: { total: n, limit: q.limit, offset: q.offset, has_more: q.offset + rows.rows.length < n },
  };
}
