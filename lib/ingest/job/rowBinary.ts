// Event rows as ClickHouse RowBinary, the payload of an ingest job (ingestJobSchema in ./rows): its one
// encoder (the web role) and its one decoder (the worker), the contract between them. Binary, because the
// store's text parsing of the same rows as JSONCompactEachRow was most of its work (bench/store-insert.ts
// compares the two).
// Values follow `events_ingest`'s types (sql/clickhouse/015): String for every text, UUID and time column,
// the width of the four integer columns; the table's view converts whole columns into `events`' types.
// Rows are self-delimiting, so the payloads of many jobs concatenate into one insert as they are.
import { EVENT_COLUMNS, type EventRow, type IngestJob, JOB_HEAD_COLUMNS, type QueuedIngest } from './rows';

/** Integer columns and their byte width; every other column is a String. */
const INT_BYTES: Partial<Record<keyof EventRow, 1 | 2 | 4>> = {
  screen_width: 2,
  screen_height: 2,
  engagement_ms: 4,
  scroll_depth: 1,
};
const INT_TYPES = { 1: 'UInt8', 2: 'UInt16', 4: 'UInt32' } as const;

/**
 * The column order of a payload row (the insert names it): the request's columns, the event's other String
 * columns, then the integers, so that a row's texts are contiguous and written in one go (RowBinaryWriter.texts).
 */
export const ROW_BINARY_COLUMNS: readonly (keyof EventRow)[] = [
  ...JOB_HEAD_COLUMNS,
  ...EVENT_COLUMNS.filter((c) => !JOB_HEAD_COLUMNS.includes(c) && !INT_BYTES[c]),
  ...EVENT_COLUMNS.filter((c) => INT_BYTES[c]),
];

/** The RowBinary type of each payload column, in ROW_BINARY_COLUMNS order (what `events_ingest` declares). */
export const EVENT_ROW_TYPES: readonly string[] = ROW_BINARY_COLUMNS.map((c) => {
  const bytes = INT_BYTES[c];
  return bytes ? INT_TYPES[bytes] : 'String';
});

// The length byte of a string of n < 128 ASCII characters, as a character of a text written as UTF-8.
const LENGTH_CHARS = Array.from({ length: 128 }, (_, n) => String.fromCharCode(n));

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
    this.reserve(5 + s.length * 3);
    this.varint(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos);
  }

  /**
   * Consecutive String values. Each native write costs more than the bytes it copies, so the values and
   * their length bytes are joined into one text and written at once: exact while every value is ASCII and
   * shorter than 128 (its length byte is then one ASCII character), which a byte count equal to the text's
   * length proves. Longer values are written on their own; a row with non-ASCII text is written value by value.
   */
  texts(values: readonly string[]): void {
    const start = this.pos;
    let text = '';
    for (const v of values) {
      if (v.length < 128) {
        text += LENGTH_CHARS[v.length] + v;
        continue;
      }
      if (!this.ascii(text)) {
        this.eachText(start, values);
        return;
      }
      text = '';
      this.string(v);
    }
    if (!this.ascii(text)) this.eachText(start, values);
  }

  /** Writes `text`; false (and nothing written) when it was not all ASCII. */
  private ascii(text: string): boolean {
    this.reserve(text.length * 3);
    const n = this.buf.write(text, this.pos);
    if (n !== text.length) return false;
    this.pos += n;
    return true;
  }

  private eachText(start: number, values: readonly string[]): void {
    this.pos = start;
    for (const v of values) this.string(v);
  }

  private varint(value: number): void {
    let v = value;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** The four integer columns, little-endian: UInt16, UInt16, UInt32, UInt8 (range-checked upstream). */
  ints(a: number, b: number, c: number, d: number): void {
    this.reserve(9);
    const buf = this.buf;
    const p = this.pos;
    buf[p] = a & 0xff;
    buf[p + 1] = (a >>> 8) & 0xff;
    buf[p + 2] = b & 0xff;
    buf[p + 3] = (b >>> 8) & 0xff;
    buf[p + 4] = c & 0xff;
    buf[p + 5] = (c >>> 8) & 0xff;
    buf[p + 6] = (c >>> 16) & 0xff;
    buf[p + 7] = (c >>> 24) & 0xff;
    buf[p + 8] = d & 0xff;
    this.pos = p + 9;
  }

  bytes(b: Buffer): void {
    this.reserve(b.length);
    this.buf.set(b, this.pos); // TypedArray#set: Buffer#copy checks its arguments, which costs more than a row's bytes
    this.pos += b.length;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

// The values of a row spelled out per column: reading each property by name is faster than looking 40
// names up in a loop. A unit test checks both lists' order through a decode.
/** The request's columns of a row (JOB_HEAD_COLUMNS order), the same for every event of one request. */
const headValues = (r: EventRow): string[] => [
  r.website_id,
  r.source,
  r.received_at,
  r.ip_hash,
  r.api_key_id,
  r.expire_at,
];

/** Whether two rows hold the same request columns, which a payload then encodes once. */
function sameHead(a: EventRow, b: EventRow): boolean {
  return (
    a.website_id === b.website_id &&
    a.source === b.source &&
    a.received_at === b.received_at &&
    a.ip_hash === b.ip_hash &&
    a.api_key_id === b.api_key_id &&
    a.expire_at === b.expire_at
  );
}

// The texts of a row after its head, in ROW_BINARY_COLUMNS order.
const restTexts = (r: EventRow): string[] => [
  r.event_id,
  r.type,
  r.name,
  r.ts,
  r.session_id,
  r.visitor_id,
  r.url,
  r.hostname,
  r.pathname,
  r.referrer,
  r.referrer_domain,
  r.source_name,
  r.utm_source,
  r.utm_medium,
  r.utm_campaign,
  r.utm_content,
  r.utm_term,
  r.device_type,
  r.browser,
  r.browser_version,
  r.os,
  r.os_version,
  r.country_code,
  r.region,
  r.city,
  r.language,
  // The decimal's text as JSON.stringify writes it; the view parses it exactly (no binary float rounding).
  String(r.revenue),
  r.currency,
  r.props,
  r.idempotency_key,
];

function writeInts(w: RowBinaryWriter, r: EventRow): void {
  w.ints(r.screen_width, r.screen_height, r.engagement_ms, r.scroll_depth);
}

/** Event rows as RowBinary (ROW_BINARY_COLUMNS order), and the span of their ts. */
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
    hw.texts(headValues(rows[0]));
    const head = hw.result();
    for (const r of rows) {
      w.bytes(head);
      w.texts(restTexts(r));
      writeInts(w, r);
    }
  } else {
    for (const r of rows) {
      w.texts(headValues(r).concat(restTexts(r)));
      writeInts(w, r);
    }
  }
  return { bytes: w.result(), tsRange: [minTs, maxTs] };
}

