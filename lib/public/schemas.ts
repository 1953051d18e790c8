// The public endpoints' answers (spec "Public endpoints", DESIGN §3): aggregates only, never a visitor id, an
// address or a single visitor's path. An inactive website answers `{active: false}` with its message instead
// of numbers. The routes send these inside the success envelope; lib/openapi/public.ts documents them.
import { VERIFICATION_STATUSES } from '../accounts/settingsSchemas';
import { realtimeData } from '../external/schemas';
import { z } from '../zod';

const count = z.number().int().min(0);
const isoTime = z.string().datetime();

/** Tracking codes as the server issues them (lib/accounts/websites.ts); anything else is unknown. */
export const TRACKING_CODE = /^tm-[a-z0-9]{1,64}$/;

export const GEO_CREDIT = { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com' } as const;
const geoCredit = z
  .object({ text: z.literal(GEO_CREDIT.text), url: z.literal(GEO_CREDIT.url) })
  .openapi({ description: 'Country data comes from DB-IP’s database (CC BY 4.0), which requires this credit.' });

export const PAUSED_MESSAGE = 'Tracking is paused for this website';
const paused = z.object({
  active: z.literal(false),
  domain: z.string(),
  message: z.literal(PAUSED_MESSAGE),
});

const liveNumbers = z.object({
  active: z.literal(true),
  domain: z.string(),
  live_visitors: count.openapi({ description: 'Visitors seen in the last 5 minutes.' }),
  as_of: isoTime,
});
export const liveData = z.discriminatedUnion('active', [liveNumbers, paused]);

const realtimeWidgetNumbers = liveNumbers.extend({
  pageviews_last_30m: count,
});
export const realtimeWidgetData = z.discriminatedUnion('active', [realtimeWidgetNumbers, paused]);

const hour = z.object({
  hour: isoTime.openapi({ description: 'Start of the UTC hour.' }),
  visitors: count,
  pageviews: count,
});
const previewNumbers = z.object({
  active: z.literal(true),
  domain: z.string(),
  hours: z.array(hour).openapi({ description: 'The last 24 UTC hours, oldest first; the last one is under way.' }),
  totals: z.object({ visitors: count, pageviews: count }),
  as_of: isoTime,
});
export const previewWidgetData = z.discriminatedUnion('active', [previewNumbers, paused]);

const recentNumbers = z.object({
  active: z.literal(true),
  domain: z.string(),
  period: z.literal('last_24h'),
  countries: z
    .array(z.object({ country_code: z.string(), country_name: z.string(), visitors: count }))
    .openapi({ description: 'Up to 10 countries by visitors over the last 24 hours, most first.' }),
  attribution: geoCredit,
  as_of: isoTime,
});
export const recentWidgetData = z.discriminatedUnion('active', [recentNumbers, paused]);

const periodFigures = z.object({ visitors: count, pageviews: count });
const statsNumbers = z.object({
  active: z.literal(true),
  domain: z.string(),
  periods: z.object({ last_24h: periodFigures, last_7d: periodFigures, last_30d: periodFigures }),
  as_of: isoTime,
});
export const publicStatsData = z.discriminatedUnion('active', [statsNumbers, paused]);

export const trackingStatusData = z.object({
  tracking_code: z.string(),
  active: z.boolean().openapi({ description: 'False while the website’s tracking is paused.' }),
  verified: z.boolean().openapi({ description: 'True once the domain is verified (verification_status).' }),
  verification_status: z.enum(VERIFICATION_STATUSES),
  receiving_events: z
    .boolean()
    .nullable()
    .openapi({ description: 'A pageview arrived in the last 30 minutes; null while tracking is paused.' }),
  as_of: isoTime,
});

const realtimePaused = z.object({
  website_id: z.string(),
  active: z.literal(false),
  message: z.literal(PAUSED_MESSAGE),
});
export const publicRealtimeData = z.union([realtimeData, realtimePaused]);

export type LiveData = z.infer<typeof liveData>;
export type RealtimeWidgetData = z.infer<typeof realtimeWidgetData>;
export type PreviewWidgetData = z.infer<typeof previewWidgetData>;
export type RecentWidgetData = z.infer<typeof recentWidgetData>;
export type PublicStatsData = z.infer<typeof publicStatsData>;
export type TrackingStatusData = z.infer<typeof trackingStatusData>;
export type PublicRealtimeData = z.infer<typeof publicRealtimeData>;
export type Paused = z.infer<typeof paused>;
