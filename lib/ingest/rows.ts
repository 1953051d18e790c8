// What an accepted event becomes: a row of the ClickHouse `events` table, plus, for identify and purchase,
// the PostgreSQL records. The same schemas check an ingest job when a worker picks it up.
import { z } from 'zod';

const text = z.string();
const u16 = z.number().int().min(0).max(65535);

/** One row of `events`; the keys are the table's columns (an explicit column list on insert). */
export const eventRowSchema = z.object({
  website_id: z.uuid(),
  event_id: z.uuid(),
  type: text,
  name: text,
  source: z.enum(['server', 'browser']),
  ts: text,
  received_at: text,
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
  ip_hash: text,
  engagement_ms: z.number().int().min(0),
  scroll_depth: z.number().int().min(0).max(100),
  revenue: z.number(),
  currency: text,
  props: text,
  idempotency_key: text,
  api_key_id: text,
  expire_at: text,
});
export type EventRow = z.infer<typeof eventRowSchema>;
export const EVENT_COLUMNS = Object.keys(eventRowSchema.shape) as (keyof EventRow)[];

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
 * The data of one ingest job: one accepted request's events for one website. Event rows travel as
 * JSONCompactEachRow text (values in EVENT_COLUMNS order), serialised once by the API: the worker neither parses nor re-serialises them on the
 * normal path (the benchmark showed JSON work dominating both roles). `eventIds` is aligned with the lines;
 * `keyed` names the lines that carry an idempotency key.
 */
export const ingestJobSchema = z.object({
  v: z.literal(2),
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
}).refine((j) => (j.eventsText === '' ? 0 : j.eventsText.split('\n').length) === j.eventIds.length, {
  message: 'eventsText lines and eventIds differ in number',
});
export type IngestJob = z.infer<typeof ingestJobSchema>;

/**
 * A row as a JSONCompactEachRow line: its values as a JSON array in EVENT_COLUMNS order. Measured against
 * JSON objects (full or with empty columns left out) it is both the fastest to build and the smallest,
 * which matters twice: the web role builds it, and Redis and the store carry it.
 */
function compactLine(row: EventRow): string {
  const values = new Array<unknown>(EVENT_COLUMNS.length);
  for (let i = 0; i < EVENT_COLUMNS.length; i++) {
    const value = row[EVENT_COLUMNS[i]];
    // ClickHouse refuses the escape JSON.stringify writes for a lone UTF-16 surrogate.
    values[i] = typeof value === 'string' ? value.toWellFormed() : value;
  }
  return JSON.stringify(values);
}

/** Serialises event rows into the job's text form, with explicit column order (EVENT_COLUMNS). */
export function packEvents(rows: EventRow[]): Pick<IngestJob, 'eventsText' | 'eventIds' | 'keyed' | 'tsRange'> {
  let minTs = '';
  let maxTs = '';
  const keyed: [number, string][] = [];
  rows.forEach((r, i) => {
    if (minTs === '' || r.ts < minTs) minTs = r.ts;
    if (r.ts > maxTs) maxTs = r.ts;
    if (r.idempotency_key) keyed.push([i, r.idempotency_key]);
  });
  return {
    eventsText: rows.map(compactLine).join('\n'),
    eventIds: rows.map((r) => r.event_id),
    keyed,
    tsRange: rows.length ? [minTs, maxTs] : null,
  };
}

/** ClickHouse DateTime64(3) text for a Unix-millisecond instant (UTC). */
export function chTime(instant: number): string {
  const ms = Math.floor(instant); // a JSON ts may carry a fraction of a millisecond
  // Events of a batch mostly share their second: format the second once, then only the milliseconds.
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }
  const millis = ms - second * 1000;
  return `${lastSecondText}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}`;
}
let lastSecond = Number.NaN;
let lastSecondText = '';

/** ClickHouse DateTime text (whole seconds, UTC). */
export function chSeconds(ms: number): string {
  return chTime(ms).slice(0, 19);
}
