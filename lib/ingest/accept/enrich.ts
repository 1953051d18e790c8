// Turns a validated server event into stored rows: ids, times, source, UA and geo fields, the hashed IP.
// Props given by the sender win over what the request context suggests (DESIGN §3).
import { createHash, randomUUID } from 'node:crypto';
import { chTime, type EventRow, type IdentityRecord, type PaymentRecord } from '../job/rows';
import { IDENTITY_FIELDS, type PageviewProps } from './serverSchemas';
import { referrerDomain, sourceName } from './source';
import type { ValidEvent } from './validate';

export interface RequestContext {
  websiteId: string;
  websiteDomain: string;
  apiKeyId: string;
  /** ClickHouse text of the batch's receive time and row expiry, formatted once per request. */
  receivedAtText: string;
  expireAtText: string;
  ipHash: string;
  geo?: { country_code: string; region: string; city: string };
  ua?: { device_type: string; browser: string; browser_version: string; os: string; os_version: string };
  language: string;
  /**
   * What this request's pages and referrers parse to, by URL. A batch repeats a site's few pages and
   * referrers many times, and parsing a URL was the costliest step of building a row.
   */
  memo: { pages: Map<string, PageLocation>; referrerDomains: Map<string, string> };
}

/** A memo for one request's RequestContext. */
export function requestMemo(): RequestContext['memo'] {
  return { pages: new Map(), referrerDomains: new Map() };
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

/** A page URL's parts that fill columns; utm holds the query's values of UTM_PARAMS, '' when absent. */
interface PageLocation {
  hostname: string;
  pathname: string;
  utm: string[];
}

const UTM_PARAMS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;

function parsePageUrl(url: string, domain: string): PageLocation {
  try {
    const parsed = new URL(url, `https://${domain}`);
    const query = parsed.searchParams;
    return {
      hostname: parsed.hostname.toLowerCase(),
      pathname: decodeSafe(parsed.pathname),
      utm: UTM_PARAMS.map((name) => query.get(name)?.slice(0, 256) || ''),
    };
  } catch {
    return { hostname: '', pathname: url.split(/[?#]/)[0], utm: UTM_PARAMS.map(() => '') };
  }
}

function pageLocation(url: string, ctx: RequestContext): PageLocation {
  let loc = ctx.memo.pages.get(url);
  if (!loc) ctx.memo.pages.set(url, (loc = parsePageUrl(url, ctx.websiteDomain)));
  return loc;
}

function memoReferrerDomain(referrer: string | undefined, ctx: RequestContext): string {
  if (!referrer) return '';
  let domain = ctx.memo.referrerDomains.get(referrer);
  if (domain === undefined) ctx.memo.referrerDomains.set(referrer, (domain = referrerDomain(referrer)));
  return domain;
}

function decodeSafe(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function buildEventRow(event: ValidEvent, ctx: RequestContext): EventRow {
  const p = event.props;
  const page = event.type === 'pageview' ? (p as PageviewProps) : undefined;
  const loc = page ? pageLocation(page.url, ctx) : undefined;
  // Only pageview props carry utm_* (other types' checked props have none); the URL's query fills the rest.
  const utm = (i: number) => str(p[UTM_PARAMS[i]]) || loc?.utm[i] || '';
  const utmSource = utm(0);
  const refDomain = memoReferrerDomain(page?.referrer, ctx);
  return {
    website_id: ctx.websiteId,
    event_id: randomUUID(),
    type: event.type,
    name: event.type === 'event' || event.type === 'goal' ? str(p.name) : '',
    source: 'server',
    ts: chTime(event.ts),
    received_at: ctx.receivedAtText,
    session_id: event.sessionId,
    visitor_id: event.visitorId,
    url: page?.url ?? '',
    hostname: loc?.hostname ?? '',
    pathname: loc?.pathname ?? '',
    referrer: page?.referrer ?? '',
    referrer_domain: refDomain,
    source_name: page ? sourceName(utmSource, refDomain, loc?.hostname || ctx.websiteDomain) : '',
    utm_source: utmSource,
    utm_medium: utm(1),
    utm_campaign: utm(2),
    utm_content: utm(3),
    utm_term: utm(4),
    device_type: str(page?.device_type) || (page ? (ctx.ua?.device_type ?? '') : ''),
    browser: str(page?.browser) || (page ? (ctx.ua?.browser ?? '') : ''),
    browser_version: page && !page.browser ? (ctx.ua?.browser_version ?? '') : '',
    os: str(page?.os) || (page ? (ctx.ua?.os ?? '') : ''),
    os_version: page && !page.os ? (ctx.ua?.os_version ?? '') : '',
    country_code: page?.country_code?.toUpperCase() || (page ? (ctx.geo?.country_code ?? '') : ''),
    region: page && !page.country_code ? (ctx.geo?.region ?? '') : '',
    city: str(page?.city) || (page && !page.country_code ? (ctx.geo?.city ?? '') : ''),
    screen_width: page?.screen_width ?? 0,
    screen_height: page?.screen_height ?? 0,
    language: str(page?.language) || (page ? ctx.language : ''),
    ip_hash: ctx.ipHash,
    engagement_ms: 0,
    scroll_depth: 0,
    revenue: event.type === 'purchase' ? (p.amount as number) : event.type === 'goal' ? ((p.value as number | undefined) ?? 0) : 0,
    currency: event.type === 'purchase' ? (p.currency as string) : '',
    props: JSON.stringify(customProps(event)),
    idempotency_key: event.idempotencyKey ?? '',
    api_key_id: ctx.apiKeyId,
    expire_at: ctx.expireAtText,
  };
}

/** What is kept in the `props` column: custom properties, plus typed fields that have no column. */
function customProps(event: ValidEvent): Record<string, unknown> {
  const p = event.props;
  switch (event.type) {
    case 'identify':
      return { ...event.custom, ...Object.fromEntries(IDENTITY_FIELDS.filter((f) => p[f] !== undefined).map((f) => [f, p[f]])) };
    case 'purchase':
      return { ...event.custom, payment_provider: p.payment_provider, status: p.status, ...pick(p, ['provider_event_id', 'customer_email', 'plan_name']) };
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
