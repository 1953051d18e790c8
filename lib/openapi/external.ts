// The External API's part of the OpenAPI document (spec "External API", v1 and the Stats API v2), generated
// from the zod schemas the routes validate with and the lib functions return.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { annotationView } from '../accounts/annotationSchemas';
import { externalCreateWebsiteBody } from '../accounts/schemas';
import { anomaly } from '../external/anomalySchemas';
import {
  analyticsData,
  analyticsQuery,
  countriesData,
  customEventsData,
  envelope,
  errorGroupsData,
  errorGroupsQuery,
  goalsData,
  heatmapClicksData,
  heatmapClicksQuery,
  heatmapPagesData,
  heatmapPagesQuery,
  pagesData,
  realtimeData,
  replayEventsData,
  replaySessionParams,
  replaySessionsData,
  replaySessionsQuery,
  revenueData,
  technologyData,
  topListQuery,
  usageData,
  visitorsData,
  visitorsQuery,
  websiteData,
  websiteIdParams,
  websiteSummary,
  websitesData,
} from '../external/schemas';
import { CHANNELS } from '../stats/channel';
import {
  FILTER_KEYS,
  FILTER_OPERATORS,
  MAX_FILTER_DEPTH,
  METRICS,
  PROPERTIES,
  STATS_FORMATS,
  V2_FILTER_KEYS,
  V2_METRICS,
  V2_PROPERTIES,
} from '../stats/params';
import { MAX_REGEX } from '../stats/patterns';
import { INTERVALS, MAX_CUSTOM_DAYS, PERIODS, V2_INTERVALS } from '../stats/period';
import { z } from '../zod';
import { errorResponses, json, READER_SECURITY, SECURITY } from './common';

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request parameters (VALIDATION_ERROR, or a Stats API code); the message names the parameter. Also a path that is not valid percent-encoded UTF-8 or holds a control character, and a compressed body that does not decompress.',
  401: 'Missing or invalid API key (UNAUTHORIZED).',
  403: 'API_PAID_PLAN_REQUIRED for a free-plan team; PLAN_REQUIRED below the endpoint’s plan; FORBIDDEN for a site_access key on another website or a key without the needed scope.',
  404: 'The website does not exist or belongs to another team (NOT_FOUND).',
  415: 'Content-Encoding other than gzip, deflate or br (UNSUPPORTED_MEDIA_TYPE).',
  429: 'Per-minute rate limit or monthly quota exceeded (RATE_LIMITED); see Retry-After and X-RateLimit-*.',
  500: 'Server error (INTERNAL_ERROR).',
  503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
};

export const rateHeaders = z.object({
  'X-RateLimit-Limit': z.string().openapi({ description: 'Per-minute limit of the plan.' }),
  'X-RateLimit-Remaining': z.string(),
  'X-RateLimit-Reset': z.string().openapi({ description: 'Unix time the window resets.' }),
});

export const errors = (statuses: number[]) => errorResponses(STATUS_TEXT, statuses);

// ---- Stats API parameters and responses (the parser in lib/stats/params.ts checks them in the spec's order
// with its codes; these schemas are built from the same constants and document them) --------------------

export const period = z
  .string()
  .regex(new RegExp(`^(${PERIODS.join('|')}|custom:\\d{4}-\\d{2}-\\d{2},\\d{4}-\\d{2}-\\d{2})$`))
  .openapi({
    param: { description: `${PERIODS.join(', ')} or custom:YYYY-MM-DD,YYYY-MM-DD (at most ${MAX_CUSTOM_DAYS} days).` },
  });
