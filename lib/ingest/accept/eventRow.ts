// An accepted event's row of `events`, assembled in one place for both ingestion paths from its column
// groups: the request's, the page's (page.ts, parsed the same way for both), the client's (device, geo,
// language: each path has its own precedence, DESIGN §3) and the event's own. Every row of a process then
// has one shape, which the job's encoder reads column by column.
import type { EventRow } from '../job/rows';
import type { PageColumns } from './page';

/** The request's columns (JOB_HEAD_COLUMNS), the same for every event of one request. */
export type RowHead = Pick<EventRow, 'website_id' | 'source' | 'received_at' | 'ip_hash' | 'api_key_id' | 'expire_at'>;

/** What is known of the client: device, browser, OS, place, screen and language. */
export type ClientColumns = Pick<
  EventRow,
  | 'device_type'
  | 'browser'
  | 'browser_version'
  | 'os'
  | 'os_version'
  | 'country_code'
  | 'region'
  | 'city'
  | 'screen_width'
  | 'screen_height'
  | 'language'
>;

/** The client columns of an event that carries none (server events other than pageviews). */
export const NO_CLIENT: ClientColumns = {
  device_type: '',
  browser: '',
  browser_version: '',
  os: '',
  os_version: '',
  country_code: '',
  region: '',
  city: '',
  screen_width: 0,
  screen_height: 0,
  language: '',
};

/**
 * The row of an event: the request's, page and client columns given, the event's own columns (event_id,
 * type, name, ts, session_id, visitor_id, engagement_ms, scroll_depth, revenue, currency, props,
 * idempotency_key) empty, for the caller to set on the row. A server batch builds a thousand rows before
 * any await; an object per event for those columns too cost measurably more garbage collection.
 */
export function assembleEventRow(head: RowHead, page: PageColumns, client: ClientColumns): EventRow {
  return {
    website_id: head.website_id,
    source: head.source,
    received_at: head.received_at,
    ip_hash: head.ip_hash,
    api_key_id: head.api_key_id,
    expire_at: head.expire_at,
    event_id: '',
    type: '',
    name: '',
    ts: '',
    session_id: '',
    visitor_id: '',
    url: page.url,
    hostname: page.hostname,
    pathname: page.pathname,
    referrer: page.referrer,
    referrer_domain: page.referrer_domain,
    source_name: page.source_name,
    utm_source: page.utm_source,
    utm_medium: page.utm_medium,
    utm_campaign: page.utm_campaign,
    utm_content: page.utm_content,
    utm_term: page.utm_term,
    device_type: client.device_type,
    browser: client.browser,
    browser_version: client.browser_version,
    os: client.os,
    os_version: client.os_version,
    country_code: client.country_code,
    region: client.region,
    city: client.city,
    screen_width: client.screen_width,
    screen_height: client.screen_height,
    language: client.language,
    engagement_ms: 0,
    scroll_depth: 0,
    revenue: 0,
    currency: '',
    props: '',
    idempotency_key: '',
  };
}
