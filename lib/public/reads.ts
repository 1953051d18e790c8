// What the public endpoints read (DESIGN §3 "Public endpoints"): the website from the ingest path's cached
// site config, live numbers from Redis presence, and period figures from the query model. Everything is held
// per website in this process for a short while with a single flight, so however many requests arrive, each
// website costs at most one presence read per PRESENCE_TTL_MS and one set of queries per STATS_TTL_MS.
import type { Pool } from 'pg';
import { getWebsite } from '../accounts/websites';
import type { ClickHouseClient } from '../clickhouse/client';
import { notFound, orUnavailable } from '../errors';
import type { RealtimeData } from '../external/schemas';
import { countryName } from '../geo/lookup';
import type { SiteConfig, SiteConfigCache } from '../ingest/accept/siteCache';
import { realtimeCounts, realtimeSnapshot } from '../realtime/presence';
import type { Redis } from '../redis';
import { byMetricDesc, runStats } from '../stats/run';
import { FlightCache } from './flight';
import {
  GEO_CREDIT,
  type LiveData,
  PAUSED_MESSAGE,
  type Paused,
  type PreviewWidgetData,
  type PublicRealtimeData,
  type PublicStatsData,
  type RealtimeWidgetData,
  type RecentWidgetData,
  TRACKING_CODE,
  type TrackingStatusData,
} from './schemas';

export const PRESENCE_TTL_MS = 5_000;
export const STATS_TTL_MS = 60_000;
/** Website ids rarely change owner or code; unknown ids are remembered for less, so a new website shows soon. */
const ID_TTL_MS = 60_000;
/** Public realtime lists a page only when this many live visitors are on it: a path can name a person. */
export const MIN_PUBLIC_PAGE_VISITORS = 2;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const MINUTE_MS = 60_000;

export interface PublicReadDeps {
  sites: SiteConfigCache;
  pool: Pool;
  redis: Redis;
  redisPrefix: string;
  clickhouse: ClickHouseClient;
}

type LiveCounts = Pick<RealtimeData, 'live_visitors' | 'pageviews_last_30m' | 'as_of'>;

interface Periods {
  last24h: { visitors: number; pageviews: number };
  last7d: { visitors: number; pageviews: number };
  last30d: { visitors: number; pageviews: number };
  hours: { hour: string; visitors: number; pageviews: number }[];
  countries: { country_code: string; visitors: number }[];
}

export class PublicReads {
  private readonly presence = new FlightCache<RealtimeData>(PRESENCE_TTL_MS);
  private readonly presenceCounts = new FlightCache<LiveCounts>(PRESENCE_TTL_MS);
  private readonly periods = new FlightCache<Periods>(STATS_TTL_MS);
  private readonly codes = new FlightCache<string | null>(ID_TTL_MS);

  constructor(private readonly deps: PublicReadDeps) {}

  /** The website of a tracking code (404 for an unknown or malformed one). */
  async site(trackingCode: string): Promise<SiteConfig> {
    const site = TRACKING_CODE.test(trackingCode) ? await orUnavailable(this.deps.sites.get(trackingCode)) : null;
    if (!site) throw notFound('Unknown tracking code');
    return site;
  }

  /** The website by id, only while its public dashboard is on: otherwise, and for a malformed id, 404. */
  async publicDashboard(websiteId: string): Promise<SiteConfig> {
    const missing = () => notFound('No public dashboard for this website');
    if (!UUID.test(websiteId)) throw missing();
    const id = websiteId.toLowerCase();
    const code = await orUnavailable(
      this.codes.get(id, async () => (await getWebsite(this.deps.pool, id))?.tracking_code ?? null),
    );
    const site = code ? await orUnavailable(this.deps.sites.get(code)) : null;
    if (!site?.website.public_dashboard) throw missing();
    return site;
  }

  async live(site: SiteConfig, now = Date.now()): Promise<LiveData> {
    if (!site.website.is_active) return paused(site);
    const rt = await this.counts(site, now);
    return { active: true, domain: site.website.domain, live_visitors: rt.live_visitors, as_of: rt.as_of };
  }

  async realtimeWidget(site: SiteConfig, now = Date.now()): Promise<RealtimeWidgetData> {
    if (!site.website.is_active) return paused(site);
    const rt = await this.counts(site, now);
    return {
      active: true,
      domain: site.website.domain,
      live_visitors: rt.live_visitors,
      pageviews_last_30m: rt.pageviews_last_30m,
      as_of: rt.as_of,
    };
  }

  /** DESIGN §3's real-time shape; pages only where several visitors are (MIN_PUBLIC_PAGE_VISITORS). */
  async realtime(site: SiteConfig, now = Date.now()): Promise<PublicRealtimeData> {
    if (!site.website.is_active) return { website_id: site.website.id, active: false, message: PAUSED_MESSAGE };
    const rt = await this.snapshot(site, now);
    return { ...rt, top_pages: rt.top_pages.filter((p) => p.visitors >= MIN_PUBLIC_PAGE_VISITORS) };
  }