export const statsBase = z.object({
  site_id: z.string().openapi({ format: 'uuid', param: { description: 'Website UUID.' } }),
  period,
  date: z
    .string()
    .optional()
    .openapi({
      format: 'date',
      param: { description: 'Anchor date (YYYY-MM-DD), default today in the website’s time zone.' },
    }),
  metrics: z
    .string()
    .openapi({ param: { description: `Comma-separated: ${METRICS.join(', ')}.` }, example: 'visitors,pageviews' }),
  filters: z
    .string()
    .optional()
    .openapi({
      param: {
        description: `Clauses joined by ';': key==value, key==v1,v2, key!=value. Keys: ${FILTER_KEYS.join(', ')}. source and utm_* are the visit's (its first pageview's) for every event of the visit.`,
      },
      example: 'country==US,DE;browser!=Chrome',
    }),
});
export const v2Extras = {
  filters: z
    .string()
    .optional()
    .openapi({
      param: {
        description: `v1 syntax, or a JSON array of clauses, all of which hold: [operator (${FILTER_OPERATORS.join(', ')}), key, [values]], or a group ["or", [clauses]], ["and", [clauses]], ["not", clause], nested at most ${MAX_FILTER_DEPTH} deep (deeper: FILTER_TOO_DEEP). Keys: ${V2_FILTER_KEYS.join(', ')}; every key but page is the visit's value (its first pageview's). matches and matches_not take RE2 regular expressions of at most ${MAX_REGEX} characters without back-references, look-around or possessive quantifiers (else INVALID_REGEX). channel is one of ${CHANNELS.join(', ')}. At the top level only (is, is_not, contains): the event's own goal (a goal's name; UNKNOWN_GOAL for another), name (a custom event's) and props:<key> (a custom property; keys of letters, digits and _ . - :).`,
      },
      example:
        '[["is","country",["US","DE"]],["or",[["is","channel",["Organic Search"]],["matches","page",["^/blog/"]]]]]',
    }),
  metrics: z.string().openapi({
    param: {
      description: `Comma-separated: ${V2_METRICS.join(', ')}. visits = sessions; views_per_visit = pageviews / visits (two decimals); time_on_page = engaged seconds per pageview. With goals, custom events or revenue (a goal, name or props filter, those breakdowns, or a revenue metric) the metrics are visitors (who converted), events (completions), conversion_rate (% of the visitors of the same question without its goal, name or props filters), total_revenue and average_revenue (objects {value, currency}: net purchases in the website currency).`,
    },
    example: 'visitors,visits,views_per_visit',
  }),
  format: z
    .enum(STATS_FORMATS)
    .optional()
    .openapi({
      param: {
        description:
          'Timeseries and breakdown: csv answers text/csv (the row key column, then the metrics; see docs "CSV export"); json the envelope. Without it, Accept: text/csv asks for CSV.',
      },
    }),
  compare: z
    .enum(['previous_period'])
    .optional()
    .openapi({
      param: {
        description:
          'Aggregate only: adds change (%) against the period before: the previous calendar month(s) for month, 6mo and 12mo, otherwise as many whole days ending the day before.',
      },
    }),
};
const interval = (intervals: readonly [string, ...string[]]) =>
  z
    .enum(intervals)
    .optional()
    .openapi({
      default: 'day',
      param: {
        description: `hour needs period day; month needs month, 6mo, 12mo or custom.${intervals.includes('week') ? ' week (v2: Monday to Sunday, labelled by its Monday) needs a period longer than a day.' : ''}`,
      },
    });
const breakdownParams = (properties: readonly string[], props: boolean) => ({
  property: props
    ? z.string().openapi({ param: { description: `One of ${properties.join(', ')}, or event:props:<key>.` } })
    : z.enum(properties as [string, ...string[]]),
  limit: z.number().int().min(1).max(1000).optional().openapi({ default: 100 }),
  page: z.number().int().min(1).optional().openapi({ default: 1 }),
});
const money = z
  .object({ value: z.number(), currency: z.string() })
  .openapi({ description: 'Revenue: two decimals, in the currency named' });
const metricValue = z
  .union([z.number(), money])
  .nullable()
  .openapi({ description: 'null when not computed (v1 with filters); revenue metrics are money' });
const v1Filter = z.object({
  key: z.enum(FILTER_KEYS),
  operator: z.enum(['is', 'is_not', 'contains']),
  values: z.array(z.string()),
});
const v2Filter = z.union([
  z.object({
    key: z.string().openapi({ description: `${V2_FILTER_KEYS.join(', ')}, goal, name or props:<key>` }),
    operator: z.enum(FILTER_OPERATORS),
    values: z.array(z.string()),
  }),
  z
    .object({ operator: z.enum(['or', 'and', 'not']), clauses: z.array(z.unknown()) })
    .openapi({ description: 'A filter group; its clauses are filters or groups of these shapes.' }),
]);
const statsMeta = (v2: boolean) =>
  z.object({
    period: z.string(),
    period_start: z.string().datetime().openapi({ description: 'The first instant of the period.' }),
    period_end: z
      .string()
      .datetime()
      .openapi({ description: 'The instant the period ends, exclusive: the local midnight after its last day.' }),
    filters_applied: z.array(v2 ? v2Filter : v1Filter),
    note: z.string().optional(),
  });
