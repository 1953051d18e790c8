// The External API's request and response schemas (spec "External API"). Routes validate queries with the
// request schemas, lib functions return the response types inferred from the response schemas, and
// lib/openapi generates the OpenAPI 3.1 document from both: one definition of every shape.
import { z } from '../zod';

// ---- request parameters ----------------------------------------------------------------------------------

export const RANGES = ['24h', '7d', '30d', '90d'] as const;
export const RANGES_WITH_YEAR = [...RANGES, '1y'] as const;
/** The older overview's `timeRange` (DESIGN §3: an alias of range; `today` = since local midnight). */
export const LEGACY_TIME_RANGES = ['today', '7d', '30d', '90d'] as const;
export type RangeName = (typeof RANGES_WITH_YEAR)[number] | 'today';

/** A query integer: digits only (limit=abc, 1.5 or -1 are refused by name), within [min, max]. */
export function queryInt(name: string, min: number, max: number, fallback: number, description: string) {
  return z
    .string()
    .regex(/^\d{1,9}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((v) => v ?? fallback)
    .openapi({ type: 'integer', minimum: min, maximum: max, default: fallback, param: { name, description } });
}

export const rangeParam = <const V extends readonly [string, ...string[]]>(values: V) =>
  z
    .enum(values)
    .optional()
    .openapi({ default: '7d', param: { description: `Time range, default 7d. ${values.join(', ')}.` } });
const timeRangeParam = z
  .enum(LEGACY_TIME_RANGES)
  .optional()
  .openapi({
    deprecated: true,
    param: {
      deprecated: true,
      description: 'Legacy alias of range (today = since local midnight); range wins when both are given.',
    },
  });

export const analyticsQuery = z.object({ range: rangeParam(RANGES_WITH_YEAR), timeRange: timeRangeParam });
export const visitorsQuery = analyticsQuery.extend({
  limit: queryInt('limit', 1, 1000, 100, 'Visits per page (1-1000, default 100).'),
  offset: queryInt('offset', 0, 100_000_000, 0, 'Visits to skip (default 0).'),
});
export const topListQuery = analyticsQuery.extend({
  limit: queryInt('limit', 1, 100, 20, 'Rows to return (1-100, default 20).'),
});
export const heatmapPagesQuery = z.object({
  limit: queryInt('limit', 1, 100, 20, 'Pages to return (1-100, default 20).'),
});
export const heatmapClicksQuery = z.object({
  url: z
    .string()
    .min(1)
    .max(2048)
    .openapi({ param: { description: 'The page path, as /heatmaps/{websiteId}/pages lists it (e.g. /pricing).' } }),
});
export const replaySessionParams = z.object({
  websiteId: z.string().openapi({ format: 'uuid', param: { description: 'Website UUID.' } }),
  sessionId: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { description: 'The session id, as /replays/{websiteId}/sessions lists it.' } }),
});
export const replaySessionsQuery = z.object({
  limit: queryInt('limit', 1, 200, 50, 'Sessions per page (1-200, default 50).'),
  offset: queryInt('offset', 0, 100_000_000, 0, 'Sessions to skip (default 0).'),
});
export const ERROR_GROUP_STATUSES = ['unresolved', 'resolved', 'ignored'] as const;
export type ErrorGroupStatus = (typeof ERROR_GROUP_STATUSES)[number];
export const errorGroupsQuery = z.object({
  limit: queryInt('limit', 1, 200, 50, 'Groups to return (1-200, default 50).'),
  status: z
    .enum(ERROR_GROUP_STATUSES)
    .optional()
    .openapi({ param: { description: 'Only groups in this status; omitted = all.' } }),
});
export const websiteIdParams = z.object({
  websiteId: z.string().openapi({ format: 'uuid', param: { description: 'Website UUID.' } }),
});
export const errorGroupStatusBody = z.object({ status: z.enum(ERROR_GROUP_STATUSES) });

// ---- envelopes and errors ------------------------------------------------------------------------------

