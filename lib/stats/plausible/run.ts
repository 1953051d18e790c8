// Answers a parsed Plausible v2 query through the query model: the request becomes one StatsQuery (or one per
// time bucket when a time dimension comes with another), runStats answers each, and the rows are ordered,
// paginated and shaped as Plausible's {results, meta, query}.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { HttpError } from '../../errors';
import type { Dimension, MetricValues, StatsQuery } from '../model';
import { runStats } from '../run';
import { formatDate, type LocalDate, localParts, offsetAt, parseDate } from '../time';
import {
  anchorDate,
  bucketCount,
  MAX_COMBINED_BUCKETS,
  MAX_TIME_BUCKETS,
  type PlausibleRequest,
  type ResolvedRange,
  resolveRange,
  resolveTime,
  timeBuckets,
} from './query';

export interface PlausibleSite {
  id: string;
  domain: string;
  timezone: string;
}

/** A row before shaping: one value per requested dimension, in the request's order. */
interface Row {
  dimensions: string[];
  values: MetricValues;
}

/** How Plausible shows a dimension's unset value. */
const NOT_SET = '(not set)';
/** Time-bucket queries of one request run this many at a time. */
const BUCKET_CONCURRENCY = 4;

/** The local date of the website's first event; undefined when it has none. */
async function firstEventDay(clickhouse: ClickHouseClient, site: PlausibleSite): Promise<LocalDate | undefined> {
  const [row] = await selectRows<{ d: string }>(
    clickhouse,
    'SELECT toString(toDate(min(ts), {tz:String})) AS d FROM events WHERE website_id = {w:UUID} HAVING count() > 0',
    { w: site.id, tz: site.timezone },
  );
  return row ? parseDate(row.d) : undefined;
}

