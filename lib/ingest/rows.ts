// What an accepted event becomes: a row of the ClickHouse `events` table, plus, for identify and purchase,
// the PostgreSQL records. The same schemas check an ingest job when a worker picks it up.
import { z } from 'zod';

const text = z.string();
const u16 = z.number().int().min(0).max(65535);

/**
 * One row of `events`; the keys are the table's columns (an explicit column list on insert). The first
 * JOB_HEAD_COLUMNS.length of them hold the same values for every event of one request, so they are
 * serialised once per request (eventLines).
 */
export const eventRowSchema = z.object({
  website_id: z.uuid(),
  source: z.enum(['server', 'browser']),
  received_at: text,
  ip_hash: text,
  api_key_id: text,
  expire_at: text,
  event_id: z.uuid(),
  type: text,
  name: text,
  ts: text,
  session_id: text,
  visitor_id: text,
  url: text,
  hostname: text,
  pathname: text,
  referrer: text,
  referrer_domain: text,
  source_name: text,
  utm_source: text,
  utm_medium: text,
  utm_campaign: text,
  utm_content: text,
  utm_term: text,
  device_type: text,
  browser: text,
  browser_version: text,
  os: text,
  os_version: text,
  country_code: text,
  region: text,
  city: text,
  screen_width: u16,
  screen_height: u16,
  language: text,
  engagement_ms: z.number().int().min(0),
  scroll_depth: z.number().int().min(0).max(100),
  revenue: z.number(),
  currency: text,
  props: text,
  idempotency_key: text,
});
export type EventRow = z.infer<typeof eventRowSchema>;
export const EVENT_COLUMNS = Object.keys(eventRowSchema.shape) as (keyof EventRow)[];
/** The columns whose values come from the request, not the event: the same on every line of a request. */
export const JOB_HEAD_COLUMNS = EVENT_COLUMNS.slice(0, 6);
/**
 * The column order of v2 jobs' lines, from before the request's columns moved to the front. Such jobs may
 * still wait in a queue, or among failed jobs an operator retries later, so the worker still reads them.
 */
export const V2_EVENT_COLUMNS = [
  'website_id', 'event_id', 'type', 'name', 'source', 'ts', 'received_at', 'session_id', 'visitor_id', 'url',
  'hostname', 'pathname', 'referrer', 'referrer_domain', 'source_name', 'utm_source', 'utm_medium', 'utm_campaign',
  'utm_content', 'utm_term', 'device_type', 'browser', 'browser_version', 'os', 'os_version', 'country_code',
  'region', 'city', 'screen_width', 'screen_height', 'language', 'ip_hash', 'engagement_ms', 'scroll_depth',
  'revenue', 'currency', 'props', 'idempotency_key', 'api_key_id', 'expire_at',
] as const satisfies readonly (keyof EventRow)[];

export const identityRecordSchema = z.object({
  event_id: z.uuid(),
  website_id: z.uuid(),
  visitor_id: z.string().min(1),
  email: z.string().nullable(),
  name: z.string().nullable(),
  customer_id: z.string().nullable(),
  phone: z.string().nullable(),
  company: z.string().nullable(),
  attributes: z.record(z.string(), z.unknown()),
  seen_at: z.string(),
});
export type IdentityRecord = z.infer<typeof identityRecordSchema>;

export const paymentRecordSchema = z.object({
  event_id: z.uuid(),
  website_id: z.uuid(),
  visitor_id: z.string().nullable(),
  session_id: z.string().nullable(),
  amount: z.number(),
  currency: z.string(),
  payment_provider: z.string(),
  status: z.string(),
  provider_event_id: z.string().nullable(),
  customer_email: z.string().nullable(),
  plan_name: z.string().nullable(),
  props: z.record(z.string(), z.unknown()),
  source: z.enum(['server', 'browser']),
  occurred_at: z.string(),
});
export type PaymentRecord = z.infer<typeof paymentRecordSchema>;

/** Columns every browser-only table shares. */
const browserRowBase = {
  website_id: z.uuid(),
  ts: text,
  session_id: text,
  visitor_id: text,
  pathname: text,
  expire_at: text,
};

/** A heatmap click (browser `click` events); the same event is also a row of `events`. */
export const interactionRowSchema = z.object({
  ...browserRowBase,
  event_id: z.uuid(),
  x: z.number().int().min(0),
  y: z.number().int().min(0),
  viewport_width: u16,
  viewport_height: u16,
  page_height: z.number().int().min(0),
  selector: text,
  device_type: text,
});
export type InteractionRow = z.infer<typeof interactionRowSchema>;