  async status(site: SiteConfig, now = Date.now()): Promise<TrackingStatusData> {
    const { website } = site;
    const rt = website.is_active ? await this.counts(site, now) : undefined;
    return {
      tracking_code: website.tracking_code,
      active: website.is_active,
      verified: website.verification_status === 'verified',
      verification_status: website.verification_status === 'verified' ? 'verified' : 'unverified',
      receiving_events: rt ? rt.pageviews_last_30m > 0 || rt.live_visitors > 0 : null,
      as_of: new Date(now).toISOString(),
    };
  }

  async stats(site: SiteConfig, now = Date.now()): Promise<PublicStatsData> {
    if (!site.website.is_active) return paused(site);
    const p = await this.figures(site, now);
    return {
      active: true,
      domain: site.website.domain,
      periods: { last_24h: p.last24h, last_7d: p.last7d, last_30d: p.last30d },
      as_of: new Date(now).toISOString(),
    };
  }

  async preview(site: SiteConfig, now = Date.now()): Promise<PreviewWidgetData> {
    if (!site.website.is_active) return paused(site);
    const p = await this.figures(site, now);
    return {
      active: true,
      domain: site.website.domain,
      hours: p.hours,
      totals: p.last24h,
      as_of: new Date(now).toISOString(),
    };
  }

  async recent(site: SiteConfig, now = Date.now()): Promise<RecentWidgetData> {
    if (!site.website.is_active) return paused(site);
    const p = await this.figures(site, now);
    return {
      active: true,
      domain: site.website.domain,
      period: 'last_24h',
      countries: p.countries.map((c) => ({ ...c, country_name: countryName(c.country_code) })),
      attribution: GEO_CREDIT,
      as_of: new Date(now).toISOString(),
    };
  }

  /** The counts alone: what every public read but /e/realtime needs, without walking the live set. */
  private counts(site: SiteConfig, now: number): Promise<LiveCounts> {
    const id = site.website.id;
    return orUnavailable(
      this.presenceCounts.get(id, () => realtimeCounts(this.deps.redis, this.deps.redisPrefix, id, now), now),
    );
  }

  private snapshot(site: SiteConfig, now: number): Promise<RealtimeData> {
    const id = site.website.id;
    return orUnavailable(
      this.presence.get(id, () => realtimeSnapshot(this.deps.redis, this.deps.redisPrefix, id, now), now),
    );
  }

  /** Every period figure of a website in one flight: the widgets and /e/stats share it. */
  private figures(site: SiteConfig, now: number): Promise<Periods> {
    const id = site.website.id;
    return orUnavailable(this.periods.get(id, () => this.loadFigures(id, now), now));
  }

  private async loadFigures(websiteId: string, now: number): Promise<Periods> {
    const { clickhouse } = this.deps;
    // Whole minutes, so the raw part of each range is the same statement for every request of the minute.
    const end = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
    const base = { websiteId, timeZone: 'UTC', filters: [], end };
    const firstHour = Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
    const [day, week, month, hours, countries] = await Promise.all([
      runStats(clickhouse, { ...base, start: end - DAY_MS, metrics: ['visitors', 'pageviews'] }),
      runStats(clickhouse, { ...base, start: end - 7 * DAY_MS, metrics: ['visitors', 'pageviews'] }),
      runStats(clickhouse, { ...base, start: end - 30 * DAY_MS, metrics: ['visitors', 'pageviews'] }),
      runStats(clickhouse, {
        ...base,
        start: firstHour,
        end: firstHour + DAY_MS,
        metrics: ['visitors', 'pageviews'],
        dimension: 'time:hour',
      }),
      runStats(clickhouse, { ...base, start: end - DAY_MS, metrics: ['visitors'], dimension: 'country' }),
    ]);
    const figures = (rows: typeof day) => ({
      visitors: rows[0]?.values.visitors ?? 0,
      pageviews: rows[0]?.values.pageviews ?? 0,
    });
    const byHour = new Map(hours.map((r) => [r.key, r.values]));
    return {
      last24h: figures(day),
      last7d: figures(week),
      last30d: figures(month),
      hours: Array.from({ length: 24 }, (_, i) => {
        const at = new Date(firstHour + i * HOUR_MS).toISOString();
        // time:hour keys read 'YYYY-MM-DD HH:00:00' in the query's zone (UTC here).
        const v = byHour.get(`${at.slice(0, 10)} ${at.slice(11, 19)}`);
        return { hour: at, visitors: v?.visitors ?? 0, pageviews: v?.pageviews ?? 0 };
      }),
      countries: countries
        .filter((r) => r.key !== '' && (r.values.visitors ?? 0) > 0)
        .sort(byMetricDesc('visitors'))
        .slice(0, 10)
        .map((r) => ({ country_code: r.key, visitors: r.values.visitors ?? 0 })),
    };
  }
}

function paused(site: SiteConfig): Paused {
  return { active: false, domain: site.website.domain, message: PAUSED_MESSAGE };
}
