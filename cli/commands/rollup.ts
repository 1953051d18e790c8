import { rollupDaily } from '../../jobs/rollupDaily';
import { compactRollups, settleLateMarks } from '../../jobs/rollups/maintenance';
import { clickHouseTarget, createClickHouse } from '../../lib/clickhouse/client';
import { createLogger } from '../../lib/log';
import { MARK_MARGIN_MS } from '../../lib/stats/coverage';
import type { Context } from '../context';

export async function runRollup(_v: unknown, ctx: Context): Promise<void> {
  const pool = await ctx.pool();
  const clickhouse = createClickHouse(clickHouseTarget(ctx.config), { requestTimeoutMs: 3_600_000 });
  try {
    let total = 0;
    // Days an import just wrote to again are rolled up once their late marks have settled; a client that
    // keeps sending late events keeps marking, so pending days are waited for a few times only (the clock
    // rolls them up later).
    let waits = 3;
    await settleLateMarks(clickhouse);
    for (;;) {
      const { websites, days, pending } = await rollupDaily(pool, clickhouse, createLogger('warn', 'cli'), Date.now(), {
        wait: true,
      });
      total += days;
      if (days === 0 && pending > 0 && waits-- > 0) await new Promise((resolve) => setTimeout(resolve, MARK_MARGIN_MS));
      else if (days === 0) {
        // A backfill leaves several parts per month, and reads pay per part: merge them now.
        if (total > 0) await compactRollups(clickhouse, ctx.config.CLICKHOUSE_CLUSTER);
        ctx.io.out(
          `${websites} website(s) up to date; ${total} day(s) rolled up${pending > 0 ? `; ${pending} day(s) wait for late events to settle` : ''}`,
        );
        return;
      }
    }
  } finally {
    await clickhouse.close();
  }
}
