import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { migrate } from '../../lib/db/migrate';
import { createLogger } from '../../lib/log';
import { reachClickHouse } from '../../lib/process/startup';
import type { Context } from '../context';

export async function runMigrate(_v: unknown, ctx: Context): Promise<void> {
  const pool = await ctx.pool();
  await reachClickHouse(clickHouseTarget(ctx.config), ctx.config.EMBEDDED_STORE, createLogger('silent', 'cli'), 3_000);
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config));
  try {
    const result = await migrate({
      pool,
      clickhouse,
      clickhouseTarget: clickHouseTarget(ctx.config),
      clickhouseCluster: ctx.config.CLICKHOUSE_CLUSTER,
      clickhouseSetting: ctx.config.EMBEDDED_STORE ? 'STORE_PORT' : 'CLICKHOUSE_URL',
      logger: createLogger('warn', 'cli'),
    });
    const applied = [
      ...result.postgres.map((m) => `postgres ${m}`),
      ...result.clickhouse.map((m) => `clickhouse ${m}`),
    ];
    ctx.io.out(applied.length ? `applied:\n${applied.map((a) => `  ${a}`).join('\n')}` : 'up to date');
  } finally {
    await clickhouse.close();
  }
}
