// One migration runner for both stores (sql/postgres and sql/clickhouse, applied in file order).
// A PostgreSQL advisory lock serialises concurrent runners (several roles start at once); each applied
// file is recorded, so running again changes nothing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { ClickHouseClient, ClickHouseTarget } from '../clickhouse/client';
import type { Logger } from '../log';
import { SQL_ROOT } from '../paths';
import { claimStore, instanceId } from './instance';

const LOCK_KEY = 727_001; // any constant shared by every runner of this project

interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateDeps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  /** Where `clickhouse` points (clickHouseTarget); the database it names is created first. */
  clickhouseTarget: ClickHouseTarget;
  clickhouseCluster?: string;
  /** The variable that points at the store (STORE_PORT embedded, else CLICKHOUSE_URL), named when it is another instance's. */
  clickhouseSetting?: string;
  logger: Logger;
}

export interface MigrateResult {
  postgres: string[];
  clickhouse: string[];
}

export function readMigrations(kind: 'postgres' | 'clickhouse'): MigrationFile[] {
  const dir = path.join(SQL_ROOT, kind);
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return {
        version: Number(file.slice(0, 3)),
        name: file,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
}

export async function migrate(deps: MigrateDeps): Promise<MigrateResult> {
  const lockClient = await deps.pool.connect();
  try {
    await lockClient.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    const postgres = await migratePostgres(deps);
    await claimStore(await instanceId(deps.pool), {
      target: deps.clickhouseTarget,
      setting: deps.clickhouseSetting ?? 'CLICKHOUSE_URL',
      engine: renderClickHouseSql('{{ENGINE}}', deps.clickhouseCluster),
      onCluster: deps.clickhouseCluster ? ` ON CLUSTER ${deps.clickhouseCluster}` : '',
    });
    const clickhouse = await migrateClickHouse(deps);
    return { postgres, clickhouse };
  } finally {
    await lockClient.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    lockClient.release();
  }
}

async function migratePostgres({ pool, logger }: MigrateDeps): Promise<string[]> {
  await pool.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied = new Map(
    (
      await pool.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations')
    ).rows.map((r) => [r.version, r.checksum]),
  );
  const done: string[] = [];
  for (const m of readMigrations('postgres')) {
    const seen = applied.get(m.version);
    if (seen !== undefined) {
      if (seen !== m.checksum)
        logger.warn({ migration: m.name }, 'applied migration file has changed since; not re-run');
      continue;
    }
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new Error(`postgres migration ${m.name} failed: ${(err as Error).message}`);
    } finally {
      client.release();
    }
    logger.info({ migration: m.name }, 'postgres migration applied');
    done.push(m.name);
  }
  return done;
}

/** Fills the cluster placeholders: plain MergeTree embedded, Replicated + ON CLUSTER on a cluster. */
export function renderClickHouseSql(sql: string, cluster?: string): string {
  const onCluster = cluster ? `ON CLUSTER ${cluster}` : '';
  // {{ENGINE}} is a MergeTree; {{ENGINE:Aggregating}} (or Replacing, Summing) names another family member.
  const engine = (family: string) =>
    cluster
      ? `Replicated${family}MergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')`
      : `${family}MergeTree`;
  return sql
    .replace(/\{\{ON_CLUSTER\}\}/g, onCluster)
    .replace(/\{\{ENGINE(?::([A-Za-z]+))?\}\}/g, (_m, family: string | undefined) => engine(family ?? ''));
}

/** Splits a file into statements on `;` at line ends (our SQL files keep one statement per `;`). */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

async function migrateClickHouse({ clickhouse, clickhouseCluster, logger }: MigrateDeps): Promise<string[]> {
  const onCluster = clickhouseCluster ? ` ON CLUSTER ${clickhouseCluster}` : '';
  // claimStore (run first) created the database.
  await clickhouse.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations${onCluster} (
      version UInt32, name String, checksum String, applied_at DateTime DEFAULT now()
    ) ENGINE = ${clickhouseCluster ? renderClickHouseSql('{{ENGINE}}', clickhouseCluster) : 'MergeTree'} ORDER BY version`,
  });
  const rows = await (
    await clickhouse.query({ query: 'SELECT version, checksum FROM schema_migrations', format: 'JSONEachRow' })
  ).json<{ version: number; checksum: string }>();
  const applied = new Map(rows.map((r) => [Number(r.version), r.checksum]));
  const done: string[] = [];
  for (const m of readMigrations('clickhouse')) {
    const seen = applied.get(m.version);
    if (seen !== undefined) {
      if (seen !== m.checksum)
        logger.warn({ migration: m.name }, 'applied migration file has changed since; not re-run');
      continue;
    }
    // ClickHouse DDL is not transactional: statements are written to be idempotent (IF NOT EXISTS), so a
    // file interrupted halfway is simply run again from the top.
    for (const statement of splitStatements(renderClickHouseSql(m.sql, clickhouseCluster))) {
      try {
        await clickhouse.command({ query: statement });
      } catch (err) {
        throw new Error(`clickhouse migration ${m.name} failed: ${(err as Error).message}`);
      }
    }
    await clickhouse.insert({
      table: 'schema_migrations',
      values: [{ version: m.version, name: m.name, checksum: m.checksum }],
      format: 'JSONEachRow',
    });
    logger.info({ migration: m.name }, 'clickhouse migration applied');
    done.push(m.name);
  }
  return done;
}
