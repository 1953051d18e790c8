// Custom events' properties and their most frequent values (External API /analytics/{id}/events), and the
// keys a site export breaks down by: reads of the `props` JSON of custom events, not metric questions.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { inWindows } from '../sql/fragments';

export interface PropertyValues {
  name: string;
  key: string;
  values: { value: string; events: number }[];
}

/**
 * For the named custom events (all without `names`) in [start, end): their property keys, most used first (at most `keys` per
 * event), each with its `values` most frequent values. A non-string value reads as its JSON text.
 */
export async function topPropertyValues(
  clickhouse: ClickHouseClient,
  q: { websiteId: string; start: number; end: number; names?: readonly string[] },
  keys = 10,
  values = 5,
): Promise<PropertyValues[]> {
  if (q.names?.length === 0) return [];
  const params: Record<string, unknown> = { w: q.websiteId, keys, values, ...(q.names ? { names: q.names } : {}) };
  const rows = await selectRows<{ name: string; key: string; value: string; n: string; kn: string }>(
    clickhouse,
    `SELECT name, kv.1 AS key, if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2) AS value, count() AS n,
        sum(n) OVER (PARTITION BY name, key) AS kn
      FROM events ARRAY JOIN JSONExtractKeysAndValuesRaw(props) AS kv
      WHERE website_id = {w:UUID} AND ${inWindows('ts', [q], params)} AND type IN ('event', 'goal')${q.names ? ' AND name IN {names:Array(String)}' : ''}
      GROUP BY name, key, value
      ORDER BY name, kn DESC, key, n DESC, value
      LIMIT {values:UInt32} BY name, key`,
    params,
  );
  const out = new Map<string, PropertyValues>();
  for (const r of rows) {
    const id = `${r.name}\u0000${r.key}`;
    if (!out.has(id)) out.set(id, { name: r.name, key: r.key, values: [] });
    out.get(id)!.values.push({ value: r.value, events: Number(r.n) });
  }
  const perEvent = new Map<string, number>();
  return [...out.values()].filter((p) => {
    const seen = perEvent.get(p.name) ?? 0;
    perEvent.set(p.name, seen + 1);
    return seen < keys;
  });
}

/** The property keys of custom events and purchases in [start, end), most used first (at most `limit`). */
export async function propertyKeys(
  clickhouse: ClickHouseClient,
  q: { websiteId: string; start: number; end: number },
  limit: number,
): Promise<string[]> {
  const params: Record<string, unknown> = { w: q.websiteId, limit };
  const rows = await selectRows<{ key: string }>(
    clickhouse,
    `SELECT arrayJoin(JSONExtractKeys(props)) AS key
      FROM events
      WHERE website_id = {w:UUID} AND ${inWindows('ts', [q], params)} AND type IN ('event', 'goal', 'purchase') AND props != ''
      GROUP BY key
      ORDER BY count() DESC, key
      LIMIT {limit:UInt32}`,
    params,
  );
  return rows.map((r) => r.key);
}