export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'API_PAID_PLAN_REQUIRED',
  'PLAN_REQUIRED',
  'NOT_FOUND',
  'CONFLICT',
  'QUERY_UNPROCESSABLE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'GENERIC_ERROR',
  'SERVICE_UNAVAILABLE',
  'PLAN_LIMIT_REACHED',
  'PAYMENT_REQUIRED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  // Stats API 400 codes
  'MISSING_SITE_ID',
  'MISSING_METRICS',
  'MISSING_PERIOD',
  'MISSING_PROPERTY',
  'INVALID_METRIC',
  'INVALID_PROPERTY',
  'INVALID_PERIOD',
  'INVALID_CUSTOM_PERIOD',
  'PERIOD_TOO_LONG',
  'INTERVAL_PERIOD_MISMATCH',
  'UNKNOWN_FILTER_KEY',
  'EMPTY_FILTER_VALUE',
  // Stats API v2 filters: groups nested too deep, a matches expression refused (lib/stats/patterns.ts)
  'FILTER_TOO_DEEP',
  'INVALID_REGEX',
  // Stats API v2 conversion codes
  'INVALID_PROPERTY_KEY',
  'UNKNOWN_GOAL',
  'METRIC_NOT_SUPPORTED',
  'CONVERSION_RATE_NEEDS_GOAL',
  // Funnels
  'INVALID_FUNNEL_STEPS',
  // Conversations; deleting one's account
  'CONVERSATION_FULL',
  'CONVERSATION_LIMIT_REACHED',
  'LAST_OWNER',
  'INSTANCE_OWNER',
] as const;

export const errorEnvelope = z
  .object({
    success: z.literal(false),
    error: z.object({ message: z.string(), code: z.enum(ERROR_CODES), timestamp: z.string().datetime() }),
  })
  .openapi('ErrorEnvelope');

export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data, timestamp: z.string().datetime() });
}

// ---- response data -------------------------------------------------------------------------------------

const count = z.number().int().min(0);
const isoTime = z.string().datetime();
const localDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const score = z.number().min(0).max(100);

export const apiKeyInfo = z
  .object({
    id: z.string(),
    name: z.string(),
    permission: z.enum(['full_access', 'site_access']),
    website_id: z.string().nullable(),
  })
  .openapi('ApiKeyInfo');
export const usageData = z.object({
  api_key: apiKeyInfo,
  usage: z.object({
    monthly_requests: count,
    monthly_limit: count.nullable().openapi({ description: 'null = unlimited' }),
    monthly_remaining: count.nullable(),
    monthly_reset_at: isoTime,
    total_requests: count.openapi({ description: 'Successful requests made with this key, ever.' }),
  }),
  rate_limits: z.object({ requests_per_minute: count.nullable() }),
  subscription: z.object({
    tier: z.string().openapi({ description: 'Plan name; legacy names (starter, professional) are reported as set.' }),
  }),
});

export const websiteSettings = z.object({
  track_outbound_links: z.boolean(),
  track_downloads: z.boolean(),
  session_replay: z.boolean(),
  heatmaps: z.boolean(),
  debug: z
    .boolean()
    .optional()
    .openapi({ description: 'Record bot traffic marked tm_debug=bot; absent on websites that never set it (off).' }),
});
export const websiteSummary = z
  .object({
    id: z.string(),
    domain: z.string(),
    name: z.string(),
    tracking_code: z.string(),
    is_active: z.boolean(),
    created_at: isoTime,
    team_id: z.string(),
  })
  .openapi('WebsiteSummary');
export const websiteDetail = websiteSummary
  .extend({
    user_id: z.string().nullable(),
    timezone: z.string(),
    primary_color: z.string().nullable(),
    kpi_goal: z.number().nullable(),
    public_dashboard: z.boolean(),
    allowed_domains: z.array(z.string()),
    settings: websiteSettings,
    updated_at: isoTime,
  })
  .openapi('Website');
export const websitesData = z.object({ websites: z.array(websiteSummary), total: count });
export const websiteData = z.object({ website: websiteDetail });

