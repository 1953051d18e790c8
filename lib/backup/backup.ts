// `tidemark backup`: a directory holding PostgreSQL's tables (binary COPY from one repeatable-read snapshot) and
// ClickHouse's source tables (TabSeparated, each read as one snapshot of its parts), gzip-compressed, with a
// manifest of row counts and schema versions. Safe while the service runs: events accepted during the backup
// may or may not be in it.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ClickHouseClient } from '../clickhouse/client';
import { selectRows } from '../clickhouse/client';
import { instanceId } from '../db/instance';
import { quoteIdent } from '../db/pool';
import { VERSION } from '../version';
import { z } from '../zod';
import { CLICKHOUSE_SOURCE_TABLES, postgresTables } from './tables';

export const MANIFEST = 'manifest.json';

export const manifestSchema = z.object({
  format: z.literal(1),
  tidemark_version: z.string(),
  created_at: z.string(),
  instance_id: z.string(),
  migrations: z.object({ postgres: z.array(z.number()), clickhouse: z.array(z.number()) }),
  postgres: z.array(z.object({ table: z.string(), columns: z.array(z.string()), rows: z.number(), file: z.string() })),
  clickhouse: z.array(
    z.object({ table: z.string(), columns: z.array(z.string()), rows: z.number(), file: z.string() }),
  ),
});
export type Manifest = z.infer<typeof manifestSchema>;

export type Progress = (line: string) => void;

/** ClickHouse identifiers of our own tables and columns are plain names; anything else is refused, not quoted. */
export function plainIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`unexpected identifier ${JSON.stringify(name)}`);
  return name;
}

export async function clickhouseMigrations(clickhouse: ClickHouseClient): Promise<number[]> {
  const rows = await selectRows<{ version: number }>(
    clickhouse,
    'SELECT DISTINCT version FROM schema_migrations ORDER BY version',
    {},
  );
  return rows.map((r) => Number(r.version));
}

export async function postgresMigrations(pool: Pool): Promise<number[]> {
  return (await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
    (r) => r.version,
  );
}

/** The columns of a ClickHouse table that take inserts (materialized and alias columns are computed). */
export async function insertableColumns(clickhouse: ClickHouseClient, table: string): Promise<string[]> {
  const rows = await selectRows<{ name: string }>(
    clickhouse,
    `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {table:String}
       AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL') ORDER BY position`,
    { table },
  );
  return rows.map((r) => r.name);
}

export async function backup(
  deps: { pool: Pool; clickhouse: ClickHouseClient },
  dir: string,
  progress: Progress,
): Promise<Manifest> {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0)
    throw new Error(`${dir} is not empty: back up into a new directory`);
  fs.mkdirSync(path.join(dir, 'postgres'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(dir, 'clickhouse'), { recursive: true, mode: 0o700 });
  const manifest: Manifest = {
    format: 1,
    tidemark_version: VERSION,
    created_at: new Date().toISOString(),
    instance_id: await instanceId(deps.pool),
    migrations: {
      postgres: await postgresMigrations(deps.pool),
      clickhouse: await clickhouseMigrations(deps.clickhouse),
    },
    postgres: [],
    clickhouse: [],
  };

  const client = await deps.pool.connect();
  try {
    // One snapshot for every table, taken without blocking writers.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    for (const table of await postgresTables(client)) {
      const file = path.join('postgres', `${table.name}.copy.gz`);
      const rows = Number(
        (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdent(table.name)}`)).rows[0].n,
      );
      const columns = table.columns.map(quoteIdent).join(', ');
      await pipeline(
        client.query(copyTo(`COPY ${quoteIdent(table.name)} (${columns}) TO STDOUT WITH (FORMAT binary)`)),
        createGzip(),
        fs.createWriteStream(path.join(dir, file), { mode: 0o600 }),
      );
      manifest.postgres.push({ table: table.name, columns: table.columns, rows, file });
      progress(`postgres ${table.name}: ${rows} rows`);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }

  for (const table of CLICKHOUSE_SOURCE_TABLES) {
    const columns = await insertableColumns(deps.clickhouse, table);
    const file = path.join('clickhouse', `${table}.tsv.gz`);
    // TabSeparated is lossless for every type and holds one row per line, so the rows written are counted as
    // they pass: the count and the file come from the one statement's snapshot of the table's parts.
    const result = await deps.clickhouse.exec({
      query: `SELECT ${columns.map(plainIdent).join(', ')} FROM ${plainIdent(table)} FORMAT TabSeparated`,
    });
    let rows = 0;
    await pipeline(
      result.stream,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
          yield chunk;
        }
      },
      createGzip(),
      fs.createWriteStream(path.join(dir, file), { mode: 0o600 }),
    );
    manifest.clickhouse.push({ table, columns, rows, file });
    progress(`clickhouse ${table}: ${rows} rows`);
  }
  fs.writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}
