// Revenue in currencies other than the website's (External API /analytics/{id}/revenue): reported apart, not
// converted, since no exchange rates are kept.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { inWindows } from '../sql/fragments';
import { NET_REVENUE, REFUNDED, SUCCEEDED } from '../sql/goals';

/** Net revenue (succeeded minus refunded) of purchases in currencies other than `currency`, by currency. */
export async function otherCurrencyRevenue(
  clickhouse: ClickHouseClient,
  q: { websiteId: string; start: number; end: number; currency: string },
): Promise<{ currency: string; total: number }[]> {
  const params: Record<string, unknown> = { w: q.websiteId, cur: q.currency };
  const rows = await selectRows<{ currency: string; total: string }>(
    clickhouse,
    `SELECT currency, toString(${NET_REVENUE}) AS total FROM events
      WHERE website_id = {w:UUID} AND ${inWindows('ts', [q], params)} AND type = 'purchase' AND currency != {cur:String}
      GROUP BY currency HAVING countIf(${SUCCEEDED} OR ${REFUNDED}) > 0 ORDER BY currency`,
    params,
  );
  return rows.map((r) => ({ currency: r.currency, total: Math.round(Number(r.total) * 100) / 100 }));
}
