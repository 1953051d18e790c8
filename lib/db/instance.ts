// One store per instance: PostgreSQL's `instance` row is the instance's id, and each ClickHouse database it
// writes is claimed with that id before anything else is created in it. A database claimed by another
// instance stops the start with one line naming the setting that points at it.
import type { Pool } from 'pg';
import { type ClickHouseTarget, createClickHouse, selectRows } from '../clickhouse/client';
import { maskUrlPassword } from '../config';
import { StartupError } from '../process/startup';

export async function instanceId(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM instance');
  if (!rows[0]) throw new Error('the instance table is empty: run the PostgreSQL migrations first');
  return rows[0].id;
}

export interface StoreClaim {
  target: ClickHouseTarget;
  cluster?: string;
  /** STORE_PORT for the embedded store, else CLICKHOUSE_URL: what the operator changes when the claim clashes. */
  setting: string;
  /** The table's engine clause (plain or replicated MergeTree, rendered by the migration runner). */
  engine: string;
  onCluster: string;
}

/** Creates the database when missing and claims it for `id`; refuses a database another instance claimed. */
export async function claimStore(id: string, claim: StoreClaim): Promise<void> {
  const { target, setting } = claim;
  const database = target.database;
  const bootstrap = createClickHouse({ ...target, database: 'default' });
  try {
    const marked = await selectRows<{ n: string }>(
      bootstrap,
      "SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'tidemark_instance'",
      { db: database },
    );
    if (Number(marked[0]?.n ?? 0) > 0) {
      const owners = await selectRows<{ id: string }>(
        bootstrap,
        `SELECT DISTINCT toString(id) AS id FROM ${database}.tidemark_instance`,
        {},
      );
      const other = owners.find((o) => o.id !== id);
      if (other) {
        throw new StartupError(
          setting,
          `${setting}: ClickHouse database "${database}" at ${maskUrlPassword(target.url)} belongs to another Tidemark instance (${other.id}), ` +
            `not to the one DATABASE_URL holds (${id}); give each instance its own store (STORE_PORT and DATA_DIR, or CLICKHOUSE_URL) or its own CLICKHOUSE_DATABASE`,
        );
      }
      if (owners.length > 0) return;
    }
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${claim.onCluster}` });
    await bootstrap.command({
      query: `CREATE TABLE IF NOT EXISTS ${database}.tidemark_instance${claim.onCluster} (id UUID, claimed_at DateTime DEFAULT now()) ENGINE = ${claim.engine} ORDER BY id`,
    });
    await bootstrap.insert({ table: `${database}.tidemark_instance`, values: [{ id }], format: 'JSONEachRow' });
  } finally {
    await bootstrap.close();
  }
}
