// Event rows as ClickHouse RowBinary, the payload format of v5 ingest jobs. Measured in chDB with the
// benchmark's rows (24,000-row inserts into `events_ingest`, merges stopped): 3.6 µs of engine CPU per row
// against 9.0–9.5 for the same rows as JSONCompactEachRow, whose text parsing was most of the store's work.
// Values follow `events_ingest`'s types (sql/clickhouse/015): String for every text, UUID and time column,
// the width of the four integer columns; the table's view converts whole columns into `events`' types.
// Rows are self-delimiting, so the payloads of many jobs concatenate into one insert as they are.
import { EVENT_COLUMNS, sameHead, type EventRow, type IngestJobV5, type QueuedIngest } from './rows';

/** Integer columns and their byte width; every other column is a String. */
const INT_BYTES: Partial<Record<keyof EventRow, 1 | 2 | 4>> = { screen_width: 2, screen_height: 2, engagement_ms: 4, scroll_depth: 1 };
const INT_TYPES = { 1: 'UInt8', 2: 'UInt16', 4: 'UInt32' } as const;

/** The RowBinary structure of a payload row, in EVENT_COLUMNS order (what `events_ingest` declares). */
export const EVENT_ROW_TYPES: readonly string[] = EVENT_COLUMNS.map((c) => {
  const bytes = INT_BYTES[c];
  return bytes ? INT_TYPES[bytes] : 'String';
});

/** A growable byte buffer that writes RowBinary values. */
class RowBinaryWriter {
  private buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 256));
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A varint length then the UTF-8 bytes; a lone surrogate becomes U+FFFD, as ClickHouse needs well-formed text. */
  string(s: string): void {
    const units = s.length;
    this.reserve(5 + units * 3);
    const buf = this.buf;
    const start = this.pos;
    if (units <= 42) {
      // ASCII, nearly every value, is copied here: cheaper than a native call for a short string.
      buf[start] = units;
      const at = start + 1;
      let i = 0;
      for (; i < units; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at + i] = c;
      }
      if (i === units) {
        this.pos = at + units;
        return;
      }
      // A UTF-16 unit is at most 3 UTF-8 bytes: up to 42 units the length fits the varint's first byte, so
      // the text is written straight after it and its length filled in (no byte count first).
      const n = buf.write(s, at);
      buf[start] = n;
      this.pos = at + n;
      return;
    }
    this.varint(Buffer.byteLength(s));
    this.pos += buf.write(s, this.pos);
  }

  private varint(value: number): void {
    let v = value;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** An unsigned little-endian integer of 1, 2 or 4 bytes (values were range-checked by the row schema). */
  uint(value: number, bytes: 1 | 2 | 4): void {
    this.reserve(bytes);
    for (let i = 0; i < bytes; i++) this.buf[this.pos++] = (value >>> (8 * i)) & 0xff;
  }

  bytes(b: Buffer): void {
    this.reserve(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

// Values of a row spelled out per column (reading each property by name beats a keyed loop over 40
// names); a unit test checks the order against EVENT_COLUMNS through a decode.
function writeHead(w: RowBinaryWriter, r: EventRow): void {
  w.string(r.website_id);
  w.string(r.source);
  w.string(r.received_at);
  w.string(r.ip_hash);
  w.string(r.api_key_id);
  w.string(r.expire_at);
}

function writeRest(w: RowBinaryWriter, r: EventRow): void {
  w.string(r.event_id);
  w.string(r.type);
  w.string(r.name);
  w.string(r.ts);
  w.string(r.session_id);
  w.string(r.visitor_id);
  w.string(r.url);
  w.string(r.hostname);
  w.string(r.pathname);
  w.string(r.referrer);
  w.string(r.referrer_domain);
  w.string(r.source_name);
  w.string(r.utm_source);
  w.string(r.utm_medium);
  w.string(r.utm_campaign);
  w.string(r.utm_content);
  w.string(r.utm_term);
  w.string(r.device_type);
  w.string(r.browser);
  w.string(r.browser_version);
  w.string(r.os);
  w.string(r.os_version);
  w.string(r.country_code);
  w.string(r.region);
  w.string(r.city);
  w.uint(r.screen_width, 2);
  w.uint(r.screen_height, 2);
  w.string(r.language);
  w.uint(r.engagement_ms, 4);
  w.uint(r.scroll_depth, 1);
  // The decimal's text as JSON.stringify writes it; the view parses it exactly (no binary float rounding).
  w.string(String(r.revenue));
  w.string(r.currency);
  w.string(r.props);
  w.string(r.idempotency_key);
}

/** Event rows as RowBinary (EVENT_COLUMNS order), and the span of their ts. */
export function encodeEventRows(rows: readonly EventRow[]): { bytes: Buffer; tsRange: [string, string] | null } {
  if (rows.length === 0) return { bytes: Buffer.alloc(0), tsRange: null };
  let minTs = rows[0].ts;
  let maxTs = rows[0].ts;
  let shared = true;
  for (const r of rows) {
    if (r.ts < minTs) minTs = r.ts;
    if (r.ts > maxTs) maxTs = r.ts;
    if (shared && !sameHead(r, rows[0])) shared = false;
  }
  const w = new RowBinaryWriter(rows.length * 400);
  if (shared) {
    // The request's columns hold the same values on every row: encoded once, copied in front of each.
    const hw = new RowBinaryWriter(256);
    writeHead(hw, rows[0]);
    const head = hw.result();
    for (const r of rows) {
      w.bytes(head);
      writeRest(w, r);
    }
  } else {
    for (const r of rows) {
      writeHead(w, r);
      writeRest(w, r);
    }
  }
  return { bytes: w.result(), tsRange: [minTs, maxTs] };
}

const EVENT_ID_AT = EVENT_COLUMNS.indexOf('event_id');
const WIDTHS = EVENT_COLUMNS.map((c) => INT_BYTES[c] ?? 0);

/**
 * Where each row of a payload starts and ends, with its event id: for the writer's rare checks of a retried
 * job, not its hot path. Throws on bytes that are not whole rows.
 */
export function eventRowSpans(payload: Buffer): { start: number; end: number; eventId: string }[] {
  const spans: { start: number; end: number; eventId: string }[] = [];
  let pos = 0;
  while (pos < payload.length) {
    const start = pos;
    let eventId = '';
    for (let c = 0; c < WIDTHS.length; c++) {
      if (WIDTHS[c] > 0) {
        pos += WIDTHS[c];
        continue;
      }
      let len = 0;
      let shift = 0;
      for (;;) {
        if (pos >= payload.length) throw new Error('RowBinary payload ends inside a row');
        const b = payload[pos++];
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
        shift += 7;
      }
      if (c === EVENT_ID_AT) eventId = payload.toString('utf8', pos, pos + len);
      pos += len;
    }
    if (pos > payload.length) throw new Error('RowBinary payload ends inside a row');
    spans.push({ start, end: pos, eventId });
  }
  return spans;
}

/** A v5 job of one request: its events as the payload, the side records in the data. */
export function packJob(
  websiteId: string,
  rows: readonly EventRow[],
  side: Pick<IngestJobV5, 'identities' | 'payments' | 'interactions' | 'errors' | 'replays'>,
): QueuedIngest {
  const { bytes, tsRange } = encodeEventRows(rows);
  return { data: { v: 5, websiteId, rows: rows.length, tsRange, ...side }, payload: bytes };
}
