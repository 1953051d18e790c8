import path from 'node:path';
import { backup } from '../../lib/backup/backup';
import { restore } from '../../lib/backup/restore';
import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { type Context, requireString, type Values } from '../context';
import { runMigrate } from './migrate';
import { runRollup } from './rollup';

export async function runBackup(v: Values, ctx: Context): Promise<void> {
  const dir = path.resolve(requireString(v.to, '--to'));
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config), { requestTimeoutMs: 3_600_000 });
  try {
    const started = Date.now();
    const manifest = await backup({ pool: await ctx.pool(), clickhouse }, dir, (line) => ctx.io.out(line));
    ctx.io.out(
      `backup of instance ${manifest.instance_id} written to ${dir} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await clickhouse.close();
  }
}

export async function runRestore(v: Values, ctx: Context): Promise<void> {
  const dir = path.resolve(requireString(v.from, '--from'));
  // An empty instance gets its schema first; restore then checks it matches the backup's.
  await runMigrate(v, { ...ctx, io: { ...ctx.io, out: () => undefined } });
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config), { requestTimeoutMs: 3_600_000 });
  try {
    const manifest = await restore({ pool: await ctx.pool(), clickhouse }, dir, (line) => ctx.io.out(line));
    ctx.io.out(`restored instance ${manifest.instance_id} (backup of ${manifest.created_at}); rebuilding rollups`);
  } finally {
    await clickhouse.close();
  }
  await runRollup(v, ctx);
}