const aggregateData = (v2: boolean) =>
  z.object({
    results: z.record(
      z.enum((v2 ? V2_METRICS : METRICS) as [string, ...string[]]),
      z.object({ value: metricValue, change: z.number().nullable().optional() }),
    ),
    meta: statsMeta(v2).extend({
      compare: z.object({ period_start: z.string().datetime(), period_end: z.string().datetime() }).optional(),
    }),
  });
const timeseriesData = (v2: boolean) =>
  z.object({
    results: z.array(z.object({ date: z.string() }).catchall(metricValue)),
    meta: statsMeta(v2).extend({ interval: z.enum(v2 ? V2_INTERVALS : INTERVALS) }),
    ...(v2
      ? {
          annotations: z.array(annotationView).optional().openapi({
            description:
              'Signed-in readers only (JWT or session cookie; never with an API key): the website’s annotations whose occurred_at falls in the period, newest first, at most 500.',
          }),
          anomalies: z.array(anomaly).optional().openapi({
            description:
              'Signed-in readers only: the website’s anomalies whose hours overlap the period, oldest first, at most 200 (records as GET /anomalies/{websiteId} lists them).',
          }),
        }
      : {}),
  });
const breakdownData = (v2: boolean) =>
  z.object({
    results: z.array(z.record(z.string(), z.union([z.string(), z.number(), money, z.null()]))),
    meta: statsMeta(v2).extend({
      property: z.string(),
      pagination: z.object({
        page: z.number().int(),
        limit: z.number().int(),
        total: z.number().int(),
        has_more: z.boolean(),
      }),
    }),
  });

/** Headers of a download (a CSV answer, the site export). */
export const csvHeaders = z.object({
  'Content-Disposition': z
    .string()
    .openapi({ description: 'attachment; filename="<domain>-<endpoint>-<key>-<first day>-<last day>.csv"' }),
});
const csvContent = (name: string) => ({
  'text/csv': {
    schema: z.string().openapi({
      description: `RFC 4180, UTF-8, CRLF line ends: a header line (${name === 'timeseries' ? 'date' : 'the property’s short name (page, country, …)'}, then the requested metrics in order), one line per row of the JSON answer (the same page of a breakdown). Text starting with = + - @, a tab or a carriage return is prefixed with an apostrophe (formula injection).`,
      example: name === 'timeseries' ? 'date,visitors\r\n2026-03-29,2\r\n' : 'country,visitors\r\nDE,2\r\n',
    }),
  },
});

// ---- the document --------------------------------------------------------------------------------------

const BASE = '/api/external';

/** The openapi.json operation at each address the document is served from. */
export function registerDocumentPaths(r: OpenAPIRegistry, paths: readonly string[]): void {
  for (const path of paths) {
    r.registerPath({
      method: 'get',
      path,
      summary: 'This document (public; cached for 5 minutes)',
      tags: ['Document'],
      security: SECURITY.public,
      responses: {
        200: { description: 'OpenAPI 3.1.0 document', content: json(z.object({ openapi: z.string() }).passthrough()) },
      },
    });
  }
}

