// What the ingest writer's fan-out needs to know of a website, cached in-process for a few seconds: the
// webhook events its active webhooks subscribe to (the `webhooks` table: website_id, events text[], active)
// and, when one of them is goal.completed, its active goals. A website without webhooks then costs a flush
// one map lookup; entries older than the TTL are reloaded together, one query per flush.
import type { Pool } from 'pg';
import type { GoalKind } from '../accounts/schemas';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './events';

export interface GoalRule {
  id: string;
  name: string;
  kind: GoalKind;
  /** The path pattern of a page goal. */
  path: string | null;
}

export interface SiteSubscriptions {
  events: ReadonlySet<WebhookEventName>;
  /** Active goals; loaded only when goal.completed is subscribed. */
  goals: readonly GoalRule[];
}

const NONE: SiteSubscriptions = { events: new Set(), goals: [] };
const KNOWN = new Set<string>(WEBHOOK_EVENT_NAMES);

export class WebhookSubscriptions {
  private readonly entries = new Map<string, { at: number; value: SiteSubscriptions }>();

  constructor(
    private readonly pool: Pool,
    /** How long a website's subscriptions are trusted: a webhook added or changed applies within it. */
    private readonly ttlMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async forWebsites(websiteIds: readonly string[]): Promise<Map<string, SiteSubscriptions>> {
    const now = this.now();
    const out = new Map<string, SiteSubscriptions>();
    const stale: string[] = [];
    for (const id of websiteIds) {
      const hit = this.entries.get(id);
      if (hit && now - hit.at < this.ttlMs) out.set(id, hit.value);
      else stale.push(id);
    }
    if (stale.length === 0) return out;
    const loaded = await this.load(stale);
    if (this.entries.size > 50_000) this.entries.clear();
    for (const id of stale) {
      const value = loaded.get(id) ?? NONE;
      this.entries.set(id, { at: now, value });
      out.set(id, value);
    }
    return out;
  }

  private async load(ids: string[]): Promise<Map<string, SiteSubscriptions>> {
    const { rows } = await this.pool.query<{ website_id: string; events: string[] }>(
      'SELECT website_id::text AS website_id, events FROM webhooks WHERE is_active AND website_id = ANY($1::uuid[])',
      [ids],
    );
    const events = new Map<string, Set<WebhookEventName>>();
    for (const r of rows) {
      const set = events.get(r.website_id) ?? new Set<WebhookEventName>();
      for (const e of r.events ?? []) if (KNOWN.has(e)) set.add(e as WebhookEventName);
      events.set(r.website_id, set);
    }
    const withGoals = [...events].filter(([, set]) => set.has('goal.completed')).map(([id]) => id);
    const goals = new Map<string, GoalRule[]>();
    if (withGoals.length > 0) {
      const { rows: goalRows } = await this.pool.query<GoalRule & { website_id: string }>(
        `SELECT id::text AS id, website_id::text AS website_id, name, kind, path FROM goals
         WHERE is_active AND website_id = ANY($1::uuid[]) ORDER BY created_at, id`,
        [withGoals],
      );
      for (const { website_id, ...g } of goalRows) goals.set(website_id, [...(goals.get(website_id) ?? []), g]);
    }
    return new Map(
      [...events]
        .filter(([, set]) => set.size > 0)
        .map(([id, set]) => [id, { events: set, goals: goals.get(id) ?? [] }]),
    );
  }
}
