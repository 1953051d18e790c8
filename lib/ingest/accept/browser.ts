// Browser ingestion (spec "Browser ingestion", DESIGN §3 "Browser ingestion decisions"): the tracking code
// names the website; the per-client abuse limit comes next, before any per-event work; clicks and replay
// chunks of websites that have heatmaps or replay off, bots, opted-out browsers, excluded addresses and paths,
// foreign hostnames and replay past its quotas are answered 200 `event_ignored` and stored nowhere; everything
// else becomes one ingest job. The first recorded event from a page on the website's own domains marks the
// website verified (GET /api/websites/:id/domains).
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isbot } from 'isbot';
import { clientBucket } from '../../auth/windows';
import { forbidden, notFound, orUnavailable, rateLimited } from '../../errors';
import { PLANS, type PlanName } from '../../plans';
import type { PresenceSink } from '../../realtime/presence';
import { redisKey } from '../../redis';
import { packJob } from '../job/rowBinary';
import { chSeconds, chTime, type QueuedIngest } from '../job/rows';
import type { BrowserEvent, IgnoreReason } from './browserSchemas';
import { hashIp } from './enrich';
import type { Enrichers, GeoFields, UaFields } from './enrichers';
import { assembleEventRow, type ClientColumns } from './eventRow';
import { hostAllowed } from './exclusions';
import { locatePage, type PageSite, pageColumns } from './page';
import { type DailySalts, utcDay } from './salt';
import type { SiteConfig, SiteConfigCache } from './siteCache';

/** Events per minute one address may send to one website before it is answered 429. */
export const ABUSE_LIMIT_PER_MINUTE = 600;

/** Replay bytes (UTF-8 of the chunks' `data`) one session may send; the counter lives 24 h past its last chunk. */
export const REPLAY_BYTES_PER_SESSION = 5 * 1024 * 1024;
/** Replay bytes one website may receive per UTC day, by its team's plan. */
export const REPLAY_BYTES_PER_WEBSITE_DAY: Record<PlanName, number> = {
  free: 100 * 1024 * 1024,
  pro: 1024 * 1024 * 1024,
  scale: 4 * 1024 * 1024 * 1024,
  enterprise: 16 * 1024 * 1024 * 1024,
  // The budget guards a public endpoint against abuse, so even the owner's team keeps one.
  unlimited: 64 * 1024 * 1024 * 1024,
};
const REPLAY_SESSION_TTL_SECONDS = 24 * 3600;
const REPLAY_DAY_TTL_SECONDS = 2 * 24 * 3600;

