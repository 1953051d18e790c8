// The activity panel of one API key (spec "Where accepted events appear"): accepted-event counts for the last
// 24 hours and 7 days, top event types and the 20 most recent events. Only accepted events are ever stored,
// so `events` rows carrying the key's id are exactly its accepted events.
//
// Windows are on `received_at` (when the key's request was accepted), not on the event's own `ts`, which a
// sender may set up to 24 h off the server clock. Every query also bounds `ts` (within 24 h of received_at by
// validation) so ClickHouse can skip old monthly partitions; api_key_id is not in the sort key.

import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { z } from '../../zod';
import { isoFromMs } from '../time';

export const RECENT_EVENTS = 20;
const DAY_MS = 24 * 3600 * 1000;

export const eventTypeCountSchema = z.object({ type: z.string(), count: z.number().int() });
export const recentEventSchema = z.object({
  event_id: z.string(),
  /** A full-access key writes to every website of its team, so each event names its website. */
  website_id: z.string(),
  type: z.string(),
  name: z.string(),
  ts: z.string(),
  url: z.string(),
  visitor_id: z.string(),
  session_id: z.string(),
});
export const apiKeyActivitySchema = z.object({
  accepted_last_24h: z.number().int(),
  accepted_last_7d: z.number().int(),
  top_event_types: z.array(eventTypeCountSchema),
  recent_events: z.array(recentEventSchema),
});
export type ApiKeyActivity = z.infer<typeof apiKeyActivitySchema>;

type Params = Record<string, unknown>;

const T = "DateTime64(3, 'UTC')";
// received_at in (d7, now]; ts can trail received_at by at most 24 h.
const LAST_7D = `received_at >= {d7:${T}} AND received_at <= {now:${T}} AND ts >= {d8:${T}}`;

interface RecentRow {
  event_id: string;
  website_id: string;
  type: string;
  name: string;
  ts_ms: string;
  url: string;
  visitor_id: string;
  session_id: string;
}

function recentQuery(window: string): string {
  return `SELECT toString(event_id) AS event_id, toString(website_id) AS website_id, type, name,
                 toUnixTimestamp64Milli(ts) AS ts_ms, url, visitor_id, session_id
          FROM events
          WHERE api_key_id = {key:String} AND ${window}
          ORDER BY ts DESC, received_at DESC, event_id ASC
          LIMIT ${RECENT_EVENTS}`;
}

export async function apiKeyActivity(
  clickhouse: ClickHouseClient,
  apiKeyId: string,
  now: Date = new Date(),
): Promise<ApiKeyActivity> {
  // Browser events carry an empty api_key_id: an empty id would list every browser event.
  if (!apiKeyId) throw new RangeError('apiKeyId is required');
  const params: Params = {
    key: apiKeyId,
    now,
    d1: new Date(now.getTime() - DAY_MS),
    d7: new Date(now.getTime() - 7 * DAY_MS),
    d8: new Date(now.getTime() - 8 * DAY_MS),
  };
  const [counts, types, recent7d] = await Promise.all([
    selectRows<{ last_24h: string; last_7d: string }>(
      clickhouse,
      `SELECT countIf(received_at >= {d1:${T}}) AS last_24h, count() AS last_7d
       FROM events WHERE api_key_id = {key:String} AND ${LAST_7D}`,
      params,
    ),
    selectRows<{ type: string; count: string }>(
      clickhouse,
      `SELECT type, count() AS count FROM events WHERE api_key_id = {key:String} AND ${LAST_7D}
       GROUP BY type ORDER BY count DESC, type ASC`,
      params,
    ),
    selectRows<RecentRow>(clickhouse, recentQuery(LAST_7D), params),
  ]);
  // A key idle for a week still shows its last events: only then scan its whole (retention-bounded) history.
  const recent =
    recent7d.length < RECENT_EVENTS
      ? await selectRows<RecentRow>(clickhouse, recentQuery(`received_at <= {now:${T}}`), params)
      : recent7d;
  return {
    accepted_last_24h: Number(counts[0]?.last_24h ?? 0),
    accepted_last_7d: Number(counts[0]?.last_7d ?? 0),
    top_event_types: types.map((r) => ({ type: r.type, count: Number(r.count) })),
    recent_events: recent.map(({ ts_ms, ...r }) => ({ ...r, ts: isoFromMs(ts_ms) })),
  };
}
