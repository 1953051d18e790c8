// Read helpers for where accepted events appear (spec "Where accepted events appear"): pages, custom events,
// goals, revenue and its attribution, identified users, the visitor profile and real-time pageviews.
//
// Every ClickHouse value is a bound parameter; identifiers are fixed in the SQL text. Ranges are half-open
// [from, to) on the event's `ts` (payments: `occurred_at`, which is the purchase event's ts).
// visitors = uniq(visitor_id) over non-empty ids (DESIGN §3: exact below 65,536 distinct, ~2 % above);
// `event` and `purchase` events may come without a visitorId and are not a visitor.
import { paymentRecordSchema } from '../ingest/rows';
import { z } from 'zod';
import type { Pool } from 'pg';
import { selectRows, type ClickHouseClient } from '../clickhouse/client';
import { DIRECT } from '../ingest/source';
import { checkInt } from '../checks';
import { isoFromMs } from './time';

export interface TimeRange {
  from: Date;
  to: Date;
}

/** How far back a purchase looks for the session that brought the visitor (see revenueSummary). */
export const ATTRIBUTION_LOOKBACK_DAYS = 30;
const MAX_LIMIT = 10_000;
const T = "DateTime64(3, 'UTC')";
const IN_RANGE = `website_id = {website:UUID} AND ts >= {from:${T}} AND ts < {to:${T}}`;

// ---- return shapes -------------------------------------------------------------------------------------

const count = z.number().int();
export const pageViewsRowSchema = z.object({ path: z.string(), views: count, visitors: count });
export const customEventRowSchema = z.object({ name: z.string(), count, visitors: count });
export const goalCompletionRowSchema = z.object({ name: z.string(), completions: count, visitors: count, value: z.number() });
export const revenueSummarySchema = z.object({
  by_currency: z.array(z.object({ currency: z.string(), amount: z.number(), purchases: count })),
  by_source: z.array(z.object({ source: z.string(), currency: z.string(), amount: z.number(), purchases: count })),
});
export const identifiedUserSchema = z.object({
  visitor_id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  customer_id: z.string().nullable(),
  phone: z.string().nullable(),
  company: z.string().nullable(),
  attributes: z.record(z.string(), z.unknown()),
  first_seen_at: z.string(),
  last_seen_at: z.string(),
});
export const identifiedUsersPageSchema = z.object({ users: z.array(identifiedUserSchema), total: count });
/** A visitor's payment as the profile shows it: the stored record without the keys the profile already names. */
export const visitorPaymentSchema = paymentRecordSchema.pick({
  event_id: true,
  session_id: true,
  amount: true,
  currency: true,
  payment_provider: true,
  status: true,
  provider_event_id: true,
  customer_email: true,
  plan_name: true,
  occurred_at: true,
});
export const timelineEventSchema = z.object({
  event_id: z.string(),
  type: z.string(),
  name: z.string(),
  ts: z.string(),
  url: z.string(),
  /** Lets the dashboard group the timeline into sessions. */
  session_id: z.string(),
  props: z.record(z.string(), z.unknown()),
});
export const visitorProfileSchema = z.object({
  visitor_id: z.string(),
  identity: identifiedUserSchema.nullable(),
  payments: z.array(visitorPaymentSchema),
  timeline: z.array(timelineEventSchema),
});
export const realtimePageviewsSchema = z.object({
  pageviews: count,
  visitors: count,
  top_pages: z.array(z.object({ path: z.string(), views: count })),
});
export type PageViewsRow = z.infer<typeof pageViewsRowSchema>;
export type CustomEventRow = z.infer<typeof customEventRowSchema>;
export type GoalCompletionRow = z.infer<typeof goalCompletionRowSchema>;
export type RevenueSummary = z.infer<typeof revenueSummarySchema>;
export type IdentifiedUser = z.infer<typeof identifiedUserSchema>;
export type IdentifiedUsersPage = z.infer<typeof identifiedUsersPageSchema>;
export type VisitorPayment = z.infer<typeof visitorPaymentSchema>;
export type TimelineEvent = z.infer<typeof timelineEventSchema>;
export type VisitorProfile = z.infer<typeof visitorProfileSchema>;
export type RealtimePageviews = z.infer<typeof realtimePageviewsSchema>;

