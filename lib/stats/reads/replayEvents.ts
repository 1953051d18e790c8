// One recorded session's rrweb events, for the dashboard's player (GET /replays/{websiteId}/sessions/{sessionId}/events).
// Every value is a bound `{name:Type}` parameter; identifiers are fixed in the SQL text.
//
// Chunks are folded to one per seq taking the latest copy (argMax by ts), as replaySessions.ts does, so a
// retried chunk that is still a second row before a merge is replayed once. A chunk's data is the JSON array
// the tracker flushes (tracker/src/replay.ts); anything else (not JSON, not an array) is skipped, since the
// Replayer cannot use it.

import { checkInt } from '../../checks';
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { notFound } from '../../errors';
import type { ReplayEventsData } from '../../external/schemas';

/** Chunks per answer: the tracker flushes every 5 s, so this is hours of recording. */
export const MAX_REPLAY_CHUNKS = 2000;

/** The session's events in seq order; 404 when the website has no recording of that session. */
export async function replayEvents(
  clickhouse: ClickHouseClient,
  websiteId: string,
  sessionId: string,
  maxChunks = MAX_REPLAY_CHUNKS,
): Promise<ReplayEventsData> {
  checkInt(maxChunks, 'maxChunks', 1, MAX_REPLAY_CHUNKS);
  const rows = await selectRows<{ seq: number; data: string }>(
    clickhouse,
    `SELECT seq, argMax(data, ts) AS data
     FROM replay_chunks
     WHERE website_id = {website:UUID} AND session_id = {session:String}
     GROUP BY seq
     ORDER BY seq ASC
     LIMIT {take:UInt32}`,
    { website: websiteId, session: sessionId, take: maxChunks + 1 },
  );
  if (rows.length === 0) throw notFound('Replay not found');
  const events: unknown[] = [];
  for (const row of rows.slice(0, maxChunks)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.data);
    } catch {
      continue;
    }
    if (Array.isArray(parsed)) for (const e of parsed) events.push(e);
  }
  return { session_id: sessionId, events, truncated: rows.length > maxChunks };
}