/** A JavaScript error occurrence (browser `error` events). */
export const errorRowSchema = z.object({
  ...browserRowBase,
  event_id: z.uuid(),
  fingerprint: text,
  error_type: text,
  message: text,
  stack: text,
  browser: text,
  os: text,
  device_type: text,
});
export type ErrorRow = z.infer<typeof errorRowSchema>;

/** One chunk of a session recording (rrweb events as JSON text). */
export const replayRowSchema = z.object({
  ...browserRowBase,
  seq: z.number().int().min(0),
  data: text,
});
export type ReplayRow = z.infer<typeof replayRowSchema>;

const sideFields = {
  websiteId: z.uuid(),
  identities: z.array(identityRecordSchema),
  payments: z.array(paymentRecordSchema),
  interactions: z.array(interactionRowSchema),
  errors: z.array(errorRowSchema),
  replays: z.array(replayRowSchema),
};
const tsRange = z.tuple([z.string(), z.string()]).nullable();
// Jobs of v2 and v3 carried their event lines inside the job data.
const inlineFields = {
  ...sideFields,
  eventsText: z.string(),
  eventIds: z.array(z.string()),
  keyed: z.array(z.tuple([z.number().int().min(0), z.string()])),
  tsRange,
};

/**
 * The data of one ingest job: one accepted request's events for one website.
 *
 * v5 (written now): the event rows are not in the job data but in the job's payload, a Redis string
 * beside the job (lib/queue/ingest.ts) holding the rows as RowBinary in ROW_BINARY_COLUMNS order
 * (lib/ingest/rowBinary.ts), built once by the API and sent to the store byte for byte. BullMQ serialises job
 * data as JSON: escaping half a megabyte of rows per 1,000 events into a JSON string and parsing it back cost
 * the web role and the worker ~3 µs per event each (profiled). `rows` counts the payload's rows.
 *
 * Older jobs may still wait in a queue, or among failed jobs an operator retries later, so the worker still
 * reads them: v4 was v5 with whole JSONCompactEachRow lines as the payload; v3 held the lines in `eventsText`, with `eventsHead` the JSON values of JOB_HEAD_COLUMNS that
 * every event of a request shares, each line only the other columns (or null and whole lines); v2 whole
 * lines in V2_EVENT_COLUMNS order. Both name their lines' event ids (`eventIds`) and idempotency keys
 * (`keyed`, by line).
 */
export const ingestJobSchema = z
  .discriminatedUnion('v', [
    z.object({ v: z.literal(2), ...inlineFields }),
    z.object({ v: z.literal(3), eventsHead: z.string().nullable(), ...inlineFields }),
    z.object({ v: z.literal(4), ...sideFields, rows: z.number().int().min(0), tsRange }),
    z.object({ v: z.literal(5), ...sideFields, rows: z.number().int().min(0), tsRange }),
  ])
  .refine((j) => !('eventsText' in j) || lineCount(j.eventsText) === j.eventIds.length, {
    message: 'eventsText lines and eventIds differ in number',
  });
export type IngestJob = z.infer<typeof ingestJobSchema>;
/** A job as written now. */
export type IngestJobV5 = Extract<IngestJob, { v: 5 }>;
/** What the API enqueues: the job data and its payload (the event rows). */
export interface QueuedIngest {
  data: IngestJobV5;
  payload: Buffer;
}

