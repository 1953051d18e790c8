// What browser ingestion needs about a website, by tracking code, cached for a moment: every page view of
// every visitor asks, so a PostgreSQL round trip each time would be the bottleneck. Changes made through
// this process clear the entry at once; other processes see them within TTL_MS. Exclusions are compiled here,
// once per entry, not per event.
import type { Pool } from 'pg';
import { exclusionRules } from '../../accounts/exclusions';
import { getTeam } from '../../accounts/teams';
import { markVerified } from '../../accounts/websiteSettings';
import { getWebsiteByTrackingCode, type WebsiteRow } from '../../accounts/websites';
import type { Logger } from '../../log';
import type { PlanName } from '../../plans';
import { compileIpRules, compilePathRules, type Matcher } from './exclusions';

export const SITE_CACHE_TTL_MS = 2_000;

export interface SiteConfig {
  website: WebsiteRow;
  plan: PlanName;
  /** True for an address the website excludes (any form; a mapped IPv4 counts as IPv4). */
  excludesIp: Matcher<string | undefined>;
  /** True for a decoded pathname one of the website's path patterns matches. */
  excludesPath: Matcher<string>;
  /** Set once this entry has asked for the website to be marked verified (at most one UPDATE per entry). */
  verificationSent?: boolean;
}

export class SiteConfigCache {
  private readonly entries = new Map<string, { at: number; value: SiteConfig | null }>();

  constructor(
    private readonly pool: Pool,
    private readonly logger?: Logger,
  ) {}

  async get(trackingCode: string, now = Date.now()): Promise<SiteConfig | null> {
    const hit = this.entries.get(trackingCode);
    if (hit && now - hit.at < SITE_CACHE_TTL_MS) return hit.value;
    const website = await getWebsiteByTrackingCode(this.pool, trackingCode);
    let value: SiteConfig | null = null;
    if (website) {
      const [rules, team] = await Promise.all([
        exclusionRules(this.pool, website.id),
        getTeam(this.pool, website.team_id),
      ]);
      value = {
        website,
        plan: team?.plan ?? 'free',
        excludesIp: compileIpRules(rules.ips),
        excludesPath: compilePathRules(rules.paths),
      };
    }
    if (this.entries.size > 50_000) this.entries.clear();
    this.entries.set(trackingCode, { at: now, value });
    return value;
  }

  /**
   * The tracker reported a page on the website's own domains: mark it verified. While the row reads unverified
   * this costs one conditional UPDATE per process and cache entry, after that nothing (the reloaded entry says
   * verified). Not awaited by ingestion; a failure is logged and retried with a later entry.
   */
  noteOwnDomain(site: SiteConfig): void {
    if (site.website.verification_status === 'verified' || site.verificationSent) return;
    site.verificationSent = true;
    markVerified(this.pool, site.website).then(
      () => this.invalidate(site.website.tracking_code),
      (err: Error) => this.logger?.warn({ err, websiteId: site.website.id }, 'domain verification not recorded'),
    );
  }

  /** Forget a website after a change to its settings or exclusions. */
  invalidate(trackingCode: string): void {
    this.entries.delete(trackingCode);
  }
}
