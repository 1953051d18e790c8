// The anomalies table (sql/postgres/015_anomalies.sql): what an hour's verdict does to a metric's anomaly, and
// the reads of the External API and the chart. Every write is keyed by the hour it is about, so running an
// hour again changes nothing (idempotent), and timestamps come from the hours, never from the clock.
import type { Pool, PoolClient } from 'pg';
import type { Anomaly } from '../external/anomalySchemas';
import type { AnomalyMetric, Severity } from './detect';
import { HOUR_MS } from './measure';

export interface MetricKey {
  websiteId: string;
  metric: AnomalyMetric;
  /** Set for goal_conversions only. */
  goalId: string | null;
}

export interface AnomalyRow {
  id: string;
  website_id: string;
  metric_name: AnomalyMetric;
  goal_id: string | null;
  goal_name: string | null;
  expected_value: number;
  actual_value: number;
  deviation_percentage: number;
  severity: Severity;
  started_at: Date;
  last_seen_at: Date;
  detected_at: Date;
  is_resolved: boolean;
  resolved_at: Date | null;
  suspect_annotation_ids: string[];
}

const SAME_KEY = `website_id = $1 AND metric_name = $2 AND goal_id IS NOT DISTINCT FROM $3`;

/** The suspects of an anomaly: the website's annotations within ±2 h of its start (a subquery over bound parameters). */
const SUSPECTS = (websiteParam: string, startParam: string) =>
  `COALESCE((SELECT array_agg(a.id ORDER BY a.occurred_at, a.id) FROM annotations a
     WHERE a.website_id = ${websiteParam} AND a.occurred_at BETWEEN ${startParam}::timestamptz - interval '2 hours'
       AND ${startParam}::timestamptz + interval '2 hours'), '{}')`;

export interface OutsideHour {
  hour: number;
  expected: number;
  actual: number;
  deviation: number;
  severity: Severity;
}

/**
 * An hour outside the band: extends the anomaly that covers the hour (the latest figures, the worst severity)
 * or, when none does and none is open, opens one that starts there. Answers the id of an anomaly it opened.
 */