export const dailyStat = z.object({
  date: localDate,
  website_id: z.string(),
  total_visitors: count.openapi({ description: 'Visits (sessions) that began that day.' }),
  unique_visitors: count,
  page_views: count,
});
export const analyticsData = z.object({
  website: z.object({ id: z.string(), domain: z.string(), name: z.string() }),
  time_range: z.string(),
  date_range: z.object({ start: localDate, end: localDate, startDateTime: isoTime, endDateTime: isoTime }),
  summary: z.object({ total_visitors: count, total_page_views: count, unique_visitors: count }),
  daily_stats: z.array(dailyStat),
});

export const visitorRecord = z
  .object({
    id: z.string().openapi({ description: 'The visit (session) id: one record per visit.' }),
    visitor_id: z.string(),
    country_code: z.string().nullable(),
    country_name: z.string().nullable(),
    city: z.string().nullable(),
    device_type: z.string(),
    browser: z.string(),
    os: z.string(),
    value_score: score,
    visited_at: isoTime,
    landing_page: z.string(),
    referrer: z.string().nullable().openapi({ description: 'null for direct visits' }),
    had_interaction: z.boolean(),
  })
  .openapi('VisitorRecord');
export const offsetPagination = z.object({ limit: count, offset: count, has_more: z.boolean() });
export const visitorsData = z.object({ visitors: z.array(visitorRecord), pagination: offsetPagination });

export const pageRow = z.object({
  url: z.string().openapi({ description: 'Page path' }),
  views: count,
  avg_value_score: score,
});
export const pagesData = z.object({ pages: z.array(pageRow) });
export const countryRow = z.object({
  country_code: z.string(),
  country_name: z.string(),
  visitors: count,
  avg_value_score: score,
});
export const countriesData = z.object({ countries: z.array(countryRow) });
export const shareRow = z.object({ name: z.string(), count, percentage: z.number().min(0).max(100) });
export const technologyData = z.object({
  devices: z.array(shareRow),
  browsers: z.array(shareRow),
  operating_systems: z.array(shareRow),
  total_visitors: count,
});

export const money = z
  .object({ value: z.number().openapi({ description: 'Two decimals' }), currency: z.string() })
  .openapi('Money', { description: "An amount in the website's revenue currency" });
export const goalRow = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['event', 'page', 'purchase']),
  visitors: count.openapi({ description: 'Visitors who completed the goal' }),
  events: count.openapi({ description: 'Completions' }),
  conversion_rate: z.number().openapi({ description: '% of the range’s visitors, two decimals' }),
  revenue: money
    .nullable()
    .openapi({ description: 'Net revenue of a purchase goal (refunds subtracted); null for the other kinds' }),
});
export const goalsData = z.object({ goals: z.array(goalRow), total_visitors: count });
export const propertyValue = z.object({ value: z.string(), events: count });
export const customEventRow = z.object({
  name: z.string(),
  visitors: count,
  events: count,
  properties: z.array(z.object({ key: z.string(), values: z.array(propertyValue) })).openapi({
    description: 'Its custom properties (at most 10, most used first), each with its 5 most frequent values',
  }),
});
export const customEventsData = z.object({ events: z.array(customEventRow) });
export const revenueData = z.object({
  currency: z.string(),
  total: money.openapi({ description: 'Succeeded purchases minus refunds, in the website currency' }),
  average: money.openapi({ description: 'Net revenue per succeeded purchase in the website currency' }),
  purchases: count.openapi({ description: 'Succeeded purchases, every currency' }),
  by_day: z.array(z.object({ date: z.string(), revenue: money })),
  by_source: z.array(z.object({ source: z.string(), revenue: money, visitors: count })),
  other_currencies: z.array(z.object({ currency: z.string(), total: z.number() })).openapi({
    description: 'Net revenue of purchases in other currencies, not converted (no exchange rates are kept)',
  }),
});

export const heatmapPage = z.object({ url: z.string(), total_interactions: count, last_updated: isoTime });
export const heatmapPagesData = z.object({ pages: z.array(heatmapPage) });

