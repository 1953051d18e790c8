// What a backup holds. PostgreSQL: every table of the schema (the migration bookkeeping aside), in an order
// where each table comes after the tables it references. ClickHouse: the tables written from outside
// (ingestion); everything else there is derived from them and is rebuilt after a restore.
import type { PoolClient } from 'pg';

/** ClickHouse tables whose rows only ingestion writes: these are backed up. */
export const CLICKHOUSE_SOURCE_TABLES = ['events', 'interactions', 'error_events', 'replay_chunks'] as const;

/**
 * ClickHouse tables computed from the source tables (materialized views' targets, rollups and their
 * bookkeeping) or holding nothing between inserts (the ingest entry table); a restore rebuilds them.
 */
export const CLICKHOUSE_DERIVED_TABLES = [
  'events_ingest',
  'sessions',
  'late_marks',
  'daily_rollups',
  'window_rollups',
  'daily_rollups_v2',
  'window_rollups_v2',
  'window_visits',
  'visit_values',
  'schema_migrations',
  'tidemark_instance',
] as const;

/** Not copied: the target's own migrations create and record the same schema. */
const POSTGRES_SKIPPED = new Set(['schema_migrations']);

export interface PostgresTable {
  name: string;
  columns: string[];
}

/** The public schema's tables, referenced ones first (self-references do not order anything). */
export async function postgresTables(client: PoolClient): Promise<PostgresTable[]> {
  const tables = (
    await client.query<{ name: string; columns: string[] }>(
      `SELECT c.relname AS name,
              array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
       WHERE c.relkind = 'r'
       GROUP BY c.relname
       ORDER BY c.relname`,
    )
  ).rows.filter((t) => !POSTGRES_SKIPPED.has(t.name));
  const references = (
    await client.query<{ child: string; parent: string }>(
      `SELECT DISTINCT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid <> c.confrelid`,
    )
  ).rows;
  const ordered: PostgresTable[] = [];
  const placed = new Set<string>();
  const byName = new Map(tables.map((t) => [t.name, t]));
  const visit = (name: string, path: Set<string>) => {
    if (placed.has(name) || !byName.has(name)) return;
    if (path.has(name)) throw new Error(`PostgreSQL tables reference each other in a cycle through ${name}`);
    path.add(name);
    for (const r of references) if (r.child === name) visit(r.parent, path);
    path.delete(name);
    placed.add(name);
    ordered.push(byName.get(name)!);
  };
  for (const t of tables) visit(t.name, new Set());
  return ordered;
}
