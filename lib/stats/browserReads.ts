// Reads of browser-only data (spec External API: /heatmaps/{websiteId}/pages, /replays/{websiteId}/sessions).
// Every value is a bound `{name:Type}` parameter; identifiers are fixed in the SQL text.
//
// The tables are ReplacingMergeTrees (sql/clickhouse/003_browser.sql): until a background merge runs, a
// retried click or chunk can be present twice, so these reads never trust row counts and never use FINAL.
// Clicks are counted as distinct event ids. Replay chunks are first folded to one row per (session_id, seq),
// taking the values of the copy with the latest ts (argMax): a retried chunk reaches the server later than
// the original, and the later insert is the copy ReplacingMergeTree itself keeps, so the answer does not
// change when the merge happens.
import type { ClickHouseClient } from '../clickhouse/client';
import type { HeatmapPagesData, ReplaySession, ReplaySessionsData } from '../external/schemas';

async function select<R>(clickhouse: ClickHouseClient, query: string, params: Record<string, unknown>): Promise<R[]> {
  const result = await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return result.json<R>();
}

function checkInt(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

const isoFromMs = (ms: string | number): string => new Date(Number(ms)).toISOString();

/** All-time heatmap pages: distinct clicks per path, most clicked first (ties by path ascending). */
export async function heatmapPages(clickhouse: ClickHouseClient, websiteId: string, limit: number): Promise<HeatmapPagesData> {
  checkInt(limit, 'limit', 1, 10_000);
  const rows = await select<{ url: string; total_interactions: string; last_ms: string }>(
    clickhouse,
    `SELECT pathname AS url, uniqExact(event_id) AS total_interactions, toUnixTimestamp64Milli(max(ts)) AS last_ms
     FROM interactions
     WHERE website_id = {website:UUID}
     GROUP BY pathname
     ORDER BY total_interactions DESC, url ASC
     LIMIT {limit:UInt32}`,
    { website: websiteId, limit },
  );
  return {
    pages: rows.map((r) => ({ url: r.url, total_interactions: Number(r.total_interactions), last_updated: isoFromMs(r.last_ms) })),
  };
}

/**
 * Recorded sessions, newest first (started_at desc, then session_id asc).
 *
 * - started_at / ended_at: the earliest and latest chunk ts (server receive time, millisecond precision).
 * - duration_seconds: ended_at − started_at in seconds, fractional with millisecond precision (not rounded);
 *   0 for a one-chunk recording.
 * - event_count: rrweb events across the chunks. A chunk's `data` is the JSON array the tracker flushes
 *   (tracker/src/replay.ts), so it contributes its array length; a chunk whose data is not a JSON array
 *   (an object, a scalar, text that is not JSON) counts as one event.
 * - page_url: the path of the lowest-seq chunk. device_type, browser, os and country_code come from the
 *   session (the `sessions` fold); '' when the session has no such value (country_code: null).
 * - pagination.has_more is learned by fetching limit + 1 rows.
 */
export async function replaySessions(
  clickhouse: ClickHouseClient,
  websiteId: string,
  page: { limit: number; offset: number },
): Promise<ReplaySessionsData> {
  const limit = checkInt(page.limit, 'limit', 1, 10_000);
  const offset = checkInt(page.offset, 'offset', 0, 1_000_000_000);
  const rows = await select<{
    session_id: string;
    started_ms: string;
    ended_ms: string;
    page_url: string;
    event_count: string;
    device_type: string;
    browser: string;
    os: string;
    country_code: string;
  }>(
    clickhouse,
    `WITH
       chunks AS (
         SELECT session_id, seq, max(ts) AS cts, argMax(pathname, ts) AS path,
                argMax(if(JSONType(data) = 'Array', JSONLength(data), 1), ts) AS n
         FROM replay_chunks
         WHERE website_id = {website:UUID}
         GROUP BY session_id, seq
       ),
       recordings AS (
         SELECT session_id, min(cts) AS started, max(cts) AS ended, argMin(path, seq) AS page_url, sum(n) AS event_count
         FROM chunks
         GROUP BY session_id
         ORDER BY started DESC, session_id ASC
         LIMIT {take:UInt32} OFFSET {offset:UInt32}
       )
     SELECT r.session_id AS session_id,
            toUnixTimestamp64Milli(r.started) AS started_ms,
            toUnixTimestamp64Milli(r.ended) AS ended_ms,
            r.page_url AS page_url,
            r.event_count AS event_count,
            s.device_type AS device_type, s.browser AS browser, s.os AS os, s.country_code AS country_code
     FROM recordings AS r
     LEFT JOIN (
       SELECT session_id,
              anyIf(device_type, device_type != '') AS device_type,
              anyIf(browser, browser != '') AS browser,
              anyIf(os, os != '') AS os,
              anyIf(country_code, country_code != '') AS country_code
       FROM sessions
       WHERE website_id = {website:UUID} AND session_id IN (SELECT session_id FROM recordings)
       GROUP BY session_id
     ) AS s ON s.session_id = r.session_id
     ORDER BY r.started DESC, r.session_id ASC
     SETTINGS join_use_nulls = 0`,
    { website: websiteId, take: limit + 1, offset },
  );
  const sessions: ReplaySession[] = rows.slice(0, limit).map((r) => {
    const started = Number(r.started_ms);
    const ended = Number(r.ended_ms);
    return {
      id: r.session_id,
      session_id: r.session_id,
      page_url: r.page_url,
      device_type: r.device_type ?? '',
      browser: r.browser ?? '',
      os: r.os ?? '',
      country_code: r.country_code ? r.country_code : null,
      duration_seconds: Math.max(0, ended - started) / 1000,
      event_count: Number(r.event_count),
      started_at: isoFromMs(started),
      ended_at: isoFromMs(ended),
    };
  });
  return { sessions, pagination: { limit, offset, has_more: rows.length > limit } };
}
