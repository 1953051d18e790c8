// Browser ingestion (spec "Browser ingestion", DESIGN §3 "Browser ingestion decisions"): the tracking code
// names the website; bots, opted-out browsers, excluded addresses and paths, and foreign hostnames are
// answered 200 `event_ignored` and stored nowhere; everything else becomes one ingest job.
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isbot } from 'isbot';
import { forbidden, HttpError, notFound, orUnavailable } from '../errors';
import { PLANS } from '../plans';
import type { PresenceSink } from '../realtime/presence';
import { redisKey } from '../redis';
import type { BrowserEvent, IgnoreReason } from './browserSchemas';
import { hashIp } from './enrich';
import { hostAllowed, ipExcluded, pathExcluded } from './exclusions';
import type { Enrichers } from './pipeline';
import { chSeconds, chTime, type EventRow, type QueuedIngest } from './rows';
import { packJob } from './rowBinary';
import type { DailySalts } from './salt';
import type { SiteConfigCache } from './siteCache';
import { referrerDomain, sourceName } from './source';

/** Events per minute one address may send to one website before it is answered 429. */
export const ABUSE_LIMIT_PER_MINUTE = 600;

export interface BrowserDeps {
  sites: SiteConfigCache;
  salts: DailySalts;
  redis: Redis;
  redisPrefix: string;
  enrichers: Enrichers;
  enqueue: (jobId: string, job: QueuedIngest) => Promise<void>;
  /** Realtime presence; called after a successful enqueue and must never throw or block. */
  presence?: PresenceSink;
}

export interface BrowserRequest {
  trackingCode: string;
  event: BrowserEvent;
  /** The connection's address (or X-Forwarded-For's with TRUST_PROXY); used here only, never stored. */
  ip: string | undefined;
  userAgentHeader: string | undefined;
  gpc: boolean;
  now: number;
}

export type BrowserOutcome = { kind: 'recorded' } | { kind: 'ignored'; reason: IgnoreReason };

