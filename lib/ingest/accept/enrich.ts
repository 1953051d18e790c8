// Turns a validated server event into its stored rows: ids, times, the hashed IP, what serverContext tells of
// the client; props given by the sender win over it (DESIGN §3). Page columns come from page.ts, the row from
// eventRow.ts, as for browser events.
import { createHash, randomUUID } from 'node:crypto';
import { chTime, type EventRow, type IdentityRecord, type PaymentRecord } from '../job/rows';
import type { GeoFields, UaFields } from './enrichers';
import { assembleEventRow, type ClientColumns, NO_CLIENT, type RowHead } from './eventRow';
import { NO_PAGE, type PageSite, pageColumns } from './page';
import { IDENTITY_FIELDS, type PageviewProps } from './serverSchemas';
import type { ValidEvent } from './validate';

export interface RequestContext {
  /** The request's columns of every row, formatted once per request. */
  head: RowHead;
  /** The website's domain and this request's page memo. */
  site: PageSite;
  /** What serverContext tells of the client (geo, user agent, language): a pageview's props win over it. */
  client: ClientColumns;
}

/** One spelling per address: an IPv4-mapped IPv6 address (::ffff:1.2.3.4) is its IPv4 address. */
export function normalizeIp(ip: string | undefined): string | undefined {
  const trimmed = ip?.trim().toLowerCase();
  if (!trimmed) return undefined;
  return /^::ffff:\d{1,3}(\.\d{1,3}){3}$/.test(trimmed) ? trimmed.slice(7) : trimmed;
}

/** sha256(daily_salt ‖ website_id ‖ ip), hex; `unknown` when there is no address (spec rule 5). */
export function hashIp(salt: string, websiteId: string, ip: string | undefined): string {
  if (!ip) return 'unknown';
  return createHash('sha256').update(salt).update(websiteId).update(ip).digest('hex');
}

/** First language tag of an Accept-Language header, e.g. "de-DE". */
export function primaryLanguage(acceptLanguage: string | undefined): string {
  const tag = acceptLanguage?.split(',')[0]?.split(';')[0]?.trim() ?? '';
  return /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag) ? tag : '';
}

/** The client columns the request's serverContext gives (a pageview's props may override them). */
export function serverClient(ua: UaFields | undefined, geo: GeoFields | undefined, language: string): ClientColumns {
  return {
    device_type: ua?.device_type ?? '',
    browser: ua?.browser ?? '',
    browser_version: ua?.browser_version ?? '',
    os: ua?.os ?? '',
    os_version: ua?.os_version ?? '',
    country_code: geo?.country_code ?? '',
    region: geo?.region ?? '',
    city: geo?.city ?? '',
    screen_width: 0,
    screen_height: 0,
    language,
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A pageview's client columns: what its props give wins; a browser or OS given without a version, or a
 * country without a region, leaves the request's version or region out (they would describe another client).
 */
function pageviewClient(page: PageviewProps, request: ClientColumns): ClientColumns {
  if (
    page.device_type === undefined &&
    page.browser === undefined &&
    page.os === undefined &&
    page.country_code === undefined &&
    page.city === undefined &&
    page.screen_width === undefined &&
    page.screen_height === undefined &&
    page.language === undefined
  ) {
    return request;
  }
  return {
    device_type: str(page.device_type) || request.device_type,
    browser: str(page.browser) || request.browser,
    browser_version: page.browser ? '' : request.browser_version,
    os: str(page.os) || request.os,
    os_version: page.os ? '' : request.os_version,
    country_code: page.country_code?.toUpperCase() || request.country_code,
    region: page.country_code ? '' : request.region,
    city: str(page.city) || (page.country_code ? '' : request.city),
    screen_width: page.screen_width ?? 0,
    screen_height: page.screen_height ?? 0,
    language: str(page.language) || request.language,
  };
}

export function buildEventRow(event: ValidEvent, ctx: RequestContext): EventRow {
  const p = event.props;
  const page = event.type === 'pageview' ? (p as PageviewProps) : undefined;
  const row = assembleEventRow(
    ctx.head,
    page ? pageColumns(ctx.site, page.url, page.referrer ?? '', true, page) : NO_PAGE,
    page ? pageviewClient(page, ctx.client) : NO_CLIENT,
  );
  row.event_id = randomUUID();
  row.type = event.type;
  row.name = event.type === 'event' || event.type === 'goal' ? str(p.name) : '';
  row.ts = chTime(event.ts);
  row.session_id = event.sessionId;
  row.visitor_id = event.visitorId;
  row.revenue =
    event.type === 'purchase'
      ? (p.amount as number)
      : event.type === 'goal'
        ? ((p.value as number | undefined) ?? 0)
        : 0;
  row.currency = event.type === 'purchase' ? (p.currency as string) : '';
  row.props = JSON.stringify(customProps(event));
  row.idempotency_key = event.idempotencyKey ?? '';
  return row; // engagement_ms and scroll_depth stay 0: server events carry neither
}

/** What is kept in the `props` column: custom properties, plus typed fields that have no column. */
function customProps(event: ValidEvent): Record<string, unknown> {
  const p = event.props;
  switch (event.type) {
    case 'identify':
      return {
        ...event.custom,
        ...Object.fromEntries(IDENTITY_FIELDS.filter((f) => p[f] !== undefined).map((f) => [f, p[f]])),
      };
    case 'purchase':
      return {
        ...event.custom,
        payment_provider: p.payment_provider,
        status: p.status,
        ...pick(p, ['provider_event_id', 'customer_email', 'plan_name']),
      };
    default:
      return event.custom;
  }
}

function pick(p: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));
}

const orNull = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

export function identityRecord(event: ValidEvent, row: EventRow): IdentityRecord {
  const p = event.props;
  return {
    event_id: row.event_id,
    website_id: row.website_id,
    visitor_id: event.visitorId,
    email: orNull(p.email),
    name: orNull(p.name),
    customer_id: orNull(p.customer_id),
    phone: orNull(p.phone),
    company: orNull(p.company),
    attributes: event.custom,
    seen_at: new Date(event.ts).toISOString(),
  };
}

export function paymentRecord(event: ValidEvent, row: EventRow): PaymentRecord {
  const p = event.props;
  return {
    event_id: row.event_id,
    website_id: row.website_id,
    visitor_id: orNull(event.visitorId),
    session_id: orNull(event.sessionId),
    amount: p.amount as number,
    currency: p.currency as string,
    payment_provider: p.payment_provider as string,
    status: p.status as string,
    provider_event_id: orNull(p.provider_event_id),
    customer_email: orNull(p.customer_email),
    plan_name: orNull(p.plan_name),
    props: event.custom,
    source: 'server',
    occurred_at: new Date(event.ts).toISOString(),
  };
}
