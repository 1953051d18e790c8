// The hand-made stats fixture shared by the query-model and API tests: Europe/Berlin around the
// spring-forward change of 29 March 2026 (02:00 CET → 03:00 CEST). Expected values are worked out in the
// tests that use it.
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import { encodeEventRows } from '../../lib/ingest/job/rowBinary';
import { chTime, type EventRow } from '../../lib/ingest/job/rows';
import { dedupToken, insertEventRows } from '../../lib/ingest/store/chWriter';

/**
 * Stores event rows as every row reaches the store: encoded by the job's encoder, written by the worker's
 * ClickHouse writer, named by their event ids for the insert's dedup token.
 */
export async function storeRows(clickhouse: ClickHouseClient, rows: readonly EventRow[]): Promise<void> {
  await insertEventRows(clickhouse, encodeEventRows(rows).bytes, dedupToken(rows.map((r) => r.event_id)));
}

/** A stored event row with everything empty but what `over` sets. */
export function eventRow(websiteId: string, over: Partial<EventRow> & { ts: string }): EventRow {
  const at = Date.parse(over.ts);
  return {
    website_id: websiteId,
    event_id: randomUUID(),
    type: 'pageview',
    name: '',
    source: 'server',
    received_at: chTime(at),
    session_id: '',
    visitor_id: '',
    url: '',
    hostname: 'shop.example.com',
    pathname: '/',
    referrer: '',
    referrer_domain: '',
    source_name: 'Direct / None',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_content: '',
    utm_term: '',
    device_type: 'desktop',
    browser: '',
    browser_version: '',
    os: 'Linux',
    os_version: '',
    country_code: '',
    region: '',
    city: '',
    screen_width: 0,
    screen_height: 0,
    language: '',
    ip_hash: 'unknown',
    engagement_ms: 0,
    scroll_depth: 0,
    revenue: 0,
    currency: '',
    props: '{}',
    idempotency_key: '',
    api_key_id: '',
    expire_at: '2030-01-01 00:00:00',
    ...over,
    ts: chTime(at),
  };
}

/**
 * Visitors A (DE, Chrome), B (US, Firefox), C (DE, Chrome):
 * - A1: pageviews /a, /b at 23:30 and 23:40 CET on the 28th (the day before);
 * - B1: one pageview /a at 01:30 CET on the 29th — a bounce of 0 s;
 * - B2: pageview /c at 03:10 CEST, custom event Signup 2 minutes later — 120 s, not a bounce;
 * - C1: pageviews /a at 23:50 CEST on the 29th and 00:20 on the 30th — belongs to the 29th, 1,800 s.
 */
export async function insertDstFixture(clickhouse: ClickHouseClient, websiteId: string): Promise<void> {
  const A = { visitor_id: 'A', country_code: 'DE', browser: 'Chrome' };
  const B = { visitor_id: 'B', country_code: 'US', browser: 'Firefox' };
  const C = { visitor_id: 'C', country_code: 'DE', browser: 'Chrome' };
  const row = (over: Partial<EventRow> & { ts: string }) => eventRow(websiteId, over);
  await storeRows(clickhouse, [
    row({ ...A, session_id: 'A1', pathname: '/a', ts: '2026-03-28T22:30:00Z' }),
    row({ ...A, session_id: 'A1', pathname: '/b', ts: '2026-03-28T22:40:00Z' }),
    row({ ...B, session_id: 'B1', pathname: '/a', ts: '2026-03-29T00:30:00Z' }),
    row({ ...B, session_id: 'B2', pathname: '/c', ts: '2026-03-29T01:10:00Z' }),
    row({
      ...B,
      session_id: 'B2',
      type: 'event',
      name: 'Signup',
      pathname: '',
      source_name: '',
      ts: '2026-03-29T01:12:00Z',
    }),
    row({ ...C, session_id: 'C1', pathname: '/a', ts: '2026-03-29T21:50:00Z' }),
    row({ ...C, session_id: 'C1', pathname: '/a', ts: '2026-03-29T22:20:00Z' }),
  ]);
}