/** Lines of a job's eventsText (0 when empty), counted without splitting a 1,000-line text. */
function lineCount(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Values as a JSONCompactEachRow line (a JSON array): the payload of v4 jobs, and what fixtures and tools
 * insert directly. Jobs written now carry RowBinary (lib/ingest/rowBinary.ts).
 */
function jsonLine(values: unknown[]): string {
  const line = JSON.stringify(values);
  // ClickHouse refuses the escape JSON.stringify writes for a lone UTF-16 surrogate. Such an escape is a
  // backslash and "u" in the line, which rows almost never hold (a control character or a literal backslash
  // followed by "u" are the only other ways): only then are the strings made well formed, as before.
  // Checking every string instead cost more than the line itself.
  return line.includes('\\u') ? JSON.stringify(values.map((v) => (typeof v === 'string' ? v.toWellFormed() : v))) : line;
}

// The values of a row, spelled out in EVENT_COLUMNS order: reading each property by name is ~1.5× faster
// than looking the names up in a loop (one object shape instead of 40 keyed lookups). A unit test checks
// the order against EVENT_COLUMNS.
/** The request's columns of a row (JOB_HEAD_COLUMNS order), the same for every event of one request. */
export const headValues = (r: EventRow): string[] => [r.website_id, r.source, r.received_at, r.ip_hash, r.api_key_id, r.expire_at];
const otherValues = (r: EventRow): unknown[] => [
  r.event_id, r.type, r.name, r.ts, r.session_id, r.visitor_id, r.url, r.hostname, r.pathname, r.referrer,
  r.referrer_domain, r.source_name, r.utm_source, r.utm_medium, r.utm_campaign, r.utm_content, r.utm_term,
  r.device_type, r.browser, r.browser_version, r.os, r.os_version, r.country_code, r.region, r.city,
  r.screen_width, r.screen_height, r.language, r.engagement_ms, r.scroll_depth, r.revenue, r.currency, r.props,
  r.idempotency_key,
];

/** The values of a row in EVENT_COLUMNS order. */
export function rowValues(r: EventRow): unknown[] {
  return (headValues(r) as unknown[]).concat(otherValues(r));
}

/** Whether two rows hold the same request columns (JOB_HEAD_COLUMNS), which a payload then encodes once. */
export function sameHead(a: EventRow, b: EventRow): boolean {
  return (
    a.website_id === b.website_id && a.source === b.source && a.received_at === b.received_at &&
    a.ip_hash === b.ip_hash && a.api_key_id === b.api_key_id && a.expire_at === b.expire_at
  );
}

/** Whole JSONCompactEachRow lines (EVENT_COLUMNS order) of event rows, and the span of their ts. */
export function eventLines(rows: readonly EventRow[]): { text: string; tsRange: [string, string] | null } {
  let minTs = '';
  let maxTs = '';
  let shared = true;
  for (const r of rows) {
    if (minTs === '' || r.ts < minTs) minTs = r.ts;
    if (r.ts > maxTs) maxTs = r.ts;
    if (shared && !sameHead(r, rows[0])) shared = false;
  }
  const lines: string[] = new Array(rows.length);
  if (shared && rows.length > 0) {
    // The request's columns hold the same values on every line: serialised once, put in front of each.
    const head = `${jsonLine(headValues(rows[0])).slice(0, -1)},`;
    for (let i = 0; i < rows.length; i++) lines[i] = head + jsonLine(otherValues(rows[i])).slice(1);
  } else {
    for (let i = 0; i < rows.length; i++) lines[i] = jsonLine(rowValues(rows[i]));
  }
  return { text: lines.join('\n'), tsRange: rows.length > 0 ? [minTs, maxTs] : null };
}

/** A v3 job's lines as whole rows (EVENT_COLUMNS order): the head put back in front of every line. */
export function wholeLines(eventsHead: string | null, eventsText: string): string {
  if (eventsHead === null || eventsText === '') return eventsText;
  // Every line is a JSON array; a raw newline only ever separates lines (JSON escapes it inside strings).
  return `[${eventsHead},${eventsText.slice(1).replaceAll('\n[', `\n[${eventsHead},`)}`;
}

/** Event rows as whole JSONCompactEachRow lines with their ids (for direct inserts: fixtures, tools). */
export function packEvents(rows: EventRow[]): { eventsText: string; eventIds: string[]; tsRange: [string, string] | null } {
  const { text, tsRange } = eventLines(rows);
  return { eventsText: text, eventIds: rows.map((r) => r.event_id), tsRange };
}

/** The event id of each whole line (EVENT_COLUMNS order): for the writer's rare checks, not its hot path. */
export function lineEventIds(lines: readonly string[]): string[] {
  const at = EVENT_COLUMNS.indexOf('event_id');
  return lines.map((line) => String((JSON.parse(line) as unknown[])[at]));
}

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
let lastDay = Number.NaN;
let lastDayText = '';

/** ClickHouse DateTime64(3) text for a Unix-millisecond instant (UTC). */
export function chTime(instant: number): string {
  const ms = Math.floor(instant); // a JSON ts may carry a fraction of a millisecond
  // Events of a batch span minutes of one or two days: the date is formatted once per day, the time of day
  // with integer arithmetic and lookup tables (a Date per event was most of this function's cost).
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 11).replace('T', ' ');
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${lastDayText}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}`;
}
/** ClickHouse DateTime text (whole seconds, UTC). */
export function chSeconds(ms: number): string {
  return chTime(ms).slice(0, 19);
}