export interface BrowserDeps {
  sites: SiteConfigCache;
  salts: DailySalts;
  redis: Redis;
  redisPrefix: string;
  enrichers: Enrichers;
  enqueue: (jobId: string, job: QueuedIngest) => Promise<unknown>;
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

/** A request the abuse limit has let through, for one website. */
export interface AdmittedClient {
  site: SiteConfig;
  salt: string;
  ipHash: string;
}

/**
 * The website (404 unknown, 403 inactive) and the per-(website, IP hash) abuse limit (429). The route calls it
 * before parsing the body, so a client past its limit costs no parsing, matching or enqueue; ignored and
 * invalid events count towards the limit too.
 */
export async function admitBrowserClient(
  deps: BrowserDeps,
  trackingCode: string,
  ip: string | undefined,
  now: number,
): Promise<AdmittedClient> {
  const site = await deps.sites.get(trackingCode);
  if (!site) throw notFound('Unknown tracking code');
  if (!site.website.is_active) throw forbidden('Tracking is disabled for this website');
  const salt = await orUnavailable(deps.salts.forTime(now));
  const ipHash = hashIp(salt, site.website.id, ip);
  // Counted per IPv4 address or IPv6 /64: one host holds a whole /64, and would otherwise get a limit per address.
  const bucket = clientBucket(ip);
  const clientHash = bucket === ip ? ipHash : hashIp(salt, site.website.id, bucket);
  await orUnavailable(checkAbuse(deps, site.website.id, clientHash, now));
  return { site, salt, ipHash };
}

export async function ingestBrowserEvent(
  deps: BrowserDeps,
  req: BrowserRequest,
  admitted?: AdmittedClient,
): Promise<BrowserOutcome> {
  const { site, salt, ipHash } = admitted ?? (await admitBrowserClient(deps, req.trackingCode, req.ip, req.now));
  const { website } = site;

  const e = req.event;
  const ua = req.userAgentHeader || e.user_agent;
  const pageSite: PageSite = { domain: website.domain };
  const loc = locatePage(pageSite, e.url);
  const bot = isbot(ua);
  const ignored = ignoreReason(site, req, bot, loc.pathname, loc.hostname);
  if (ignored) return { kind: 'ignored', reason: ignored };

  const replay =
    e.event_type === 'replay'
      ? replayQuota(deps, website.id, e.session_id, Buffer.byteLength(e.data ?? '', 'utf8'), site.plan, req.now)
      : undefined;
  if (replay && !(await orUnavailable(replay.take()))) return { kind: 'ignored', reason: 'replay_quota_exceeded' };

  // Cookieless visitors: a daily-salted hash of site, address and browser (new each day by design).
  const visitorId =
    e.visitor_id ||
    createHash('sha256')
      .update(salt)
      .update(website.id)
      .update(req.ip ?? '')
      .update(ua)
      .digest('hex')
      .slice(0, 32);
  const expireAt = chSeconds(req.now + PLANS[site.plan].dataRetentionDays * 86_400_000);
  const ts = chTime(req.now);
  const eventId = randomUUID();
  const row = assembleEventRow(
    {
      website_id: website.id,
      source: 'browser',
      received_at: ts,
      ip_hash: ipHash,
      api_key_id: '',
      expire_at: expireAt,
    },
    pageColumns(pageSite, e.url, e.referrer ?? '', e.event_type === 'pageview', undefined, loc),
    browserClient(e, deps.enrichers.ua?.(ua), req.ip ? deps.enrichers.geo?.lookup(req.ip) : undefined),
  );
  row.event_id = eventId;
  row.type = e.event_type === 'custom' ? 'event' : e.event_type;
  row.name = e.event_type === 'custom' ? (e.event_name ?? '') : e.event_type === 'error' ? e.error_type || 'Error' : '';
  row.ts = ts;
  row.session_id = e.session_id;
  row.visitor_id = visitorId;
  row.engagement_ms = e.engagement_ms ?? 0;
  row.scroll_depth = e.scroll_depth ?? 0;
  // The website's debug setting lets bot traffic in for testing, marked so it can be told apart.
  row.props = JSON.stringify(bot ? { ...e.props, tm_debug: 'bot' } : (e.props ?? {}));
  const { pathname, device_type: device, browser, os } = row;
  // Replay chunks are recordings, not analytics events.
  const job = packJob(website.id, e.event_type === 'replay' ? [] : [row], {
    identities: [],
    payments: [],
    interactions:
      e.event_type === 'click'
        ? [
            {
              website_id: website.id,
              event_id: eventId,
              ts,
              session_id: e.session_id,
              visitor_id: visitorId,
              pathname,
              x: e.x ?? 0,
              y: e.y ?? 0,
              viewport_width: e.viewport_width ?? 0,
              viewport_height: e.viewport_height ?? 0,
              page_height: e.page_height ?? 0,
              selector: e.selector ?? '',
              device_type: device,
              expire_at: expireAt,
            },
          ]
        : [],
    errors:
      e.event_type === 'error'
        ? [
            {
              website_id: website.id,
              event_id: eventId,
              ts,
              session_id: e.session_id,
              visitor_id: visitorId,
              pathname,
              fingerprint: errorFingerprint(e),
              error_type: e.error_type || 'Error',
              message: e.message ?? '',
              stack: e.stack ?? '',
              browser,
              os,
              device_type: device,
              expire_at: expireAt,
            },
          ]
        : [],
    replays:
      e.event_type === 'replay'
        ? [
            {
              website_id: website.id,
              session_id: e.session_id,
              seq: e.seq ?? 0,
              ts,
              visitor_id: visitorId,
              pathname,
              data: e.data ?? '',
              expire_at: expireAt,
            },
          ]
        : [],
  });
  try {
    await orUnavailable(deps.enqueue(eventId, job), 'Event could not be queued; retry shortly');
  } catch (err) {
    await replay?.refund(); // a chunk never queued must not use up quota its retry needs
    throw err;
  }
  // Only an absolute URL names the page's host: a relative one resolves against the website's own domain.
  if (website.verification_status !== 'verified' && !bot && /^https?:\/\//i.test(e.url)) {
    if (hostAllowed(loc.hostname, [website.domain, ...website.allowed_domains])) deps.sites.noteOwnDomain(site);
  }
  if (e.event_type === 'pageview' && deps.presence) {
    deps.presence([{ websiteId: website.id, visitorId, pathname, countryCode: row.country_code, ts: req.now }]);
  }
  return { kind: 'recorded' };
}

/**
 * A browser event's client columns: device, browser and OS from the User-Agent header, the body's values when
 * parsing yields nothing (DESIGN §3); place from the address.
 */
function browserClient(e: BrowserEvent, ua: UaFields | undefined, geo: GeoFields | undefined): ClientColumns {
  return {
    device_type: ua?.device_type || e.device_type,
    browser: ua?.browser || e.browser,
    browser_version: ua?.browser ? ua.browser_version : '',
    os: ua?.os || e.os,
    os_version: ua?.os ? ua.os_version : '',
    country_code: geo?.country_code ?? '',
    region: geo?.region ?? '',
    city: geo?.city ?? '',
    screen_width: Math.min(e.screen_width ?? 0, 65535),
    screen_height: Math.min(e.screen_height ?? 0, 65535),
    language: e.language ?? '',
  };
}

/** Why an event is stored nowhere, first reason wins; data the website does not collect goes first. */
function ignoreReason(
  site: SiteConfig,
  req: BrowserRequest,
  bot: boolean,
  pathname: string,
  hostname: string,
): IgnoreReason | undefined {
  const { event: e, ip } = req;
  const { settings } = site.website;
  if (e.event_type === 'replay' && settings.session_replay !== true) return 'replay_disabled';
  if (e.event_type === 'click' && settings.heatmaps !== true) return 'heatmaps_disabled';
  if (bot && settings.debug !== true) return 'bot';
  if (req.gpc) return 'gpc';
  if (e.ignore) return 'opt_out';
  if (site.excludesIp(ip)) return 'excluded_ip';
  if (site.excludesPath(pathname)) return 'excluded_path';
  if (!hostAllowed(hostname, site.website.allowed_domains)) return 'domain_not_allowed';
  return undefined;
}

async function checkAbuse(deps: BrowserDeps, websiteId: string, ipHash: string, now: number): Promise<void> {
  const minute = Math.floor(now / 60_000);
  const key = redisKey(deps.redisPrefix, 'abuse', websiteId, ipHash.slice(0, 32), String(minute));
  const [[, count]] = (await deps.redis.multi().incr(key).expire(key, 120).exec()) as [[null, number], [null, number]];
  if (count > ABUSE_LIMIT_PER_MINUTE) {
    throw rateLimited('Too many events from this client', 60 - Math.floor((now / 1000) % 60));
  }
}

// KEYS[1] the session's replay bytes, KEYS[2] the website's replay bytes today; ARGV: bytes, session cap,
// day cap, session ttl, day ttl. Both counters grow, or neither: 1 = taken, 0 = over a cap.
const TAKE_REPLAY_BYTES = `
local n = tonumber(ARGV[1])
local session = tonumber(redis.call('GET', KEYS[1]) or '0')
local day = tonumber(redis.call('GET', KEYS[2]) or '0')
if session + n > tonumber(ARGV[2]) or day + n > tonumber(ARGV[3]) then return 0 end
redis.call('INCRBY', KEYS[1], n)
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], n)
if day == 0 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end
return 1`;
// Only counters that still exist: a DECRBY on a missing key would leave one without an expiry.
const GIVE_BACK_REPLAY_BYTES = `
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then redis.call('DECRBY', key, ARGV[1]) end
end
return 1`;

/** Replay byte quotas of one chunk: the session id is hashed (any string a page sends, bounded key length). */
export function replayQuotaKeys(
  prefix: string,
  websiteId: string,
  sessionId: string,
  now: number,
): [session: string, day: string] {
  const session = createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
  return [
    redisKey(prefix, 'replay', 'session', websiteId, session),
    redisKey(prefix, 'replay', 'day', websiteId, utcDay(now)),
  ];
}

function replayQuota(
  deps: BrowserDeps,
  websiteId: string,
  sessionId: string,
  bytes: number,
  plan: PlanName,
  now: number,
) {
  const keys = replayQuotaKeys(deps.redisPrefix, websiteId, sessionId, now);
  return {
    take: async () =>
      (await deps.redis.eval(
        TAKE_REPLAY_BYTES,
        2,
        ...keys,
        bytes,
        REPLAY_BYTES_PER_SESSION,
        REPLAY_BYTES_PER_WEBSITE_DAY[plan],
        REPLAY_SESSION_TTL_SECONDS,
        REPLAY_DAY_TTL_SECONDS,
      )) === 1,
    refund: async () => {
      await deps.redis.eval(GIVE_BACK_REPLAY_BYTES, 2, ...keys, bytes).catch(() => undefined);
    },
  };
}

/** Groups occurrences of one error: type, message without volatile numbers, and the top stack frame. */
export function errorFingerprint(e: Pick<BrowserEvent, 'error_type' | 'message' | 'stack'>): string {
  const message = (e.message ?? '')
    .replace(/\b\d+\b/g, 'N')
    .replace(/0x[0-9a-f]+/gi, 'N')
    .slice(0, 300);
  const frame =
    (e.stack ?? '')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => /^at |@/.test(l)) ?? '';
  const topFrame = frame.replace(/:\d+:\d+\)?$/, '').replace(/\?[^)\s]*/, '');
  return createHash('sha256')
    .update(`${e.error_type ?? 'Error'}\n${message}\n${topFrame}`)
    .digest('hex')
    .slice(0, 32);
}
