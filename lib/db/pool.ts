// PostgreSQL access: one pool per process, and creation of the configured database when it does not exist.
import { Client, Pool, type PoolClient } from 'pg';

export type { Pool, PoolClient };

export function createPool(databaseUrl: string, max = 10, onIdleError?: (err: Error) => void): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle connection that the server ends (restart, failover, pg_terminate_backend) is dropped from the
  // pool; without a listener that error would crash the process.
  pool.on('error', (err) => onIdleError?.(err));
  return pool;
}

/** Creates the database named in the URL when it is missing; safe when several processes race to do it. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return;
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    } catch (err) {
      // 42P04 duplicate_database, 23505 unique_violation: another process created it first.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  } finally {
    await admin.end();
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Runs fn inside a transaction on one pooled client. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
