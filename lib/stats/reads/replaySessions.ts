// Replay sessions, a read of browser-only data (spec External API: /replays/{websiteId}/sessions).
// Every value is a bound `{name:Type}` parameter; identifiers are fixed in the SQL text.
//
// The table is a ReplacingMergeTree (sql/clickhouse/003_browser.sql): until a background merge runs, a
// retried chunk can be present twice, so this read never trusts raw row counts. Replay chunks are first folded to one row per (session_id, seq), taking the values of the copy with the
// latest ts (argMax): a retried chunk reaches the server later than the original, and the later insert is
// the copy ReplacingMergeTree itself keeps, so the answer does not change when the merge happens. The page
// of sessions is chosen from (session_id, seq, ts) alone; only its sessions' chunk data is parsed and only
// their `sessions` rows are read (both tables are ordered by (website_id, session_id): point lookups).

import { checkInt } from '../../checks';
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import type { ReplaySession, ReplaySessionsData } from '../../external/schemas';
import { visitValue } from '../sql/visits';
import { isoFromMs } from '../time';

/**
 * Recorded sessions, newest first (started_at desc, then session_id asc).
 *
 * - started_at / ended_at: the earliest and latest chunk ts (server receive time, millisecond precision).
 * - duration_seconds: ended_at − started_at in seconds, fractional with millisecond precision (not rounded);
 *   0 for a one-chunk recording.
 * - event_count: rrweb events across the chunks. A chunk's `data` is the JSON array the tracker flushes
 *   (tracker/src/replay.ts), so it contributes its array length; a chunk whose data is not a JSON array
 *   (an object, a scalar, text that is not JSON) counts as one event.
 * - page_url: the path of the lowest-seq chunk. device_type, browser, os and country_code are the visit's
 *   (its first pageview's, sql/visits.ts); '' when it has none (country_code: null).
 * - pagination.has_more is learned by fetching limit + 1 rows.
 */
export async function replaySessions(
  clickhouse: ClickHouseClient,
  websiteId: string,
  page: { limit: number; offset: number },
): Promise<ReplaySessionsData> {
  const limit = checkInt(page.limit, 'limit', 1, 10_000);
  const offset = checkInt(page.offset, 'offset', 0, 1_000_000_000);
  // 1. The page: each session's start is its earliest folded chunk time (min over seq of the latest copy's ts).
  const pageRows = await selectRows<{ session_id: string }>(
    clickhouse,
    `SELECT session_id, min(cts) AS started
     FROM (
       SELECT session_id, seq, max(ts) AS cts
       FROM replay_chunks
       WHERE website_id = {website:UUID}
       GROUP BY session_id, seq
     )
     GROUP BY session_id
     ORDER BY started DESC, session_id ASC
     LIMIT {take:UInt32} OFFSET {offset:UInt32}`,
    { website: websiteId, take: limit + 1, offset },
  );
  const ids = pageRows.slice(0, limit).map((r) => r.session_id);
  if (ids.length === 0) return { sessions: [], pagination: { limit, offset, has_more: false } };

  // 2. The page's recordings and session details, both point lookups by session id.
  const [recordings, details] = await Promise.all([
    selectRows<{ session_id: string; started_ms: string; ended_ms: string; page_url: string; event_count: string }>(
      clickhouse,
      `SELECT session_id,
              toUnixTimestamp64Milli(min(cts)) AS started_ms,
              toUnixTimestamp64Milli(max(cts)) AS ended_ms,
              argMin(path, seq) AS page_url,
              sum(n) AS event_count
       FROM (
         SELECT session_id, seq, max(ts) AS cts, argMax(pathname, ts) AS path,
                argMax(if(JSONType(data) = 'Array', JSONLength(data), 1), ts) AS n
         FROM replay_chunks
         WHERE website_id = {website:UUID} AND session_id IN {ids:Array(String)}
         GROUP BY session_id, seq
       )
       GROUP BY session_id`,
      { website: websiteId, ids },
    ),
    selectRows<{ session_id: string; device_type: string; browser: string; os: string; country_code: string }>(
      clickhouse,
      `SELECT session_id,
              ${visitValue('device')} AS device_type,
              ${visitValue('browser')} AS browser,
              ${visitValue('os')} AS os,
              ${visitValue('country')} AS country_code
       FROM sessions
       WHERE website_id = {website:UUID} AND session_id IN {ids:Array(String)}
       GROUP BY session_id`,
      { website: websiteId, ids },
    ),
  ]);
  const recordingOf = new Map(recordings.map((r) => [r.session_id, r]));
  const detailsOf = new Map(details.map((d) => [d.session_id, d]));
  const sessions: ReplaySession[] = [];
  // The page's order is step 1's; a session purged in between is left out.
  for (const id of ids) {
    const r = recordingOf.get(id);
    if (!r) continue;
    const d = detailsOf.get(id);
    const started = Number(r.started_ms);
    const ended = Number(r.ended_ms);
    sessions.push({
      id,
      session_id: id,
      page_url: r.page_url,
      device_type: d?.device_type ?? '',
      browser: d?.browser ?? '',
      os: d?.os ?? '',
      country_code: d?.country_code ? d.country_code : null,
      duration_seconds: Math.max(0, ended - started) / 1000,
      event_count: Number(r.event_count),
      started_at: isoFromMs(started),
      ended_at: isoFromMs(ended),
    });
  }
  return { sessions, pagination: { limit, offset, has_more: pageRows.length > limit } };
}
