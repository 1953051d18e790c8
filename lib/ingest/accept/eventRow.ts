// An accepted event's row of `events`, assembled in one place for both ingestion paths from its column
// groups: the request's, the event's own, the page's (page.ts, parsed the same way for both) and the
// client's (device, geo, language: each path has its own precedence, DESIGN §3). Every row of a process then
// has one shape, which the job's encoder reads column by column.
import type { EventRow } from '../job/rows';
import type { PageColumns } from './page';

/** The request's columns (JOB_HEAD_COLUMNS), the same for every event of one request. */
export type RowHead = Pick<EventRow, 'website_id' | 'source' | 'received_at' | 'ip_hash' | 'api_key_id' | 'expire_at'>;

/** The event's own columns. */
export type EventColumns = Pick<
  EventRow,
  'event_id' | 'type' | 'name' | 'ts' | 'session_id' | 'visitor_id' | 'engagement_ms' | 'scroll_depth' | 'revenue' | 'currency' | 'props' | 'idempotency_key'
>;

/** What is known of the client: device, browser, OS, place, screen and language. */
export type ClientColumns = Pick<
  EventRow,
  'device_type' | 'browser' | 'browser_version' | 'os' | 'os_version' | 'country_code' | 'region' | 'city' | 'screen_width' | 'screen_height' | 'language'
>;

/** The client columns of an event that carries none (server events other than pageviews). */
export const NO_CLIENT: ClientColumns = {
  device_type: '', browser: '', browser_version: '', os: '', os_version: '', country_code: '', region: '', city: '',
  screen_width: 0, screen_height: 0, language: '',
};

export function assembleEventRow(head: RowHead, event: EventColumns, page: PageColumns, client: ClientColumns): EventRow {
  return {
    website_id: head.website_id,
    source: head.source,
    received_at: head.received_at,
    ip_hash: head.ip_hash,
    api_key_id: head.api_key_id,
    expire_at: head.expire_at,
    event_id: event.event_id,
    type: event.type,
    name: event.name,
    ts: event.ts,
    session_id: event.session_id,
    visitor_id: event.visitor_id,
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
    engagement_ms: event.engagement_ms,
    scroll_depth: event.scroll_depth,
    revenue: event.revenue,
    currency: event.currency,
    props: event.props,
    idempotency_key: event.idempotency_key,
  };
}
