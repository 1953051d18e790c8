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
/** How long a sent verification mark keeps this process from sending another for the same website. */
const VERIFY_RETRY_MS = 10_000;

export interface SiteConfig {
  website: WebsiteRow;
  plan: PlanName;
  /** True for an address the website excludes (any form; a mapped IPv4 counts as IPv4). */
  excludesIp: Matcher<string | undefined>;
  /** True for a decoded pathname one of the website's path patterns matches. */
  excludesPath: Matcher<string>;
}

export class SiteConfigCache {
  private readonly entries = new Map<string, { at: number; value: SiteConfig | null }>();
  /** Tracking code → when the verification mark was sent; concurrent loads of one website share it. */
  private readonly verifying = new Map<string, number>();

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
    if (this.entries.size > 50_000) {
      this.entries.clear();
      this.verifying.clear();
    }
    this.entries.set(trackingCode, { at: now, value });
    return value;
  }

  /**
   * The tracker reported a page on the website's own domains: mark it verified. While the row reads unverified
   * this costs one conditional UPDATE per process (another only after VERIFY_RETRY_MS, should it have failed);
   * once the reloaded entry says verified, nothing. Not awaited by ingestion; a failure is logged.
   */
  noteOwnDomain(site: SiteConfig, now = Date.now()): void {
    const code = site.website.tracking_code;
    if (site.website.verification_status === 'verified') return;
    const sent = this.verifying.get(code);
    if (sent !== undefined && now - sent < VERIFY_RETRY_MS) return;
    this.verifying.set(code, now);
    markVerified(this.pool, site.website).then(
      () => this.entries.delete(code),
      (err: Error) => this.logger?.warn({ err, websiteId: site.website.id }, 'domain verification not recorded'),
    );
  }

  /** Forget a website after a change to its settings or exclusions. */
  invalidate(trackingCode: string): void {
    this.entries.delete(trackingCode);
    this.verifying.delete(trackingCode); // a domain change may make the website unverified again
  }
}
