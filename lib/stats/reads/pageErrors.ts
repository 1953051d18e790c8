// JavaScript errors by page over two windows (the insights' page_errors rule): distinct visitors who hit an
// error on each page in `now` and in `before`, occurrences in `now`, and the error that reached most visitors
// there. Errors of groups people marked ignored are left out. error_events is a ReplacingMergeTree
// (sql/clickhouse/003_browser.sql): occurrences are distinct event ids, never raw rows.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import type { Window } from '../model';
import { T } from '../sql/fragments';

export interface PageErrorRow {
  page: string;
  visitors: number;
  visitorsBefore: number;
  occurrences: number;
  topMessage: string;
  topType: string;
}

export async function pageErrors(
  clickhouse: ClickHouseClient,
  websiteId: string,
  now: Window,
  before: Window,
  ignoredFingerprints: readonly string[],
): Promise<PageErrorRow[]> {
  const params = {
    w: websiteId,
    ns: now.start / 1000,
    ne: now.end / 1000,
    bs: before.start / 1000,
    be: before.end / 1000,
    ignored: ignoredFingerprints,
  };
  const where = `website_id = {w:UUID} AND NOT has({ignored:Array(String)}, fingerprint)
    AND ts >= {bs:${T}} AND ts < {ne:${T}}`;
  const isNow = `ts >= {ns:${T}} AND ts < {ne:${T}}`;
  const isBefore = `ts >= {bs:${T}} AND ts < {be:${T}}`;
  const [pages, top] = await Promise.all([
    selectRows<{ page: string; visitors: string; before: string; occurrences: string }>(
      clickhouse,
      `SELECT pathname AS page, uniqExactIf(visitor_id, ${isNow}) AS visitors,
              uniqExactIf(visitor_id, ${isBefore}) AS before, uniqExactIf(event_id, ${isNow}) AS occurrences
       FROM error_events WHERE ${where}
       GROUP BY pathname HAVING visitors > 0`,
      params,
    ),
    selectRows<{ page: string; message: string; type: string }>(
      clickhouse,
      `SELECT pathname AS page, any(message) AS message, any(error_type) AS type, uniqExact(visitor_id) AS n
       FROM error_events WHERE ${where} AND ${isNow}
       GROUP BY pathname, fingerprint
       ORDER BY page, n DESC, fingerprint
       LIMIT 1 BY page`,
      params,
    ),
  ]);
  const topOf = new Map(top.map((t) => [t.page, t]));
  return pages.map((p) => ({
    page: p.page,
    visitors: Number(p.visitors),
    visitorsBefore: Number(p.before),
    occurrences: Number(p.occurrences),
    topMessage: topOf.get(p.page)?.message ?? '',
    topType: topOf.get(p.page)?.type ?? '',
  }));
}