/** Where one row of a payload starts and ends, and its event id. */
export interface RowSpan {
  start: number;
  end: number;
  eventId: string;
}

const EVENT_ID_AT = ROW_BINARY_COLUMNS.indexOf('event_id');
const WIDTHS = ROW_BINARY_COLUMNS.map((c) => INT_BYTES[c] ?? 0);

/**
 * Reads a payload row by row: each row's span and event id, and with `values` all its values in
 * ROW_BINARY_COLUMNS order. Throws on bytes that are not whole rows.
 */
function readRows(payload: Buffer, values: boolean): { spans: RowSpan[]; rows: (string | number)[][] } {
  const spans: RowSpan[] = [];
  const rows: (string | number)[][] = [];
  let pos = 0;
  const need = (n: number) => {
    if (pos + n > payload.length) throw new Error('RowBinary payload ends inside a row');
  };
  while (pos < payload.length) {
    const start = pos;
    const row: (string | number)[] = [];
    let eventId = '';
    for (let c = 0; c < WIDTHS.length; c++) {
      const width = WIDTHS[c];
      if (width > 0) {
        need(width);
        if (values) row.push(payload.readUIntLE(pos, width));
        pos += width;
        continue;
      }
      let len = 0;
      for (let shift = 0; ; shift += 7) {
        need(1);
        const b = payload[pos++];
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      need(len);
      if (c === EVENT_ID_AT) eventId = payload.toString('utf8', pos, pos + len);
      if (values) row.push(c === EVENT_ID_AT ? eventId : payload.toString('utf8', pos, pos + len));
      pos += len;
    }
    spans.push({ start, end: pos, eventId });
    if (values) rows.push(row);
  }
  return { spans, rows };
}

/**
 * Where each row of a payload starts and ends, with its event id: for the worker's rare checks of a retried
 * job, not its hot path (the store reads the payload as it is). Throws on bytes that are not whole rows.
 */
export function eventRowSpans(payload: Buffer): RowSpan[] {
  return readRows(payload, false).spans;
}

/**
 * The event rows of a payload, every column, as encodeEventRows was given them (texts made well formed).
 * Throws on bytes that are not whole rows.
 */
export function decodeEventRows(payload: Buffer): EventRow[] {
  return readRows(payload, true).rows.map((values) => {
    const row: Record<string, string | number> = {};
    ROW_BINARY_COLUMNS.forEach((c, i) => {
      row[c] = values[i];
    });
    row.revenue = Number(row.revenue); // written as its decimal text
    // Every column is set, each String column a string and each integer column a number (EVENT_ROW_TYPES).
    return row as unknown as EventRow;
  });
}

/** The job of one request: its events as the payload, the side records in the data. */
export function packJob(
  websiteId: string,
  rows: readonly EventRow[],
  side: Pick<IngestJob, 'identities' | 'payments' | 'interactions' | 'errors' | 'replays'>,
): QueuedIngest {
  const { bytes, tsRange } = encodeEventRows(rows);
  return { data: { v: 5, websiteId, rows: rows.length, tsRange, ...side }, payload: bytes };
}

/** The rows of a payload whose spans (eventRowSpans) are kept (keep[i] for the i-th row), as one payload. */
export function keptRows(payload: Buffer, spans: readonly RowSpan[], keep: readonly boolean[]): Buffer {
  return Buffer.concat(spans.filter((_, i) => keep[i]).map((s) => payload.subarray(s.start, s.end)));
}

/** A job without some of its rows (keep[i] for the payload's i-th row), and without their side records. */
export function keepRows(job: QueuedIngest, keep: readonly boolean[]): QueuedIngest {
  const spans = eventRowSpans(job.payload);
  const dropped = new Set(spans.filter((_, i) => !keep[i]).map((s) => s.eventId));
  const notDropped = <T extends { event_id: string }>(records: T[]) => records.filter((r) => !dropped.has(r.event_id));
  return {
    // The ts span of all rows still covers the kept ones: the worker only bounds a lookup with it.
    data: {
      ...job.data,
      rows: spans.filter((_, i) => keep[i]).length,
      identities: notDropped(job.data.identities),
      payments: notDropped(job.data.payments),
    },
    payload: keptRows(job.payload, spans, keep),
  };
}
