// What browser ingestion needs about a website, by tracking code, cached for a moment: every page view of
// every visitor asks, so a PostgreSQL round trip each time would be the bottleneck. Changes made through
// this process clear the entry at once; other processes see them within TTL_MS. Exclusions are compiled here,
// once per entry, not per event.
import type { Pool } from 'pg';
import { exclusionRules } from '../../accounts/exclusions';
import { getTeam } from '../../accounts/teams';
import { getWebsiteByTrackingCode, type WebsiteRow } from '../../accounts/websites';
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
}

export class SiteConfigCache {
  private readonly entries = new Map<string, { at: number; value: SiteConfig | null }>();

  constructor(private readonly pool: Pool) {}

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

  /** Forget a website after a change to its settings or exclusions. */
  invalidate(trackingCode: string): void {
    this.entries.delete(trackingCode);
  }
}
