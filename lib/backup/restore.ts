// `tidemark restore`: a backup (backup.ts) onto an empty instance of the same schema version. PostgreSQL's
// tables are copied in one transaction (the instance takes the backup's identity); ClickHouse's source tables
// are inserted and everything derived from them is rebuilt by the caller (the rollup command's work).
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ClickHouseClient } from '../clickhouse/client';
import { selectRows } from '../clickhouse/client';
import { quoteIdent, withTransaction } from '../db/pool';
import {
  clickhouseMigrations,
  insertableColumns,
  MANIFEST,
  type Manifest,
  manifestSchema,
  type Progress,
  plainIdent,
  postgresMigrations,
} from './backup';
import { CLICKHOUSE_SOURCE_TABLES } from './tables';

export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  if (!fs.existsSync(file)) throw new Error(`${dir} holds no ${MANIFEST}: not a Tidemark backup`);
  const parsed = manifestSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a Tidemark backup manifest this version reads`);
  return parsed.data;
}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Refuses anything but an empty instance migrated to the backup's schema version. */
async function requireEmptyTarget(pool: Pool, clickhouse: ClickHouseClient, manifest: Manifest): Promise<void> {
  const pg = await postgresMigrations(pool);
  const ch = await clickhouseMigrations(clickhouse);
  if (!same(pg, manifest.migrations.postgres) || !same(ch, manifest.migrations.clickhouse)) {
    throw new Error(
      `the backup was taken at schema postgres ${manifest.migrations.postgres.at(-1)}, clickhouse ${manifest.migrations.clickhouse.at(-1)}; ` +
        `this instance is at postgres ${pg.at(-1)}, clickhouse ${ch.at(-1)}: restore with the Tidemark version that took it (${manifest.tidemark_version}), then upgrade`,
    );
  }
  const users = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM users')).rows[0].n);
  const teams = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM teams')).rows[0].n);
  if (users + teams > 0)
    throw new Error(`this instance is not empty (${users} users, ${teams} teams): restore onto a new DATABASE_URL`);
  for (const table of CLICKHOUSE_SOURCE_TABLES) {
    const [row] = await selectRows<{ n: string }>(clickhouse, `SELECT count() AS n FROM ${plainIdent(table)}`, {});
    if (Number(row.n) > 0)
      throw new Error(
        `ClickHouse table ${table} of this instance is not empty: restore onto a new CLICKHOUSE_DATABASE`,
      );
  }
}

export async function restore(
  deps: { pool: Pool; clickhouse: ClickHouseClient },
  dir: string,
  progress: Progress,
): Promise<Manifest> {
  const manifest = readManifest(dir);
  await requireEmptyTarget(deps.pool, deps.clickhouse, manifest);

  await withTransaction(deps.pool, async (client) => {
    // The migrations made this instance's own identity row; the backup's replaces it.
    await client.query('DELETE FROM instance');
    for (const table of manifest.postgres) {
      const columns = table.columns.map(quoteIdent).join(', ');
      await pipeline(
        fs.createReadStream(path.join(dir, table.file)),
        createGunzip(),
        client.query(copyFrom(`COPY ${quoteIdent(table.table)} (${columns}) FROM STDIN WITH (FORMAT binary)`)),
      );
      const n = Number(
        (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdent(table.table)}`)).rows[0].n,
      );
      if (n !== table.rows)
        throw new Error(`postgres ${table.table}: ${n} rows restored, the backup holds ${table.rows}`);
      progress(`postgres ${table.table}: ${n} rows`);
    }
  });

  // The store is claimed by the restored identity (lib/db/instance.ts), so this instance's roles accept it.
  await deps.clickhouse.command({ query: 'TRUNCATE TABLE tidemark_instance' });
  await deps.clickhouse.insert({
    table: 'tidemark_instance',
    values: [{ id: manifest.instance_id }],
    format: 'JSONEachRow',
  });

  for (const table of manifest.clickhouse) {
    const present = new Set(await insertableColumns(deps.clickhouse, table.table));
    const missing = table.columns.filter((c) => !present.has(c));
    if (missing.length) throw new Error(`clickhouse ${table.table} has no column ${missing.join(', ')}`);
    if (table.rows === 0) {
      progress(`clickhouse ${table.table}: 0 rows`);
      continue;
    }
    const result = await deps.clickhouse.exec({
      query: `INSERT INTO ${plainIdent(table.table)} (${table.columns.map(plainIdent).join(', ')}) FORMAT TabSeparated`,
      values: fs.createReadStream(path.join(dir, table.file)).pipe(createGunzip()),
      clickhouse_settings: { max_partitions_per_insert_block: '10000' },
    });
    result.stream.resume();
    await new Promise<void>((resolve, reject) => {
      result.stream.on('end', resolve);
      result.stream.on('error', reject);
    });
    const [row] = await selectRows<{ n: string }>(
      deps.clickhouse,
      `SELECT count() AS n FROM ${plainIdent(table.table)}`,
      {},
    );
    if (Number(row.n) !== table.rows)
      throw new Error(`clickhouse ${table.table}: ${row.n} rows restored, the backup holds ${table.rows}`);
    progress(`clickhouse ${table.table}: ${row.n} rows`);
  }
  return manifest;
}