// ---- plumbing ------------------------------------------------------------------------------------------


function checkRange(range: TimeRange): TimeRange {
  for (const d of [range.from, range.to]) if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new RangeError('range needs valid dates');
  return range;
}

function rangeParams(websiteId: string, range: TimeRange): Record<string, unknown> {
  checkRange(range);
  return { website: websiteId, from: range.from, to: range.to };
}

const checkLimit = (limit: number, name = 'limit', min = 1): number => checkInt(limit, name, min, MAX_LIMIT);

const iso = (d: Date): string => d.toISOString();

/** The props column is JSON text written by the worker; anything else reads as no props. */
function parseProps(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

// ---- pages, custom events, goals -----------------------------------------------------------------------

export async function pagesViewed(clickhouse: ClickHouseClient, websiteId: string, range: TimeRange, limit: number): Promise<PageViewsRow[]> {
  const rows = await selectRows<{ path: string; views: string; visitors: string }>(
    clickhouse,
    `SELECT pathname AS path, count() AS views, uniqIf(visitor_id, visitor_id != '') AS visitors
     FROM events WHERE ${IN_RANGE} AND type = 'pageview'
     GROUP BY pathname ORDER BY views DESC, path ASC LIMIT {limit:UInt32}`,
    { ...rangeParams(websiteId, range), limit: checkLimit(limit) },
  );
  return rows.map((r) => ({ path: r.path, views: Number(r.views), visitors: Number(r.visitors) }));
}

export async function customEvents(clickhouse: ClickHouseClient, websiteId: string, range: TimeRange, limit: number): Promise<CustomEventRow[]> {
  const rows = await selectRows<{ name: string; count: string; visitors: string }>(
    clickhouse,
    `SELECT name, count() AS count, uniqIf(visitor_id, visitor_id != '') AS visitors
     FROM events WHERE ${IN_RANGE} AND type = 'event'
     GROUP BY name ORDER BY count DESC, name ASC LIMIT {limit:UInt32}`,
    { ...rangeParams(websiteId, range), limit: checkLimit(limit) },
  );
  return rows.map((r) => ({ name: r.name, count: Number(r.count), visitors: Number(r.visitors) }));
}

/** Goals with at least one completion in the range; value = sum of the goal values (the `revenue` column). */
export async function goalCompletions(clickhouse: ClickHouseClient, websiteId: string, range: TimeRange): Promise<GoalCompletionRow[]> {
  const rows = await selectRows<{ name: string; completions: string; visitors: string; value: number }>(
    clickhouse,
    `SELECT name, count() AS completions, uniqIf(visitor_id, visitor_id != '') AS visitors, toFloat64(sum(revenue)) AS value
     FROM events WHERE ${IN_RANGE} AND type = 'goal'
     GROUP BY name ORDER BY completions DESC, name ASC`,
    rangeParams(websiteId, range),
  );
  return rows.map((r) => ({ name: r.name, completions: Number(r.completions), visitors: Number(r.visitors), value: Number(r.value) }));
}

// ---- revenue -------------------------------------------------------------------------------------------

/**
 * Attribution rule (last touch): a purchase is credited to the source of the paying visitor's most recent
 * session with a pageview on this website that started at or before the purchase, at most
 * ATTRIBUTION_LOOKBACK_DAYS earlier. A session starts at its first pageview and its source is that
 * pageview's source_name. A purchase with no visitor id or no such session is `Direct / None`.
 * Returns purchase event id → source for purchases in the range that found a session.
 */
async function attributedSources(clickhouse: ClickHouseClient, websiteId: string, range: TimeRange): Promise<Map<string, string>> {
  // Read from `events`, not `sessions`: the sessions table keeps any() pageview's source_name, not the first.
  const rows = await selectRows<{ event_id: string; source: string }>(
    clickhouse,
    `WITH purchases AS (
       SELECT event_id, visitor_id, ts FROM events
       WHERE ${IN_RANGE} AND type = 'purchase' AND visitor_id != ''
     ),
     visits AS (
       SELECT visitor_id, min(ts) AS start_ts, argMin(source_name, ts) AS source_name
       FROM events
       WHERE website_id = {website:UUID} AND type = 'pageview'
         AND ts >= {lookback:${T}} AND ts < {to:${T}}
         AND visitor_id IN (SELECT visitor_id FROM purchases)
       GROUP BY visitor_id, session_id
     )
     SELECT toString(p.event_id) AS event_id, v.source_name AS source
     FROM purchases AS p
     ASOF INNER JOIN visits AS v ON p.visitor_id = v.visitor_id AND p.ts >= v.start_ts
     WHERE v.start_ts >= p.ts - INTERVAL ${ATTRIBUTION_LOOKBACK_DAYS} DAY`,
    { ...rangeParams(websiteId, range), lookback: new Date(range.from.getTime() - ATTRIBUTION_LOOKBACK_DAYS * 86_400_000) },
  );
  return new Map(rows.filter((r) => r.source !== '').map((r) => [r.event_id, r.source]));
}

/**
 * Succeeded payments in the range (PostgreSQL is the system of record for amounts), by currency and by
 * attributed source. Amounts are summed per currency, never across. Order (byte order, like ClickHouse): by_currency by currency;
 * by_source by currency, then amount descending, then source.
 */
export async function revenueSummary(clickhouse: ClickHouseClient, pool: Pool, websiteId: string, range: TimeRange): Promise<RevenueSummary> {
  checkRange(range);
  const succeeded = `p.website_id = $1 AND p.status = 'succeeded' AND p.occurred_at >= $2 AND p.occurred_at < $3`;
  const window = [websiteId, iso(range.from), iso(range.to)];
  const byCurrency = pool.query<{ currency: string; amount: string; purchases: number }>(
    `SELECT p.currency, sum(p.amount)::text AS amount, count(*)::int AS purchases
     FROM payments p WHERE ${succeeded} GROUP BY p.currency ORDER BY p.currency`,
    window,
  );
  const bySource = attributedSources(clickhouse, websiteId, range).then((sources) =>
    // The attribution map joins in PostgreSQL so that numeric sums stay exact.
    pool.query<{ source: string; currency: string; amount: string; purchases: number }>(
      `WITH attr AS (SELECT * FROM unnest($4::uuid[], $5::text[]) AS a(event_id, source))
       SELECT COALESCE(a.source, $6) AS source, p.currency, sum(p.amount)::text AS amount, count(*)::int AS purchases
       FROM payments p LEFT JOIN attr a ON a.event_id = p.event_id
       WHERE ${succeeded}
       GROUP BY 1, 2 ORDER BY p.currency, sum(p.amount) DESC, COALESCE(a.source, $6) COLLATE "C"`,
      [...window, [...sources.keys()], [...sources.values()], DIRECT],
    ),
  );
  const [currencies, sources] = await Promise.all([byCurrency, bySource]);
  const totals = (r: { currency: string; amount: string; purchases: number }) => ({ currency: r.currency, amount: Number(r.amount), purchases: r.purchases });
  return {
    by_currency: currencies.rows.map(totals),
    by_source: sources.rows.map((r) => ({ source: r.source, ...totals(r) })),
  };
}

// ---- identified users and the visitor profile ----------------------------------------------------------

interface IdentityDbRow {
  visitor_id: string;
  email: string | null;
  name: string | null;
  customer_id: string | null;
  phone: string | null;
  company: string | null;
  attributes: Record<string, unknown>;
  first_seen_at: Date;
  last_seen_at: Date;
}

const IDENTITY_COLUMNS = 'visitor_id, email, name, customer_id, phone, company, attributes, first_seen_at, last_seen_at';

const identityView = (r: IdentityDbRow): IdentifiedUser => ({ ...r, first_seen_at: iso(r.first_seen_at), last_seen_at: iso(r.last_seen_at) });

export async function identifiedUsers(pool: Pool, websiteId: string, page: { limit: number; offset: number }): Promise<IdentifiedUsersPage> {
  const limit = checkLimit(page.limit);
  const offset = checkLimit(page.offset, 'offset', 0);
  const [list, total] = await Promise.all([
    pool.query<IdentityDbRow>(
      `SELECT ${IDENTITY_COLUMNS} FROM identified_users WHERE website_id = $1
       ORDER BY last_seen_at DESC, visitor_id ASC LIMIT $2 OFFSET $3`,
      [websiteId, limit, offset],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM identified_users WHERE website_id = $1', [websiteId]),
  ]);
  return { users: list.rows.map(identityView), total: total.rows[0].n };
}

interface PaymentDbRow extends Omit<VisitorPayment, 'amount' | 'occurred_at'> {
  amount: string;
  occurred_at: Date;
}

/**
 * Everything known about one visitor of a website: identity, payments (newest first) and the event timeline
 * (newest first). `limit` caps payments and timeline separately. The timeline scans the website's retained
 * history (visitor_id follows type and day in the sort key).
 */
export async function visitorProfile(
  clickhouse: ClickHouseClient,
  pool: Pool,
  websiteId: string,
  visitorId: string,
  opts: { limit?: number } = {},
): Promise<VisitorProfile> {
  const limit = checkLimit(opts.limit ?? 100);
  const [identity, payments, events] = await Promise.all([
    pool.query<IdentityDbRow>(`SELECT ${IDENTITY_COLUMNS} FROM identified_users WHERE website_id = $1 AND visitor_id = $2`, [websiteId, visitorId]),
    pool.query<PaymentDbRow>(
      `SELECT event_id, session_id, amount::text AS amount, currency, payment_provider, status, provider_event_id,
              customer_email, plan_name, occurred_at
       FROM payments WHERE website_id = $1 AND visitor_id = $2
       ORDER BY occurred_at DESC, event_id ASC LIMIT $3`,
      [websiteId, visitorId, limit],
    ),
    selectRows<{ event_id: string; type: string; name: string; ts_ms: string; url: string; session_id: string; props: string }>(
      clickhouse,
      `SELECT toString(event_id) AS event_id, type, name, toUnixTimestamp64Milli(ts) AS ts_ms, url, session_id, props
       FROM events WHERE website_id = {website:UUID} AND visitor_id = {visitor:String}
       ORDER BY ts DESC, received_at DESC, event_id ASC LIMIT {limit:UInt32}`,
      { website: websiteId, visitor: visitorId, limit },
    ),
  ]);
  return {
    visitor_id: visitorId,
    identity: identity.rows[0] ? identityView(identity.rows[0]) : null,
    payments: payments.rows.map((p) => ({ ...p, amount: Number(p.amount), occurred_at: iso(p.occurred_at) })),
    timeline: events.map(({ ts_ms, props, ...e }) => ({ ...e, ts: isoFromMs(ts_ms), props: parseProps(props) })),
  };
}

// ---- real time -----------------------------------------------------------------------------------------

export const REALTIME_TOP_PAGES = 10;

/** Pageviews with ts in [now − sinceMinutes, now). */
export async function realtimePageviews(
  clickhouse: ClickHouseClient,
  websiteId: string,
  sinceMinutes = 30,
  now: Date = new Date(),
): Promise<RealtimePageviews> {
  const minutes = checkLimit(sinceMinutes, 'sinceMinutes');
  const params = rangeParams(websiteId, { from: new Date(now.getTime() - minutes * 60_000), to: now });
  const where = `${IN_RANGE} AND type = 'pageview'`;
  const [totals, pages] = await Promise.all([
    selectRows<{ pageviews: string; visitors: string }>(
      clickhouse,
      `SELECT count() AS pageviews, uniqIf(visitor_id, visitor_id != '') AS visitors FROM events WHERE ${where}`,
      params,
    ),
    selectRows<{ path: string; views: string }>(
      clickhouse,
      `SELECT pathname AS path, count() AS views FROM events WHERE ${where}
       GROUP BY pathname ORDER BY views DESC, path ASC LIMIT ${REALTIME_TOP_PAGES}`,
      params,
    ),
  ]);
  return {
    pageviews: Number(totals[0]?.pageviews ?? 0),
    visitors: Number(totals[0]?.visitors ?? 0),
    top_pages: pages.map((r) => ({ path: r.path, views: Number(r.views) })),
  };
}
