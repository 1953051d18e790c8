// What an accepted event becomes: a row of the ClickHouse `events` table, plus, for identify and purchase,
// the PostgreSQL records. The same schemas check an ingest job when a worker picks it up.
import { z } from '../../zod';

const text = z.string();
const u16 = z.number().int().min(0).max(65535);

/**
 * One row of `events`; the keys are the table's columns (an explicit column list on insert). The first
 * JOB_HEAD_COLUMNS.length of them hold the same values for every event of one request, so a job's payload
 * encodes them once per request (lib/ingest/job/rowBinary.ts).
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

/**
 * The data of an ingest job, the contract between the web role that accepts a request and the worker that
 * stores it: one accepted request's events for one website. The event rows are not in the job data but in
 * the job's payload, a Redis string beside the job (lib/queue/ingest.ts) holding the rows as RowBinary in
 * ROW_BINARY_COLUMNS order, encoded and decoded only by lib/ingest/job/rowBinary.ts and sent to the store byte
 * for byte (BullMQ serialises job data as JSON: escaping and parsing the rows cost both roles more than
 * encoding them). `rows` counts the payload's rows; `tsRange` spans their ts (null without rows). The side
 * records travel in the data.
 *
 * `v` is 5, the number of the last of the layouts used while the project was unreleased: a job of any
 * other number is one of those and fails as malformed, never read as something it is not.
 */
export const ingestJobSchema = z.object({
  v: z.literal(5),
  websiteId: z.uuid(),
  rows: z.number().int().min(0),
  tsRange: z.tuple([z.string(), z.string()]).nullable(),
  identities: z.array(identityRecordSchema),
  payments: z.array(paymentRecordSchema),
  interactions: z.array(interactionRowSchema),
  errors: z.array(errorRowSchema),
  replays: z.array(replayRowSchema),
});
export type IngestJob = z.infer<typeof ingestJobSchema>;
/** What the web role enqueues: the job data and its payload (the event rows). */
export interface QueuedIngest {
  data: IngestJob;
  payload: Buffer;
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
