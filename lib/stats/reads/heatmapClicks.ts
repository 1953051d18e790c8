// One page's click density, a read of browser-only data (GET /heatmaps/{websiteId}/clicks): clicks counted on
// a fixed grid over the page (x over the viewport width, y over the page height the tracker saw), so the
// answer stays small however many clicks there are, plus the most clicked elements.
// Every value is a bound `{name:Type}` parameter; identifiers are fixed in the SQL text. FINAL collapses a
// retried click's copies, as in heatmapPages.ts (the same sorting key, so the same reasoning holds).

import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { HEATMAP_GRID, type HeatmapClicksData } from '../../external/schemas';

const MAX_CELLS = 5000;
const MAX_SELECTORS = 20;

export async function heatmapClicks(
  clickhouse: ClickHouseClient,
  websiteId: string,
  pathname: string,
): Promise<HeatmapClicksData> {
  const params = { website: websiteId, path: pathname, cols: HEATMAP_GRID.columns, rows: HEATMAP_GRID.rows };
  const settings = 'SETTINGS do_not_merge_across_partitions_select_final = 1';
  const [cells, summary, selectors] = await Promise.all([
    // pageX can pass the viewport width (a page that scrolls sideways) and a click can land below a page
    // height measured earlier: both are kept on the grid's last cell rather than dropped.
    selectRows<{ cx: string; cy: string; n: string }>(
      clickhouse,
      `SELECT least(intDiv(toUInt64(x) * {cols:UInt32}, greatest(viewport_width, 1)), {cols:UInt32} - 1) AS cx,
              least(intDiv(toUInt64(y) * {rows:UInt32}, greatest(page_height, 1)), {rows:UInt32} - 1) AS cy,
              count() AS n
       FROM interactions FINAL
       WHERE website_id = {website:UUID} AND pathname = {path:String}
       GROUP BY cx, cy
       ORDER BY n DESC, cy ASC, cx ASC
       LIMIT {cells:UInt32}
       ${settings}`,
      { ...params, cells: MAX_CELLS },
    ),
    selectRows<{ total: string; width: string; height: string }>(
      clickhouse,
      `SELECT count() AS total,
              toUInt32(quantileExact(0.5)(viewport_width)) AS width,
              toUInt32(quantileExact(0.5)(page_height)) AS height
       FROM interactions FINAL
       WHERE website_id = {website:UUID} AND pathname = {path:String}
       ${settings}`,
      params,
    ),
    selectRows<{ selector: string; n: string }>(
      clickhouse,
      `SELECT selector, count() AS n
       FROM interactions FINAL
       WHERE website_id = {website:UUID} AND pathname = {path:String} AND selector != ''
       GROUP BY selector
       ORDER BY n DESC, selector ASC
       LIMIT {limit:UInt32}
       ${settings}`,
      { ...params, limit: MAX_SELECTORS },
    ),
  ]);
  const total = Number(summary[0]?.total ?? 0);
  return {
    url: pathname,
    total_clicks: total,
    page: total > 0 ? { width: Number(summary[0].width), height: Number(summary[0].height) } : null,
    points: cells.map((c) => ({
      x: (Number(c.cx) + 0.5) / HEATMAP_GRID.columns,
      y: (Number(c.cy) + 0.5) / HEATMAP_GRID.rows,
      clicks: Number(c.n),
    })),
    selectors: selectors.map((s) => ({ selector: s.selector, clicks: Number(s.n) })),
  };
}