export async function recordOutside(db: Pool | PoolClient, key: MetricKey, h: OutsideHour): Promise<string | null> {
  const hour = new Date(h.hour);
  const args = [key.websiteId, key.metric, key.goalId, hour];
  const covering = await db.query<{ id: string; last_seen_at: Date }>(
    `SELECT id, last_seen_at FROM anomalies
     WHERE ${SAME_KEY} AND started_at <= $4 AND (resolved_at IS NULL OR resolved_at > $4)
     ORDER BY started_at DESC LIMIT 1`,
    args,
  );
  const found = covering.rows[0];
  if (found) {
    if (found.last_seen_at.getTime() >= h.hour) return null; // this hour (or a later one) is already counted
    await db.query(
      `UPDATE anomalies SET expected_value = $2, actual_value = $3, deviation_percentage = $4, last_seen_at = $5,
         severity = CASE WHEN array_position(ARRAY['info','warning','critical'], $6) > array_position(ARRAY['info','warning','critical'], severity)
                         THEN $6 ELSE severity END,
         suspect_annotation_ids = ${SUSPECTS('$7', 'started_at')}
       WHERE id = $1 AND website_id = $7`,
      [found.id, h.expected, h.actual, h.deviation, hour, h.severity, key.websiteId],
    );
    return null;
  }
  // Detected when the hour it started in had ended: re-running the hour gives the same row.
  const opened = await db.query<{ id: string }>(
    `INSERT INTO anomalies (website_id, metric_name, goal_id, expected_value, actual_value, deviation_percentage,
       severity, started_at, last_seen_at, detected_at, suspect_annotation_ids)
     VALUES ($1, $2, $3, $5, $6, $7, $8, $4, $4, $9, ${SUSPECTS('$1', '$4')})
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [...args, h.expected, h.actual, h.deviation, h.severity, new Date(h.hour + HOUR_MS)],
  );
  return opened.rows[0]?.id ?? null;
}

/**
 * A full hour back inside the band: resolves the open anomaly last seen before it, at the hour's end. An
 * anomaly seen in this hour or later (a re-run of an earlier day) is left open.
 */
export async function recordInside(db: Pool | PoolClient, key: MetricKey, hour: number): Promise<void> {
  await db.query(
    `UPDATE anomalies SET is_resolved = true, resolved_at = $5
     WHERE ${SAME_KEY} AND NOT is_resolved AND last_seen_at < $4`,
    [key.websiteId, key.metric, key.goalId, new Date(hour), new Date(hour + HOUR_MS)],
  );
}

const COLUMNS = `an.id, an.website_id, an.metric_name, an.goal_id, g.name AS goal_name, an.expected_value,
  an.actual_value, an.deviation_percentage, an.severity, an.started_at, an.last_seen_at, an.detected_at,
  an.is_resolved, an.resolved_at, an.suspect_annotation_ids`;

interface SuspectRow {
  id: string;
  type: string;
  message: string;
  occurred_at: Date;
}

/** The API record of rows, with their suspect annotations (an annotation deleted since drops out). */
async function views(pool: Pool, rows: AnomalyRow[]): Promise<Anomaly[]> {
  const ids = [...new Set(rows.flatMap((r) => r.suspect_annotation_ids))];
  const found = ids.length
    ? (
        await pool.query<SuspectRow>(
          'SELECT id, type, message, occurred_at FROM annotations WHERE id = ANY($1::uuid[])',
          [ids],
        )
      ).rows
    : [];
  const byId = new Map(found.map((a) => [a.id, a]));
  return rows.map((r) => ({
    id: r.id,
    metric_name: r.metric_name,
    goal: r.goal_id ? { id: r.goal_id, name: r.goal_name ?? '' } : null,
    expected_value: r.expected_value,
    actual_value: r.actual_value,
    deviation_percentage: r.deviation_percentage,
    direction: r.actual_value >= r.expected_value ? 'spike' : 'drop',
    severity: r.severity,
    started_at: r.started_at.toISOString(),
    last_seen_at: r.last_seen_at.toISOString(),
    detected_at: r.detected_at.toISOString(),
    is_resolved: r.is_resolved,
    resolved_at: r.resolved_at?.toISOString() ?? null,
    suspect_annotations: r.suspect_annotation_ids.flatMap((id) => {
      const a = byId.get(id);
      return a ? [{ id: a.id, type: a.type, message: a.message, occurred_at: a.occurred_at.toISOString() }] : [];
    }),
  }));
}

export interface AnomalyFilter {
  /** [start, end): anomalies whose hours overlap it. */
  start: number;
  end: number;
  severity?: Severity;
  metric?: AnomalyMetric;
  resolved?: boolean;
}

// An anomaly spans [started_at, last_seen_at + 1 h).
const OVERLAPS = `an.website_id = $1 AND an.started_at < $3 AND an.last_seen_at + interval '1 hour' > $2`;

/** A website's anomalies overlapping the filter's window, newest first (ties by id), and how many match. */
export async function listAnomalies(
  pool: Pool,
  websiteId: string,
  f: AnomalyFilter,
  page: { limit: number; offset: number },
): Promise<{ anomalies: Anomaly[]; total: number }> {
  const where = `${OVERLAPS} AND ($4::text IS NULL OR an.severity = $4) AND ($5::text IS NULL OR an.metric_name = $5)
    AND ($6::boolean IS NULL OR an.is_resolved = $6)`;
  const args = [
    websiteId,
    new Date(f.start),
    new Date(f.end),
    f.severity ?? null,
    f.metric ?? null,
    f.resolved ?? null,
  ];
  const [rows, total] = await Promise.all([
    pool.query<AnomalyRow>(
      `SELECT ${COLUMNS} FROM anomalies an LEFT JOIN goals g ON g.id = an.goal_id
       WHERE ${where} ORDER BY an.started_at DESC, an.id LIMIT $7 OFFSET $8`,
      [...args, page.limit, page.offset],
    ),
    pool.query<{ n: string }>(`SELECT count(*) AS n FROM anomalies an WHERE ${where}`, args),
  ]);
  return { anomalies: await views(pool, rows.rows), total: Number(total.rows[0].n) };
}

/** At most this many anomalies come with a chart's timeseries. */
const CHART_ANOMALIES = 200;

/** The anomalies a chart of [start, end) marks: every one overlapping it, oldest first. */
export async function chartAnomalies(pool: Pool, websiteId: string, start: number, end: number): Promise<Anomaly[]> {
  const { rows } = await pool.query<AnomalyRow>(
    `SELECT ${COLUMNS} FROM anomalies an LEFT JOIN goals g ON g.id = an.goal_id
     WHERE ${OVERLAPS} ORDER BY an.started_at, an.id LIMIT ${CHART_ANOMALIES}`,
    [websiteId, new Date(start), new Date(end)],
  );
  return views(pool, rows);
}
