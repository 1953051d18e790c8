// What an accepted event becomes: a row of the ClickHouse `events` table, plus, for identify and purchase,
// the PostgreSQL records. The same schemas check an ingest job when a worker picks it up.
import { z } from 'zod';

const text = z.string();
const u16 = z.number().int().min(0).max(65535);

/**
 * One row of `events`; the keys are the table's columns (an explicit column list on insert). The first
 * JOB_HEAD_COLUMNS.length of them hold the same values for every event of one request, so a job carries
 * them once (see ingestJobSchema).
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
/** The columns whose values a job carries once for all its lines: they come from the request, not the event. */
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

const jobFields = {
  websiteId: z.uuid(),
  eventsText: z.string(),
  eventIds: z.array(z.string()),
  keyed: z.array(z.tuple([z.number().int().min(0), z.string()])),
  tsRange: z.tuple([z.string(), z.string()]).nullable(),
  identities: z.array(identityRecordSchema),
  payments: z.array(paymentRecordSchema),
  interactions: z.array(interactionRowSchema),
  errors: z.array(errorRowSchema),
  replays: z.array(replayRowSchema),
};

/**
 * The data of one ingest job: one accepted request's events for one website. Event rows travel as
 * JSONCompactEachRow lines, serialised once by the API: the worker neither parses nor re-serialises them on
 * the normal path (the benchmark showed JSON work dominating both roles). `eventIds` is aligned with the
 * lines; `keyed` names the lines that carry an idempotency key.
 *
 * v3: `eventsHead` holds the JSON values of JOB_HEAD_COLUMNS, which every event of a request shares, and
 * each line only the other columns (a third of a row's bytes fewer to build, queue and parse); when the
 * events do not share them, `eventsHead` is null and the lines are whole rows. Either way in EVENT_COLUMNS
 * order. v2 (older jobs): whole rows in V2_EVENT_COLUMNS order.
 */
export const ingestJobSchema = z
  .discriminatedUnion('v', [
    z.object({ v: z.literal(2), ...jobFields }),
    z.object({ v: z.literal(3), eventsHead: z.string().nullable(), ...jobFields }),
  ])
  .refine((j) => lineCount(j.eventsText) === j.eventIds.length, {
    message: 'eventsText lines and eventIds differ in number',
  });
export type IngestJob = z.infer<typeof ingestJobSchema>;

/** Lines of a job's eventsText (0 when empty), counted without splitting a 1,000-line text. */
function lineCount(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Values as a JSONCompactEachRow line (a JSON array). Measured against JSON objects (full or with empty
 * columns left out) it is both the fastest to build and the smallest, which matters twice: the web role
 * builds it, and Redis and the store carry it.
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
const headValues = (r: EventRow): unknown[] => [r.website_id, r.source, r.received_at, r.ip_hash, r.api_key_id, r.expire_at];
const otherValues = (r: EventRow): unknown[] => [
  r.event_id, r.type, r.name, r.ts, r.session_id, r.visitor_id, r.url, r.hostname, r.pathname, r.referrer,
  r.referrer_domain, r.source_name, r.utm_source, r.utm_medium, r.utm_campaign, r.utm_content, r.utm_term,
  r.device_type, r.browser, r.browser_version, r.os, r.os_version, r.country_code, r.region, r.city,
  r.screen_width, r.screen_height, r.language, r.engagement_ms, r.scroll_depth, r.revenue, r.currency, r.props,
  r.idempotency_key,
];

/** The values of a row in EVENT_COLUMNS order. */
export function rowValues(r: EventRow): unknown[] {
  return headValues(r).concat(otherValues(r));
}

function sameHead(a: EventRow, b: EventRow): boolean {
  return (
    a.website_id === b.website_id && a.source === b.source && a.received_at === b.received_at &&
    a.ip_hash === b.ip_hash && a.api_key_id === b.api_key_id && a.expire_at === b.expire_at
  );
}

/** Serialises event rows into a v3 job's text form: the shared head once, the rest per line. */
export function packJobEvents(rows: EventRow[]): { v: 3; eventsHead: string | null } & Pick<IngestJob, 'eventsText' | 'eventIds' | 'keyed' | 'tsRange'> {
  let minTs = '';
  let maxTs = '';
  let shared = true;
  const keyed: [number, string][] = [];
  const lines: string[] = new Array(rows.length);
  const eventIds: string[] = new Array(rows.length);
  rows.forEach((r, i) => {
    if (minTs === '' || r.ts < minTs) minTs = r.ts;
    if (r.ts > maxTs) maxTs = r.ts;
    if (r.idempotency_key) keyed.push([i, r.idempotency_key]);
    if (!sameHead(r, rows[0])) shared = false;
    eventIds[i] = r.event_id;
  });
  if (shared) for (let i = 0; i < rows.length; i++) lines[i] = jsonLine(otherValues(rows[i]));
  else for (let i = 0; i < rows.length; i++) lines[i] = jsonLine(rowValues(rows[i]));
  return {
    v: 3,
    eventsHead: shared && rows.length > 0 ? jsonLine(headValues(rows[0])).slice(1, -1) : null,
    eventsText: lines.join('\n'),
    eventIds,
    keyed,
    tsRange: rows.length ? [minTs, maxTs] : null,
  };
}

/** A v3 job's lines as whole rows (EVENT_COLUMNS order): the head put back in front of every line. */
export function wholeLines(eventsHead: string | null, eventsText: string): string {
  if (eventsHead === null || eventsText === '') return eventsText;
  // Every line is a JSON array; a raw newline only ever separates lines (JSON escapes it inside strings).
  return `[${eventsHead},${eventsText.slice(1).replaceAll('\n[', `\n[${eventsHead},`)}`;
}

/** Serialises event rows as whole JSONCompactEachRow lines in EVENT_COLUMNS order (for direct inserts). */
export function packEvents(rows: EventRow[]): Pick<IngestJob, 'eventsText' | 'eventIds' | 'keyed' | 'tsRange'> {
  const { eventsHead, eventsText, ...rest } = packJobEvents(rows);
  return { eventsText: wholeLines(eventsHead, eventsText), ...rest };
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