/** An instant as ISO 8601 in the zone, with its offset (`2024-09-10T00:00:00+02:00`). */
function isoInZone(instant: number, timeZone: string): string {
  const p = localParts(instant, timeZone);
  const offset = Math.round(offsetAt(instant, timeZone) / 60_000);
  const pad = (n: number) => String(Math.abs(n)).padStart(2, '0');
  const sign = offset < 0 ? '-' : '+';
  return `${formatDate(p)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** Runs `work` over the items, `n` at a time, keeping their order. */
async function inBatches<T, R>(items: readonly T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += n) out.push(...(await Promise.all(items.slice(i, i + n).map(work))));
  return out;
}

/** The rows of the question, unordered. */
async function queryRows(
  clickhouse: ClickHouseClient,
  base: Omit<StatsQuery, 'dimension'>,
  req: PlausibleRequest,
  time: Dimension | undefined,
  buckets: () => ReturnType<typeof timeBuckets>,
): Promise<Row[]> {
  const breakdown = req.breakdown?.model;
  // Each row's values in the order the request lists its dimensions.
  const placed = (timeLabel: string | undefined, key: string) =>
    req.dimensions.map((name) => (name === req.time?.name ? timeLabel! : key === '' ? NOT_SET : key));
  if (!time) {
    const rows = await runStats(clickhouse, { ...base, dimension: breakdown });
    if (!breakdown) return [{ dimensions: [], values: rows[0]?.values ?? {} }];
    return rows.map((r) => ({ dimensions: placed(undefined, r.key), values: r.values }));
  }
  // A bucket without data is no row (Plausible's time_labels name every bucket).
  const hasData = (values: MetricValues) => Object.values(values).some((v) => v !== 0);
  if (!breakdown) {
    const rows = await runStats(clickhouse, { ...base, dimension: time });
    return rows.filter((r) => hasData(r.values)).map((r) => ({ dimensions: [r.key], values: r.values }));
  }
  // The model answers one dimension per query: with time, each bucket is its own range, broken down.
  const all = buckets();
  if (all.length > MAX_COMBINED_BUCKETS) {
    throw new HttpError(
      400,
      'UNSUPPORTED_DIMENSIONS',
      `Dimensions '${req.time!.name}' and '${req.breakdown!.name}' together are answered for at most ${MAX_COMBINED_BUCKETS} time buckets; this range has ${all.length}. Use a coarser time dimension or a shorter date_range.`,
    );
  }
  const perBucket = await inBatches(all, BUCKET_CONCURRENCY, (b) =>
    runStats(clickhouse, { ...base, start: b.start, end: b.end, dimension: breakdown }),
  );
  return all.flatMap((b, i) => perBucket[i].map((r) => ({ dimensions: placed(b.label, r.key), values: r.values })));
}

/** Answers a parsed request for a website, in Plausible's response shape. */
export async function plausibleResponse(
  clickhouse: ClickHouseClient,
  site: PlausibleSite,
  req: PlausibleRequest,
  now = Date.now(),
) {
  const anchor = anchorDate(req, site.timezone, now);
  const firstDay = req.body.date_range === 'all' ? await firstEventDay(clickhouse, site) : undefined;
  const range: ResolvedRange = resolveRange(req, site.timezone, anchor, firstDay);
  const time = req.time && resolveTime(req.time.model, range);
  if (time && bucketCount(time, range) > MAX_TIME_BUCKETS) {
    throw new HttpError(
      400,
      'INVALID_DATE_RANGE',
      `Invalid date_range: '${req.time!.name}' over this range has more than ${MAX_TIME_BUCKETS} time buckets; use a coarser time dimension or a shorter date_range.`,
    );
  }
  // `time` is echoed and ordered by as the dimension it resolved to.
  const resolved = (name: string) => (req.time && name === req.time.name && time ? time : name);
  const dimensions = req.dimensions.map(resolved);
  const buckets = () => timeBuckets(time!, range, site.timezone);

  const base = {
    websiteId: site.id,
    timeZone: site.timezone,
    start: range.start,
    end: range.end,
    filters: req.filters,
    metrics: [...new Set(req.metrics.map((m) => m.model))],
  };
  const rows = await queryRows(clickhouse, base, req, time, buckets);

  const orderBy: [string, 'asc' | 'desc'][] = req.orderBy
    ? req.orderBy.map(([name, direction]) => [resolved(name), direction])
    : [...(time ? [[time, 'asc'] as [string, 'asc']] : []), [req.metrics[0].name, 'desc']];
  const metricOf = new Map(req.metrics.map((m) => [m.name, m.model]));
  const value = (row: Row, name: string): number | string => {
    const model = metricOf.get(name);
    return model ? (row.values[model] ?? 0) : row.dimensions[dimensions.indexOf(name)];
  };
  rows.sort((a, b) => {
    for (const [name, direction] of orderBy) {
      const [x, y] = [value(a, name), value(b, name)];
      if (x !== y) return (x < y ? -1 : 1) * (direction === 'asc' ? 1 : -1);
    }
    // Ties by the dimension values, ascending, as the Stats API breaks them.
    const [x, y] = [a.dimensions.join('\u0000'), b.dimensions.join('\u0000')];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const { limit, offset } = req.pagination;
  const page = rows.slice(offset, offset + limit);

  const include = Object.fromEntries(Object.entries(req.include).filter(([, on]) => on));
  return {
    results: page.map((r) => ({
      metrics: req.metrics.map((m) => r.values[m.model] ?? 0),
      dimensions: r.dimensions,
    })),
    meta: {
      ...(req.include.imports ? { imports_included: false } : {}),
      ...(req.include.time_labels ? { time_labels: buckets().map((b) => b.label) } : {}),
      ...(req.include.total_rows ? { total_rows: rows.length } : {}),
    },
    query: {
      site_id: site.domain,
      metrics: req.metrics.map((m) => m.name),
      date_range: [isoInZone(range.start, site.timezone), isoInZone(range.end - 1000, site.timezone)],
      filters: req.body.filters ?? [],
      dimensions,
      order_by: orderBy,
      include,
      pagination: { limit, offset },
    },
  };
}