export function registerExternalApi(r: OpenAPIRegistry): void {
  const get = (
    path: string,
    summary: string,
    data: z.ZodType,
    opts: { query?: z.ZodObject; site?: boolean; keyOnly?: boolean; params?: z.ZodObject } = {},
  ) => {
    const statuses = [...(opts.query || opts.site ? [400] : []), 401, 403, ...(opts.site ? [404] : []), 429, 500, 503];
    r.registerPath({
      method: 'get',
      path: BASE + path,
      summary,
      tags: ['External API'],
      security: opts.keyOnly ? SECURITY.apiKey : READER_SECURITY,
      request: {
        ...(opts.site ? { params: opts.params ?? websiteIdParams } : {}),
        ...(opts.query ? { query: opts.query } : {}),
      },
      responses: {
        200: { description: 'Success', headers: rateHeaders, content: json(envelope(data)) },
        ...errors(statuses),
      },
    });
  };

  get(
    '/v1/usage',
    'Usage of the calling key and its team this month (API keys only: 403 for a signed-in user)',
    usageData,
    { keyOnly: true },
  );
  get('/v1/websites', 'Websites the key can see (site_access keys: only theirs)', websitesData);
  r.registerPath({
    method: 'post',
    path: `${BASE}/v1/websites`,
    tags: ['External API'],
    security: SECURITY.apiKey,
    summary: 'Create a website in the key’s team (full_access keys)',
    request: { body: { content: json(externalCreateWebsiteBody) } },
    responses: {
      201: { description: 'Created', content: json(envelope(z.object({ website: websiteSummary }))) },
      ...errors([400, 401, 403, 415, 429, 500, 503]),
    },
  });
  get('/v1/websites/{websiteId}', 'One website, full record', websiteData, { site: true });
  get('/v1/analytics/{websiteId}', 'Summary and daily stats over a range', analyticsData, {
    site: true,
    query: analyticsQuery,
  });
  get('/v1/analytics/{websiteId}/visitors', 'Visits, newest first, one record per visit', visitorsData, {
    site: true,
    query: visitorsQuery,
  });
  get('/v1/analytics/{websiteId}/pages', 'Top pages by views', pagesData, { site: true, query: topListQuery });
  get('/v1/analytics/{websiteId}/countries', 'Top countries by visitors', countriesData, {
    site: true,
    query: topListQuery,
  });
  get('/v1/analytics/{websiteId}/technology', 'Devices, browsers and operating systems by visitors', technologyData, {
    site: true,
    query: analyticsQuery,
  });
  get(
    '/v1/analytics/{websiteId}/goals',
    'Every goal with its completions and conversion rate over a range',
    goalsData,
    {
      site: true,
      query: analyticsQuery,
    },
  );
  get(
    '/v1/analytics/{websiteId}/events',
    'Custom events by completions, with their properties’ most frequent values',
    customEventsData,
    { site: true, query: topListQuery },
  );
  get(
    '/v1/analytics/{websiteId}/revenue',
    'Revenue over a range in the website currency: total, average, by day, by source',
    revenueData,
    { site: true, query: analyticsQuery },
  );
  get('/v1/heatmaps/{websiteId}/pages', 'Pages with heatmap clicks, all time', heatmapPagesData, {
    site: true,
    query: heatmapPagesQuery,
  });
  get('/v1/replays/{websiteId}/sessions', 'Recorded sessions, newest first', replaySessionsData, {
    site: true,
    query: replaySessionsQuery,
  });
  get(
    '/v1/heatmaps/{websiteId}/clicks',
    'One page’s click density on a grid, all time, with the most clicked elements',
    heatmapClicksData,
    { site: true, query: heatmapClicksQuery },
  );
  get(
    '/v1/replays/{websiteId}/sessions/{sessionId}/events',
    'One recorded session’s rrweb events, in order (404 when there is no such recording)',
    replayEventsData,
    { site: true, params: replaySessionParams },
  );
  get('/v1/errors/{websiteId}/groups', 'JavaScript error groups by last occurrence', errorGroupsData, {
    site: true,
    query: errorGroupsQuery,
  });
  get('/v1/track/realtime/{websiteId}', 'Live visitors (last 5 minutes) from presence data', realtimeData, {
    site: true,
  });

  for (const version of ['v1', 'v2'] as const) {
    const v2 = version === 'v2';
    const base = v2 ? statsBase.extend({ filters: v2Extras.filters, metrics: v2Extras.metrics }) : statsBase;
    const note =
      version === 'v1'
        ? ' V1: with filters only visitors is computed; events is approximated by pageviews.'
        : ' Every metric under any filter.';
    const stats = (name: string, query: z.ZodObject, data: z.ZodType) => {
      const csv = version === 'v2' && name !== 'aggregate';
      r.registerPath({
        method: 'get',
        path: `${BASE}/${version}/stats/${name}`,
        tags: ['Stats API'],
        security: READER_SECURITY,
        summary: `Stats API ${version}: ${name}.${note}${csv ? ' As CSV with format=csv or Accept: text/csv.' : ''}`,
        request: { query: csv ? query.extend({ format: v2Extras.format }) : query },
        responses: {
          200: {
            description: 'Success',
            headers: csv ? rateHeaders.extend(csvHeaders.shape) : rateHeaders,
            content: { ...json(envelope(data)), ...(csv ? csvContent(name) : {}) },
          },
          ...errors([400, 401, 403, 404, 429, 500, 503]),
        },
      });
    };
    stats('aggregate', v2 ? base.extend({ compare: v2Extras.compare }) : base, aggregateData(v2));
    stats('timeseries', base.extend({ interval: interval(v2 ? V2_INTERVALS : INTERVALS) }), timeseriesData(v2));
    stats('breakdown', base.extend(breakdownParams(v2 ? V2_PROPERTIES : PROPERTIES, v2)), breakdownData(v2));
  }
}