export async function ingestBrowserEvent(deps: BrowserDeps, req: BrowserRequest): Promise<BrowserOutcome> {
  const site = await deps.sites.get(req.trackingCode);
  if (!site) throw notFound('Unknown tracking code');
  const { website } = site;
  if (!website.is_active) throw forbidden('Tracking is disabled for this website');

  const ua = req.userAgentHeader || req.event.user_agent;
  const page = parseUrl(req.event.url);
  const ignored: IgnoreReason | undefined = isbot(ua)
    ? 'bot'
    : req.gpc
      ? 'gpc'
      : req.event.ignore
        ? 'opt_out'
        : ipExcluded(req.ip, site.ipRules)
          ? 'excluded_ip'
          : pathExcluded(page.pathname, site.pathPatterns)
            ? 'excluded_path'
            : !hostAllowed(page.hostname, website.allowed_domains)
              ? 'domain_not_allowed'
              : undefined;
  if (ignored) return { kind: 'ignored', reason: ignored };

  const salt = await orUnavailable(deps.salts.forTime(req.now));
  const ipHash = hashIp(salt, website.id, req.ip);
  await orUnavailable(checkAbuse(deps, website.id, ipHash, req.now));

  const parsedUa = deps.enrichers.ua?.(ua);
  const geo = req.ip ? deps.enrichers.geo?.lookup(req.ip) : undefined;
  const e = req.event;
  // Cookieless visitors: a daily-salted hash of site, address and browser (new each day by design).
  const visitorId =
    e.visitor_id || createHash('sha256').update(salt).update(website.id).update(req.ip ?? '').update(ua).digest('hex').slice(0, 32);
  const expireAt = chSeconds(req.now + PLANS[site.plan].dataRetentionDays * 86_400_000);
  const ts = chTime(req.now);
  const eventId = randomUUID();
  const refDomain = referrerDomain(e.referrer);
  const utm = (k: string) => page.query.get(k)?.slice(0, 256) ?? '';
  const device = parsedUa?.device_type || e.device_type;
  const browser = parsedUa?.browser || e.browser;
  const os = parsedUa?.os || e.os;

  const row: EventRow = {
    website_id: website.id,
    event_id: eventId,
    type: e.event_type === 'custom' ? 'event' : e.event_type,
    name: e.event_type === 'custom' ? (e.event_name ?? '') : e.event_type === 'error' ? (e.error_type || 'Error') : '',
    source: 'browser',
    ts,
    received_at: ts,
    session_id: e.session_id,
    visitor_id: visitorId,
    url: e.url,
    hostname: page.hostname,
    pathname: page.pathname,
    referrer: e.referrer ?? '',
    referrer_domain: refDomain,
    source_name: e.event_type === 'pageview' ? sourceName(utm('utm_source'), refDomain, page.hostname) : '',
    utm_source: utm('utm_source'),
    utm_medium: utm('utm_medium'),
    utm_campaign: utm('utm_campaign'),
    utm_content: utm('utm_content'),
    utm_term: utm('utm_term'),
    device_type: device,
    browser,
    browser_version: parsedUa?.browser ? parsedUa.browser_version : '',
    os,
    os_version: parsedUa?.os ? parsedUa.os_version : '',
    country_code: geo?.country_code ?? '',
    region: geo?.region ?? '',
    city: geo?.city ?? '',
    screen_width: Math.min(e.screen_width ?? 0, 65535),
    screen_height: Math.min(e.screen_height ?? 0, 65535),
    language: e.language ?? '',
    ip_hash: ipHash,
    engagement_ms: e.engagement_ms ?? 0,
    scroll_depth: e.scroll_depth ?? 0,
    revenue: 0,
    currency: '',
    props: JSON.stringify(e.props ?? {}),
    idempotency_key: '',
    api_key_id: '',
    expire_at: expireAt,
  };
  // Replay chunks are recordings, not analytics events.
  const job = packJob(website.id, e.event_type === 'replay' ? [] : [row], {
    identities: [],
    payments: [],
    interactions:
      e.event_type === 'click'
        ? [{
            website_id: website.id, event_id: eventId, ts, session_id: e.session_id, visitor_id: visitorId, pathname: page.pathname,
            x: e.x ?? 0, y: e.y ?? 0, viewport_width: e.viewport_width ?? 0, viewport_height: e.viewport_height ?? 0,
            page_height: e.page_height ?? 0, selector: e.selector ?? '', device_type: device, expire_at: expireAt,
          }]
        : [],
    errors:
      e.event_type === 'error'
        ? [{
            website_id: website.id, event_id: eventId, ts, session_id: e.session_id, visitor_id: visitorId, pathname: page.pathname,
            fingerprint: errorFingerprint(e), error_type: e.error_type || 'Error', message: e.message ?? '', stack: e.stack ?? '',
            browser, os, device_type: device, expire_at: expireAt,
          }]
        : [],
    replays:
      e.event_type === 'replay'
        ? [{ website_id: website.id, session_id: e.session_id, seq: e.seq ?? 0, ts, visitor_id: visitorId, pathname: page.pathname, data: e.data ?? '', expire_at: expireAt }]
        : [],
  });
  await orUnavailable(deps.enqueue(eventId, job), 'Event could not be queued; retry shortly');
  if (e.event_type === 'pageview' && deps.presence) {
    deps.presence([{ websiteId: website.id, visitorId, pathname: page.pathname, countryCode: row.country_code, ts: req.now }]);
  }
  return { kind: 'recorded' };
}

async function checkAbuse(deps: BrowserDeps, websiteId: string, ipHash: string, now: number): Promise<void> {
  const minute = Math.floor(now / 60_000);
  const key = redisKey(deps.redisPrefix, 'abuse', websiteId, ipHash.slice(0, 32), String(minute));
  const [[, count]] = (await deps.redis.multi().incr(key).expire(key, 120).exec()) as [[null, number], [null, number]];
  if (count > ABUSE_LIMIT_PER_MINUTE) {
    throw new HttpError(429, 'RATE_LIMITED', 'Too many events from this client', { 'Retry-After': String(60 - Math.floor((now / 1000) % 60)) });
  }
}

/** Groups occurrences of one error: type, message without volatile numbers, and the top stack frame. */
export function errorFingerprint(e: Pick<BrowserEvent, 'error_type' | 'message' | 'stack'>): string {
  const message = (e.message ?? '').replace(/\b\d+\b/g, 'N').replace(/0x[0-9a-f]+/gi, 'N').slice(0, 300);
  const frame = (e.stack ?? '').split('\n').map((l) => l.trim()).find((l) => /^at |@/.test(l)) ?? '';
  const topFrame = frame.replace(/:\d+:\d+\)?$/, '').replace(/\?[^)\s]*/, '');
  return createHash('sha256').update(`${e.error_type ?? 'Error'}\n${message}\n${topFrame}`).digest('hex').slice(0, 32);
}

function parseUrl(url: string): { hostname: string; pathname: string; query: URLSearchParams } {
  try {
    const u = new URL(url);
    let pathname = u.pathname;
    try {
      pathname = decodeURI(pathname);
    } catch {
      // keep the encoded form
    }
    return { hostname: u.hostname.toLowerCase(), pathname, query: u.searchParams };
  } catch {
    return { hostname: '', pathname: url.split(/[?#]/)[0].slice(0, 2048), query: new URLSearchParams() };
  }
}
