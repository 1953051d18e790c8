// ClickHouse writes of the ingest worker. Event rows arrive as RowBinary job payloads and go to ClickHouse as
// they are, with an explicit column list and a dedup token that names exactly the rows the insert carries: the same rows sent twice are stored once (the table keeps
// non_replicated_deduplication_window tokens), while different rows never share a token.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '../../clickhouse/client';
import { ROW_BINARY_COLUMNS } from '../job/rowBinary';

/**
 * The token of an insert, from what names its rows: event ids, or `job:<id>` for all the rows of a job's
 * payload (never changed once queued, and event ids are unique), in any order.
 */
export function dedupToken(rowNames: readonly string[]): string {
  const hash = createHash('sha256');
  for (const name of [...rowNames].sort()) hash.update(name);
  return `ev-${hash.digest('hex')}`;
}

// What ClickHouse answers when the data itself cannot be read (CANNOT_PARSE_UUID, INCORRECT_DATA, …);
// a block is parsed before any of it is written, so nothing of such an insert was stored.
const BAD_DATA_TYPE =
  /^(CANNOT_PARSE_|CANNOT_READ_|INCORRECT_DATA$|TYPE_MISMATCH$|NO_SUCH_COLUMN_IN_TABLE$|TOO_LARGE_STRING_SIZE$|VALUE_IS_OUT_OF_RANGE|ARGUMENT_OUT_OF_BOUND$|DECIMAL_OVERFLOW$)/;

export function isBadDataError(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && BAD_DATA_TYPE.test(type);
}

/**
 * Inserts event rows through `events_ingest` (sql/clickhouse/008, 015: read as plain strings, converted by
 * whole columns): job payloads, RowBinary in ROW_BINARY_COLUMNS order, as one buffer or several.
 */
export async function insertEventRows(
  clickhouse: ClickHouseClient,
  rows: Buffer | readonly Buffer[],
  token: string,
): Promise<void> {
  // Several buffers (one per job) are streamed as they are: concatenating a flush would copy it whole for nothing.
  const chunks = (Buffer.isBuffer(rows) ? [rows] : rows).filter((c) => c.length > 0);
  if (chunks.length === 0) return;
  const result = await clickhouse.exec({
    query: `INSERT INTO events_ingest (${ROW_BINARY_COLUMNS.join(', ')}) FORMAT RowBinary`,
    values: Readable.from(chunks),
    clickhouse_settings: {
      insert_deduplication_token: token,
      // The views (events_ingest → events → sessions) must skip a deduplicated block exactly as a table does.
      deduplicate_blocks_in_dependent_materialized_views: 1,
      // One flush may cover many days; never refuse it for touching many partitions.
      max_partitions_per_insert_block: '1000',
    },
  });
  result.stream.resume();
  await new Promise<void>((resolve, reject) => {
    result.stream.on('end', resolve);
    result.stream.on('error', reject);
  });
}

/** Event ids among `eventIds` that are already stored (for jobs that may have been written before). */
export async function existingEventIds(
  clickhouse: ClickHouseClient,
  websiteId: string,
  eventIds: readonly string[],
  tsRange: readonly [string, string],
): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const result = await clickhouse.query({
    query: `SELECT toString(event_id) AS id FROM events
            WHERE website_id = {website:UUID}
              AND ts BETWEEN {lo:DateTime64(3, 'UTC')} AND {hi:DateTime64(3, 'UTC')}
              AND event_id IN {ids:Array(UUID)}`,
    query_params: { website: websiteId, lo: tsRange[0], hi: tsRange[1], ids: eventIds },
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ id: string }>()).map((r) => r.id));
}
