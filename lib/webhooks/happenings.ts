// Which webhook events the stored events of one ingest job make happen, as `webhook-events` jobs
// (lib/webhooks/events.ts): visitor.identified, goal.completed, event.tracked and, from a claim made
// elsewhere, visitor.converted. Each key names its happening (the stored event, and the goal it completes),
// so a job fanned out twice yields the same keys. visitor.high_value comes from the visit scores (visitScore.ts).
import { createHash } from 'node:crypto';
import { compileGlob, type Matcher } from '../ingest/accept/exclusions';
import type { EventRow, IdentityRecord, PaymentRecord } from '../ingest/job/rows';
import type { WebhookEventJob } from './events';
import type { GoalRule, SiteSubscriptions } from './subscriptions';

/** ClickHouse DateTime64 text (UTC, 'YYYY-MM-DD hh:mm:ss.mmm') as ISO 8601. */
export function isoOfChTime(ts: string): string {
  return `${ts.slice(0, 10)}T${ts.slice(11, 23)}Z`;
}

/** Whether a stored purchase counts (the stats' SUCCEEDED: props.status is 'succeeded'). */
function succeeded(row: EventRow): boolean {
  try {
    return (JSON.parse(row.props) as { status?: unknown }).status === 'succeeded';
  } catch {
    return false;
  }
}

function propsOf(row: EventRow): Record<string, unknown> | undefined {
  if (row.props === '' || row.props === '{}') return undefined;
  try {
    const props = JSON.parse(row.props) as unknown;
    return props && typeof props === 'object' && !Array.isArray(props) ? (props as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The goals a stored event completes, as the stats count completions (lib/stats/sql/goals.ts goalCondition). */
export type GoalTest = (row: EventRow) => GoalRule[];

const compiled = new WeakMap<readonly GoalRule[], GoalTest>();

export function goalTest(goals: readonly GoalRule[]): GoalTest {
  const hit = compiled.get(goals);
  if (hit) return hit;
  const byName = new Map<string, GoalRule[]>();
  const pages: { goal: GoalRule; matches: Matcher<string> }[] = [];
  const purchases: GoalRule[] = [];
  for (const g of goals) {
    if (g.kind === 'event') byName.set(g.name, [...(byName.get(g.name) ?? []), g]);
    // The same pattern language as the stats' LIKE (lib/stats/patterns.ts): `*` any run, the rest literal.
    else if (g.kind === 'page' && g.path) pages.push({ goal: g, matches: compileGlob(g.path) });
    else if (g.kind === 'purchase') purchases.push(g);
  }
  const test: GoalTest = (row) => {
    if (row.type === 'event' || row.type === 'goal') return byName.get(row.name) ?? [];
    if (row.type === 'pageview') return pages.filter((p) => p.matches(row.pathname)).map((p) => p.goal);
    if (row.type === 'purchase' && purchases.length > 0 && succeeded(row)) return purchases;
    return [];
  };
  compiled.set(goals, test);
  return test;
}

/** The webhook events of a job's stored event rows: event.tracked and goal.completed, as subscribed. */
export function rowHappenings(
  websiteId: string,
  rows: readonly EventRow[],
  subs: SiteSubscriptions,
): WebhookEventJob[] {
  const out: WebhookEventJob[] = [];
  const tracked = subs.events.has('event.tracked');
  const goals = subs.events.has('goal.completed') && subs.goals.length > 0 ? goalTest(subs.goals) : undefined;
  for (const row of rows) {
    const timestamp = isoOfChTime(row.ts);
    if (tracked) {
      const props = propsOf(row);
      out.push({
        websiteId,
        event: 'event.tracked',
        key: `event.tracked.${row.event_id}`,
        timestamp,
        eventName: row.name,
        data: {
          event_id: row.event_id,
          type: row.type,
          name: row.name,
          visitor_id: row.visitor_id,
          session_id: row.session_id,
          ...(row.url ? { url: row.url } : {}),
          ...(props ? { props } : {}),
        },
      });
    }
    if (!goals) continue;
    for (const goal of goals(row)) {
      // A goal event's value, or a purchase's amount.
      const value = row.type === 'goal' || row.type === 'purchase' ? row.revenue : 0;
      out.push({
        websiteId,
        event: 'goal.completed',
        key: `goal.completed.${row.event_id}.${goal.id}`,
        timestamp,
        data: {
          goal_id: goal.id,
          goal_name: goal.name,
          visitor_id: row.visitor_id,
          session_id: row.session_id,
          ...(row.pathname ? { page: row.pathname } : {}),
          ...(value !== 0 ? { value } : {}),
        },
      });
    }
  }
  return out;
}

/** visitor.identified for each identify event (its identity record). */
export function identifiedHappenings(websiteId: string, identities: readonly IdentityRecord[]): WebhookEventJob[] {
  return identities.map((r) => {
    const traits = Object.fromEntries(
      Object.entries({ ...r.attributes, email: r.email, name: r.name, phone: r.phone, company: r.company }).filter(
        ([, v]) => v !== null && v !== undefined,
      ),
    );
    return {
      websiteId,
      event: 'visitor.identified',
      key: `visitor.identified.${r.event_id}`,
      timestamp: r.seen_at,
      data: {
        visitor_id: r.visitor_id,
        user_id: r.customer_id,
        ...(Object.keys(traits).length > 0 ? { traits } : {}),
      },
    };
  });
}

/** visitor.converted for the purchases that are their visitor's first (claimed in visitor_conversions). */
export function convertedHappenings(
  websiteId: string,
  payments: readonly PaymentRecord[],
  firsts: ReadonlySet<string>,
): WebhookEventJob[] {
  return payments
    .filter((p) => firsts.has(p.event_id) && p.visitor_id)
    .map((p) => ({
      websiteId,
      event: 'visitor.converted',
      key: `visitor.converted.${p.event_id}`,
      timestamp: p.occurred_at,
      data: {
        visitor_id: p.visitor_id,
        ...(p.provider_event_id ? { order_id: p.provider_event_id } : {}),
        amount: p.amount,
        currency: p.currency,
      },
    }));
}

/** The key of a visitor's high-value day: the visitor id hashed (it may hold any character, ':' too). */
export function highValueKey(websiteId: string, visitorId: string, day: string): string {
  const visitor = createHash('sha256').update(visitorId).digest('hex').slice(0, 32);
  return `visitor.high_value.${websiteId}.${visitor}.${day}`;
}
