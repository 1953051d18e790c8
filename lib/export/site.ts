// The whole-site export (GET /api/external/v2/export): a ZIP of CSVs for a period, the way Plausible exports —
// the daily visitors timeseries and one breakdown per property. Each CSV is one Stats v2 answer
// (statsResponse), every row of it, so a file equals the JSON breakdown of the same parameters; the custom
// properties' file is the `event:props:<key>` breakdowns of the period's property keys, one after another.
import { type ClickHouseClient, withAbortSignal } from '../clickhouse/client';
import { statsResponse, type WebsiteRef } from '../stats/api';
import {
  type Metric,
  PROP_KEY,
  type Property,
  parseStatsParams,
  type StatsParamError,
  type StatsParams,
  type V2Metric,
} from '../stats/params';
import { propertyKeys } from '../stats/reads/eventProperties';
import { addDays, formatDate, startOfDay } from '../stats/time';
import { csvChunks, safeFileName } from './csv';
import { periodDates, statsCsv } from './stats';
import type { ZipEntry } from './zip';

interface ExportFile {
  file: string;
  metrics: readonly V2Metric[];
  /** A breakdown by this property; without one, the timeseries by day. */
  property?: Property;
}

const VISIT_METRICS: readonly Metric[] = ['visitors', 'pageviews', 'bounce_rate', 'visit_duration'];

/** The archive's files in order; a breakdown the query model offers is one more line here. */
export const SITE_EXPORT: readonly ExportFile[] = [
  { file: 'visitors.csv', metrics: ['visitors', 'pageviews', 'events', 'bounce_rate', 'visit_duration'] },
  { file: 'pages.csv', property: 'event:page', metrics: VISIT_METRICS },
  { file: 'entry_pages.csv', property: 'visit:entry_page', metrics: VISIT_METRICS },
  { file: 'exit_pages.csv', property: 'visit:exit_page', metrics: VISIT_METRICS },
  { file: 'channels.csv', property: 'visit:channel', metrics: VISIT_METRICS },
  { file: 'sources.csv', property: 'visit:source', metrics: VISIT_METRICS },
  { file: 'referrers.csv', property: 'visit:referrer', metrics: VISIT_METRICS },
  { file: 'utm_sources.csv', property: 'visit:utm_source', metrics: VISIT_METRICS },
  { file: 'utm_mediums.csv', property: 'visit:utm_medium', metrics: VISIT_METRICS },
  { file: 'utm_campaigns.csv', property: 'visit:utm_campaign', metrics: VISIT_METRICS },
  { file: 'countries.csv', property: 'visit:country', metrics: VISIT_METRICS },
  { file: 'regions.csv', property: 'visit:region', metrics: VISIT_METRICS },
  { file: 'cities.csv', property: 'visit:city', metrics: VISIT_METRICS },
  { file: 'devices.csv', property: 'visit:device', metrics: VISIT_METRICS },
  { file: 'browsers.csv', property: 'visit:browser', metrics: VISIT_METRICS },
  { file: 'operating_systems.csv', property: 'visit:os', metrics: VISIT_METRICS },
  {
    file: 'conversions.csv',
    property: 'event:goal',
    metrics: ['visitors', 'events', 'conversion_rate', 'total_revenue', 'average_revenue'],
  },
  { file: 'custom_events.csv', property: 'event:name', metrics: ['visitors', 'events', 'conversion_rate'] },
];

export const CUSTOM_PROPS_FILE = 'custom_props.csv';
/** Property keys the custom properties' file breaks down by, most used first. */
export const MAX_EXPORT_PROPERTY_KEYS = 100;
const PROPS_METRICS: readonly V2Metric[] = ['visitors', 'events'];

/** The export's parameters (site_id, period, date, filters), checked as the Stats v2 parameters are. */
export function parseExportParams(query: Record<string, unknown>): StatsParams | { error: StatsParamError } {
  const { site_id, period, date, filters } = query;
  return parseStatsParams({ site_id, period, date, filters, metrics: 'visitors' }, 'aggregate', 'v2');
}

/** The breakdown or timeseries parameters of one file of the export. */
export function exportFileParams(params: StatsParams, f: ExportFile): StatsParams {
  return {
    ...params,
    metrics: [...f.metrics],
    property: f.property,
    interval: 'day',
    limit: Number.MAX_SAFE_INTEGER,
    page: 1,
    compare: undefined,
    format: undefined,
  };
}

/** `shop.example.com-2026-03-01-2026-03-30.zip` */
export function exportFileName(domain: string, params: StatsParams, timeZone: string): string {
  const { first, last } = periodDates(params, timeZone);
  return safeFileName(`${domain}-${formatDate(first)}-${formatDate(last)}.zip`);
}

/**
 * The export's entries, one query each, run when the archive asks for the next file. When `signal` aborts
 * (the client went away) the query under way is cancelled and no other starts.
 */
export async function* siteExport(
  clickhouse: ClickHouseClient,
  website: WebsiteRef,
  params: StatsParams,
  signal?: AbortSignal,
): AsyncGenerator<ZipEntry> {
  const store = signal ? withAbortSignal(clickhouse, signal) : clickhouse;
  for (const f of SITE_EXPORT) {
    signal?.throwIfAborted();
    const endpoint = f.property ? 'breakdown' : 'timeseries';
    const p = exportFileParams(params, f);
    const answer = await statsResponse(store, website, endpoint, p, 'v2');
    yield { name: f.file, data: statsCsv(endpoint, p, answer) };
  }
  signal?.throwIfAborted();
  yield { name: CUSTOM_PROPS_FILE, data: await customPropsCsv(store, website, params) };
}

/** property,value,visitors,events: per property key of the period, its `event:props:<key>` breakdown's rows. */
async function customPropsCsv(clickhouse: ClickHouseClient, website: WebsiteRef, params: StatsParams) {
  const { first, last } = periodDates(params, website.timezone);
  const range = {
    websiteId: website.id,
    start: startOfDay(first, website.timezone),
    end: startOfDay(addDays(last, 1), website.timezone),
  };
  const rows: Record<string, string | number>[] = [];
  for (const key of await propertyKeys(clickhouse, range, MAX_EXPORT_PROPERTY_KEYS)) {
    if (!PROP_KEY.test(key)) continue; // a key the Stats API cannot name
    const p = exportFileParams(params, {
      file: CUSTOM_PROPS_FILE,
      property: `event:props:${key}`,
      metrics: PROPS_METRICS,
    });
    const answer = await statsResponse(clickhouse, website, 'breakdown', p, 'v2');
    for (const r of answer.results as Record<string, number | string>[]) {
      rows.push({ property: key, value: r[key], visitors: r.visitors, events: r.events });
    }
  }
  return csvChunks(['property', 'value', ...PROPS_METRICS], rows);
}