/** The click-density grid's resolution: cells across the page's width and down its height. */
export const HEATMAP_GRID = { columns: 200, rows: 400 } as const;
export const heatmapClicksData = z.object({
  url: z.string(),
  total_clicks: count,
  page: z.object({ width: count, height: count }).nullable().openapi({
    description: 'The median viewport width and page height of the clicks, in CSS pixels; null without clicks.',
  }),
  points: z
    .array(
      z.object({
        x: z.number().min(0).max(1).openapi({ description: 'Cell centre, as a share of the page width (0 = left).' }),
        y: z.number().min(0).max(1).openapi({ description: 'Cell centre, as a share of the page height (0 = top).' }),
        clicks: count,
      }),
    )
    .openapi({
      description: `Clicks per cell of a ${HEATMAP_GRID.columns}×${HEATMAP_GRID.rows} grid over the page, busiest first (at most 5000 cells).`,
    }),
  selectors: z
    .array(z.object({ selector: z.string(), clicks: count }))
    .openapi({ description: 'The most clicked elements (CSS selector path), at most 20.' }),
});
export const replayEventsData = z.object({
  session_id: z.string(),
  events: z.array(z.unknown()).openapi({ description: 'The recording’s rrweb events in order, for rrweb’s Replayer.' }),
  truncated: z.boolean().openapi({ description: 'True when the recording has more chunks than one answer carries.' }),
});

export const replaySession = z
  .object({
    id: z.string(),
    session_id: z.string(),
    page_url: z.string(),
    device_type: z.string(),
    browser: z.string(),
    os: z.string(),
    country_code: z.string().nullable(),
    duration_seconds: z.number().min(0),
    event_count: count,
    started_at: isoTime,
    ended_at: isoTime,
  })
  .openapi('ReplaySession');
export const replaySessionsData = z.object({ sessions: z.array(replaySession), pagination: offsetPagination });

export const errorGroup = z
  .object({
    id: z.string(),
    fingerprint: z.string(),
    message: z.string(),
    type: z.string(),
    status: z.enum(ERROR_GROUP_STATUSES),
    occurrence_count: count,
    first_seen_at: isoTime,
    last_seen_at: isoTime,
    affected_users_count: count,
  })
  .openapi('ErrorGroup');
export const errorGroupsData = z.object({ error_groups: z.array(errorGroup), total: count });

export const realtimeData = z.object({
  website_id: z.string(),
  live_visitors: count.openapi({ description: 'Visitors seen in the last 5 minutes.' }),
  pageviews_last_30m: count,
  top_pages: z.array(z.object({ url: z.string(), visitors: count })),
  countries: z.array(z.object({ country_code: z.string(), visitors: count })),
  pageviews_per_minute: z.array(z.object({ minute: isoTime, pageviews: count })).openapi({
    description:
      'Pageviews per minute over the last 30 minutes, oldest first; the last entry is the current, partial minute.',
  }),
  as_of: isoTime,
});

export type UsageData = z.infer<typeof usageData>;
export type WebsiteSettings = z.infer<typeof websiteSettings>;
export type WebsiteSummary = z.infer<typeof websiteSummary>;
export type WebsiteDetail = z.infer<typeof websiteDetail>;
export type AnalyticsData = z.infer<typeof analyticsData>;
export type VisitorsData = z.infer<typeof visitorsData>;
export type PagesData = z.infer<typeof pagesData>;
export type GoalsData = z.infer<typeof goalsData>;
export type CustomEventsData = z.infer<typeof customEventsData>;
export type RevenueData = z.infer<typeof revenueData>;
export type CountriesData = z.infer<typeof countriesData>;
export type TechnologyData = z.infer<typeof technologyData>;
export type HeatmapPagesData = z.infer<typeof heatmapPagesData>;
export type HeatmapClicksData = z.infer<typeof heatmapClicksData>;
export type ReplayEventsData = z.infer<typeof replayEventsData>;
export type ReplaySession = z.infer<typeof replaySession>;
export type ReplaySessionsData = z.infer<typeof replaySessionsData>;
export type ErrorGroup = z.infer<typeof errorGroup>;
export type ErrorGroupsData = z.infer<typeof errorGroupsData>;
export type RealtimeData = z.infer<typeof realtimeData>;
