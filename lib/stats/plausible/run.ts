// Answers a parsed Plausible v2 query through the query model: the request becomes a StatsQuery (runStats), or a
// ConversionQuery (runConversions) when it is about goals, custom events or revenue — one per time bucket when
// a time dimension comes with another — and the rows are ordered, paginated and shaped as Plausible's
// {results, meta, query}.
import { type ClickHouseClient, selectRows } from '../../clickhouse/client';
import { HttpError } from '../../errors';
import type { ConversionContext } from '../api';
import { runConversions } from '../conversions';
import type { ConversionQuery, Dimension, MetricValues, ModelMetric, StatsRow } from '../model';
import { CONVERSION_METRICS, type ConversionMetric } from '../params';
import { runStats } from '../run';
import { formatDate, type LocalDate, localParts, offsetAt, parseDate } from '../time';
import { isConversionKey } from './names';
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
  /** The website's goals and currency, read only when a question is about conversions. */
  conversions?: () => Promise<ConversionContext>;
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

/** One read of the question over [start, end) by a dimension (or none): runStats or runConversions. */
type Runner = (start: number, end: number, dimension: string | undefined) => Promise<StatsRow[]>;

/** The rows of the question, unordered. */
async function queryRows(
  run: Runner,
  range: ResolvedRange,
  req: PlausibleRequest,
  time: Dimension | undefined,
  buckets: () => ReturnType<typeof timeBuckets>,
): Promise<Row[]> {
  const breakdown = req.breakdown?.model;
  // Each row's values in the order the request lists its dimensions.
  const placed = (timeLabel: string | undefined, key: string) =>
    req.dimensions.map((name) => (name === req.time?.name ? timeLabel! : key === '' ? NOT_SET : key));
  if (!time) {
    const rows = await run(range.start, range.end, breakdown);
    if (!breakdown) return [{ dimensions: [], values: rows[0]?.values ?? {} }];
    return rows.map((r) => ({ dimensions: placed(undefined, r.key), values: r.values }));
  }
  // A bucket without data is no row (Plausible's time_labels name every bucket).
  const hasData = (values: MetricValues) => Object.values(values).some((v) => v !== 0);
  if (!breakdown) {
    const rows = await run(range.start, range.end, time);
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
  const perBucket = await inBatches(all, BUCKET_CONCURRENCY, (b) => run(b.start, b.end, breakdown));
  return all.flatMap((b, i) =>
    perBucket[i]
      .filter((r) => hasData(r.values))
      .map((r) => ({ dimensions: placed(b.label, r.key), values: r.values })),
  );
}

const REVENUE: readonly ModelMetric[] = ['total_revenue', 'average_revenue'];

/**
 * The reader of a question: runConversions when it is about goals, custom events or revenue (as the Stats
 * API v2 decides, lib/stats/api.ts), runStats otherwise. Refuses what conversion questions cannot answer.
 */
async function runnerFor(
  clickhouse: ClickHouseClient,
  site: PlausibleSite,
  req: PlausibleRequest,
  range: ResolvedRange,
): Promise<{ run: Runner; currency?: string }> {
  const base = { websiteId: site.id, timeZone: site.timezone, filters: req.filters };
  const metrics = [...new Set(req.metrics.map((m) => m.model))];
  const byConversion = req.breakdown !== undefined && isConversionKey(req.breakdown.model);
  const asksConversions =
    byConversion ||
    req.conversionFilters.length > 0 ||
    metrics.some((m) => (CONVERSION_METRICS as readonly string[]).includes(m) && m !== 'visitors' && m !== 'events');
  if (!asksConversions) {
    return {
      run: (start, end, dimension) =>
        runStats(clickhouse, { ...base, start, end, metrics, dimension: dimension as Dimension | undefined }),
    };
  }
  const other = req.metrics.find((m) => !(CONVERSION_METRICS as readonly string[]).includes(m.model));
  if (other) {
    throw new HttpError(
      400,
      'UNSUPPORTED_METRIC',
      `Metric '${other.name}' cannot be combined with goals, custom events, properties or revenue yet; use ${CONVERSION_METRICS.join(', ')}.`,
    );
  }
  if (metrics.includes('conversion_rate') && !byConversion && req.conversionFilters.length === 0) {
    throw new HttpError(
      400,
      'CONVERSION_RATE_NEEDS_GOAL',
      "Metric 'conversion_rate' needs an event:goal, event:name or event:props filter or dimension.",
    );
  }
  const context = site.conversions ? await site.conversions() : { goals: [], currency: 'USD' };
  const names = new Set(context.goals.map((g) => g.name));
  for (const f of req.conversionFilters) {
    const unknown = f.key === 'goal' && f.operator !== 'contains' && f.values.find((v) => !names.has(v));
    if (unknown !== undefined && unknown !== false)
      throw new HttpError(400, 'UNKNOWN_GOAL', `The goal '${unknown.slice(0, 100)}' is not configured for this site.`);
  }
  const conversionBase = {
    ...base,
    conversionFilters: req.conversionFilters,
    goals: context.goals,
    currency: context.currency,
    metrics: metrics as ConversionMetric[],
  };
  return {
    currency: context.currency,
    run: (start, end, dimension) =>
      runConversions(clickhouse, {
        ...conversionBase,
        start,
        end,
        dimension: dimension as ConversionQuery['dimension'],
      }),
  };
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

  const { run, currency } = await runnerFor(clickhouse, site, req, range);
  const rows = await queryRows(run, range, req, time, buckets);

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
      // Revenue is money, as Plausible gives it: a value and the website's currency.
      metrics: req.metrics.map((m) => {
        const v = r.values[m.model] ?? 0;
        return currency && REVENUE.includes(m.model) ? { value: v, currency } : v;
      }),
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
