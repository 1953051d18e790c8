// Parses a Plausible Stats API v2 request (POST /api/v2/query) once, at the edge: its shape with zod, then
// each name through the tables of names.ts, filters into the model's, and the date range into instants
// in the website's time zone. Every refusal is a 400 whose message names the part at fault.

import { text } from '../../accounts/storable';
import { HttpError } from '../../errors';
import { z } from '../../zod';
import type { Dimension, ModelMetric } from '../model';
import { type ConversionFilter, type ConversionKey, type Filter, PROP_KEY } from '../params';
import { DATE_RANGE_TEXT, resolvePeriod, withinSupportedDates } from '../period';
import { addDays, daysBetween, formatDate, type LocalDate, localParts, parseDate, startOfDay, today } from '../time';
import {
  DIMENSIONS,
  FILTER_DIMENSIONS,
  isConversionKey,
  LOGICAL_OPERATORS,
  lookup,
  METRICS,
  OPERATORS,
  TIME_DIMENSIONS,
} from './names';

/** How deep `and`/`not` groups may nest: a simple filter inside groups nested this deep is the deepest allowed. */
export const MAX_FILTER_DEPTH = 3;
const MAX_FILTER_NODES = 100;
const MAX_VALUES = 100;
const MAX_VALUE_LENGTH = 500;
/** A time dimension with another dimension is answered one time bucket at a time, for at most this many. */
export const MAX_COMBINED_BUCKETS = 31;
/** Time buckets a query may have at all (hours over a year fit, hours over years do not). */
export const MAX_TIME_BUCKETS = 10_000;
export const MAX_LIMIT = 10_000;

const nameText = z.string().min(1).max(200);

/** The request body as Plausible documents it (its JSON schema forbids other keys, and so does this one). */
export const plausibleQueryBody = z
  .object({
    // Looked up in PostgreSQL when it is a domain.
    site_id: text().min(1).max(253).openapi({ description: 'The website’s domain, or its UUID.' }),
    metrics: z.array(nameText).min(1).max(20),
    date_range: z.union([z.string().max(40), z.tuple([z.string().max(40), z.string().max(40)])]).openapi({
      description:
        'day, 7d, 28d, 30d, 91d, month, 6mo, 12mo, year, all, or [start, end] as ISO 8601 dates or date-times with an offset.',
    }),
    date: z
      .string()
      .max(10)
      .optional()
      .openapi({ description: 'The day relative ranges end on (YYYY-MM-DD); default today in the website’s zone.' }),
    dimensions: z.array(nameText).max(10).optional(),
    filters: z.array(z.unknown()).max(50).optional().openapi({
      description: '[operator, dimension, [values], modifiers?], or [and|or, [filters]], or [not, filter].',
    }),
    order_by: z
      .array(z.tuple([nameText, z.enum(['asc', 'desc'])]))
      .max(10)
      .optional(),
    include: z
      .object({
        imports: z.boolean().optional(),
        time_labels: z.boolean().optional(),
        total_rows: z.boolean().optional(),
        comparisons: z.unknown().optional(),
      })
      .strict()
      .optional(),
    pagination: z
      .object({
        limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
        offset: z.number().int().min(0).max(1_000_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type PlausibleQueryBody = z.infer<typeof plausibleQueryBody>;

type TimeDimension = Extract<Dimension, `time:${string}`>;
type Direction = 'asc' | 'desc';

/** A parsed request: names checked and mapped, filters in the model's terms, the range not yet resolved. */
export interface PlausibleRequest {
  body: PlausibleQueryBody;
  metrics: { name: string; model: ModelMetric }[];
  /** The requested dimensions, in order; `time` stays until the range decides it (resolveTime). */
  dimensions: string[];
  breakdown?: { name: string; model: Exclude<Dimension, TimeDimension> | ConversionKey };
  time?: { name: string; model: TimeDimension | 'time' };
  filters: Filter[];
  /** Filters on goals, custom event names and properties (lib/stats/conversions.ts). */
  conversionFilters: ConversionFilter[];
  orderBy?: [string, Direction][];
  include: { imports: boolean; time_labels: boolean; total_rows: boolean };
  pagination: { limit: number; offset: number };
}

const fail = (code: string, message: string) => new HttpError(400, code, message);
const show = (v: unknown) => JSON.stringify(v)?.slice(0, 120) ?? String(v);

/** Parses and checks a request body; throws a 400 HttpError naming what is wrong. */
export function parsePlausibleQuery(raw: unknown): PlausibleRequest {
  const parsed = plausibleQueryBody.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? issue.path.join('.') : 'body';
    const message =
      issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : issue.message.toLowerCase();
    throw fail('INVALID_QUERY', `Invalid query: ${where}: ${message}.`);
  }
  const body = parsed.data;

  const metrics = body.metrics.map((name) => {
    const found = lookup(METRICS, name);
    if (!found.known) throw fail('UNKNOWN_METRIC', `Unknown metric '${name}'.`);
    if (!found.value) throw fail('UNSUPPORTED_METRIC', `Metric '${name}' is not supported yet.`);
    return { name, model: found.value };
  });
  const repeated = body.metrics.find((m, i) => body.metrics.indexOf(m) !== i);
  if (repeated) throw fail('INVALID_QUERY', `Metric '${repeated}' is listed twice.`);

  const dimensions = body.dimensions ?? [];
  let breakdown: PlausibleRequest['breakdown'];
  let time: PlausibleRequest['time'];
  for (const name of dimensions) {
    const asTime = lookup(TIME_DIMENSIONS, name);
    const asBreakdown = lookup(DIMENSIONS, name);
    if (!asTime.known && !asBreakdown.known) throw fail('UNKNOWN_DIMENSION', `Unknown dimension '${name}'.`);
    if (!(asTime.value ?? asBreakdown.value))
      throw fail('UNSUPPORTED_DIMENSIONS', `Dimension '${name}' is not supported yet.`);
    checkPropKey(name);
    if (dimensions.indexOf(name) !== dimensions.lastIndexOf(name))
      throw fail('INVALID_QUERY', `Dimension '${name}' is listed twice.`);
    if (asTime.value) {
      if (time)
        throw fail('UNSUPPORTED_DIMENSIONS', `Only one time dimension per query: '${time.name}' and '${name}'.`);
      time = { name, model: asTime.value };
    } else if (asBreakdown.value) {
      if (breakdown) {
        throw fail(
          'UNSUPPORTED_DIMENSIONS',
          `Only one dimension besides time per query: '${breakdown.name}' and '${name}' cannot be combined yet.`,
        );
      }
      breakdown = { name, model: asBreakdown.value };
    }
  }

  const filters: Filter[] = [];
  const conversionFilters: ConversionFilter[] = [];
  const budget = { nodes: 0 };
  for (const node of body.filters ?? []) translateFilter(node, 1, false, { filters, conversionFilters }, budget);

  const include = {
    imports: body.include?.imports ?? false,
    time_labels: body.include?.time_labels ?? false,
    total_rows: body.include?.total_rows ?? false,
  };
  if (body.include?.comparisons !== undefined)
    throw fail('UNSUPPORTED_INCLUDE', 'include.comparisons is not supported yet.');
  if (include.time_labels && !time)
    throw fail('INVALID_QUERY', 'Invalid include.time_labels: it needs a time dimension.');

  const orderBy = body.order_by?.map(([name, direction]): [string, Direction] => {
    if (!body.metrics.includes(name) && !dimensions.includes(name)) {
      throw fail(
        'INVALID_ORDER_BY',
        `Invalid order_by entry '${show([name, direction])}': it is not a queried metric or dimension.`,
      );
    }
    return [name, direction];
  });

  return {
    body,
    metrics,
    dimensions,
    breakdown,
    time,
    filters,
    conversionFilters,
    orderBy,
    include,
    pagination: { limit: body.pagination?.limit ?? MAX_LIMIT, offset: body.pagination?.offset ?? 0 },
  };
}

/** A custom property's key is one the model can name (model.ts PROP_KEY); refused otherwise, never pasted. */
function checkPropKey(name: string) {
  if (name.startsWith('event:props:') && !PROP_KEY.test(name.slice('event:props:'.length))) {
    throw fail(
      'INVALID_PROPERTY_KEY',
      `Invalid property '${name.slice(0, 100)}': a key is 1 to 64 letters, digits or _ . - : characters.`,
    );
  }
}

type Translated = { filters: Filter[]; conversionFilters: ConversionFilter[] };

/**
 * One filter tree node into the model's filters (all joined by AND): `and` groups flatten, `not` negates a
 * simple filter whose operator has a negation, anything else is refused with its name.
 */
function translateFilter(node: unknown, depth: number, negated: boolean, out: Translated, budget: { nodes: number }) {
  if (++budget.nodes > MAX_FILTER_NODES)
    throw fail('INVALID_FILTER', `Invalid filters: more than ${MAX_FILTER_NODES} filters and groups.`);
  if (depth > MAX_FILTER_DEPTH) {
    throw fail(
      'FILTERS_TOO_DEEP',
      `Invalid filters: groups nest at most ${MAX_FILTER_DEPTH} deep (a filter at depth ${depth}).`,
    );
  }
  if (!Array.isArray(node) || typeof node[0] !== 'string')
    throw fail('INVALID_FILTER', `Invalid filter '${show(node)}'.`);
  const operator = node[0];

  const logical = lookup(LOGICAL_OPERATORS, operator);
  if (logical.known) {
    if (!logical.value) throw fail('UNSUPPORTED_FILTER', `Filter operator '${operator}' is not supported yet.`);
    if (logical.value === 'not') {
      if (node.length !== 2) throw fail('INVALID_FILTER', `Invalid filter '${show(node)}': use ["not", filter].`);
      return translateFilter(node[1], depth + 1, !negated, out, budget);
    }
    if (node.length !== 2 || !Array.isArray(node[1]) || node[1].length === 0)
      throw fail('INVALID_FILTER', `Invalid filter '${show(node)}': use ["and", [filters]].`);
    // not (a and b) is (not a) or (not b): an `or` the model cannot express yet.
    if (negated) throw fail('UNSUPPORTED_FILTER', `Filter operator 'or' is not supported yet (as "not" of "and").`);
    for (const child of node[1]) translateFilter(child, depth + 1, false, out, budget);
    return;
  }

  const op = lookup(OPERATORS, operator);
  if (!op.known) throw fail('UNKNOWN_FILTER_OPERATOR', `Unknown filter operator '${operator.slice(0, 50)}'.`);
  if (!op.value) throw fail('UNSUPPORTED_FILTER', `Filter operator '${operator}' is not supported yet.`);
  if (node.length < 3 || node.length > 4 || typeof node[1] !== 'string')
    throw fail('INVALID_FILTER', `Invalid filter '${show(node)}': use [operator, dimension, [values]].`);
  const dimension = node[1];
  checkPropKey(dimension);
  const key = lookup(FILTER_DIMENSIONS, dimension);
  if (!key.known) {
    if (lookup(TIME_DIMENSIONS, dimension).known)
      throw fail('INVALID_FILTER', `Invalid filter '${show(node)}': time dimensions are set by date_range.`);
    throw fail('UNKNOWN_DIMENSION', `Unknown dimension '${dimension.slice(0, 100)}' in filter '${show(node)}'.`);
  }
  if (!key.value) throw fail('UNSUPPORTED_FILTER', `Filtering by '${dimension}' is not supported yet.`);

  const values = node[2];
  if (
    !Array.isArray(values) ||
    values.length === 0 ||
    values.length > MAX_VALUES ||
    values.some((v) => typeof v !== 'string' || v.length > MAX_VALUE_LENGTH)
  ) {
    throw fail(
      'INVALID_FILTER',
      `Invalid filter '${show(node)}': its values are 1 to ${MAX_VALUES} strings of at most ${MAX_VALUE_LENGTH} characters.`,
    );
  }
  const modifiers = node[3];
  if (modifiers !== undefined) {
    const m = modifiers as Record<string, unknown>;
    if (typeof m !== 'object' || m === null || Object.keys(m).some((k) => k !== 'case_sensitive'))
      throw fail('INVALID_FILTER', `Invalid filter '${show(node)}': the only modifier is {"case_sensitive": boolean}.`);
    // contains already ignores letter case; is/is_not compare exactly.
    if (m.case_sensitive === false && op.value.model !== 'contains')
      throw fail('UNSUPPORTED_FILTER', `Modifier case_sensitive: false is supported with 'contains' only.`);
  }

  const model = negated ? op.value.negated : op.value.model;
  if (!model) throw fail('UNSUPPORTED_FILTER', `Filter operator 'not' of '${operator}' is not supported yet.`);
  // Plausible writes an unset value as "(not set)"; the model stores it as ''.
  const filter = { operator: model, values: (values as string[]).map((v) => (v === '(not set)' ? '' : v)) };
  if (isConversionKey(key.value)) out.conversionFilters.push({ key: key.value, ...filter });
  else out.filters.push({ key: key.value, ...filter });
}

/** The instants [start, end) a request covers and the local dates they fall on. */
export interface ResolvedRange {
  first: LocalDate;
  last: LocalDate;
  start: number;
  end: number;
}

const DAYS: Record<string, number> = { '28d': 28, '91d': 91 };
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The request's anchor date: `date`, or today in the zone. */
export function anchorDate(req: PlausibleRequest, timeZone: string, now: number): LocalDate {
  if (req.body.date === undefined) return today(timeZone, now);
  const date = parseDate(req.body.date);
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(req.body.date) || !withinSupportedDates(date, date))
    throw fail('INVALID_DATE_RANGE', `Invalid date '${req.body.date}': a date (YYYY-MM-DD) from ${DATE_RANGE_TEXT}.`);
  return date;
}

/**
 * The range of a request in a time zone. Relative ranges end on the anchor date and follow the Stats API's
 * periods (period.ts); `all` starts on the website's first day with events (`firstDay`, the anchor when none).
 */
export function resolveRange(
  req: PlausibleRequest,
  timeZone: string,
  anchor: LocalDate,
  firstDay: LocalDate | undefined,
): ResolvedRange {
  const range = req.body.date_range;
  const invalid = () =>
    fail('INVALID_DATE_RANGE', `Invalid date_range '${show(range)}': dates must lie within ${DATE_RANGE_TEXT}.`);
  const days = (first: LocalDate, last: LocalDate): ResolvedRange => {
    if (daysBetween(first, last) < 0 || !withinSupportedDates(first, last)) throw invalid();
    return { first, last, start: startOfDay(first, timeZone), end: startOfDay(addDays(last, 1), timeZone) };
  };
  if (Array.isArray(range)) {
    const [a, b] = range.map((d) => (/^\d{4}-\d{2}-\d{2}$/.test(d) ? parseDate(d) : undefined));
    if (a && b) return days(a, b);
    if (!ISO_DATE_TIME.test(range[0]) || !ISO_DATE_TIME.test(range[1]))
      throw fail('INVALID_DATE_RANGE', `Invalid date_range '${show(range)}': two ISO 8601 dates or date-times.`);
    // The last instant is inclusive, to the second, as Plausible reads it.
    const [start, end] = [Date.parse(range[0]), Date.parse(range[1]) + 1000];
    if (Number.isNaN(start) || Number.isNaN(end) || end <= start) throw invalid();
    const first = today(timeZone, start);
    const last = today(timeZone, end - 1);
    if (!withinSupportedDates(first, last)) throw invalid();
    return { first, last, start, end };
  }
  switch (range) {
    case 'year':
      return days({ year: anchor.year, month: 1, day: 1 }, { year: anchor.year, month: 12, day: 31 });
    case 'all':
      return days(firstDay && daysBetween(firstDay, anchor) >= 0 ? firstDay : anchor, anchor);
    case '28d':
    case '91d':
      return days(addDays(anchor, 1 - DAYS[range]), anchor);
  }
  const period = resolvePeriod(range, anchor, timeZone);
  if ('error' in period || range.startsWith('custom:')) {
    throw fail(
      'INVALID_DATE_RANGE',
      `Invalid date_range '${show(range)}': use day, 7d, 28d, 30d, 91d, month, 6mo, 12mo, year, all, or [start, end].`,
    );
  }
  return days(period.first, period.last);
}

/** `time` as Plausible reads it: by month over a range spanning a month or more, by day over several days, else by hour. */
export function resolveTime(model: TimeDimension | 'time', range: ResolvedRange): TimeDimension {
  if (model !== 'time') return model;
  const { first, last } = range;
  const months = (last.year - first.year) * 12 + last.month - first.month - (last.day < first.day ? 1 : 0);
  if (months > 0) return 'time:month';
  return daysBetween(first, last) > 0 ? 'time:day' : 'time:hour';
}

/** How many buckets a time dimension has over a range, at most (checked before they are listed). */
export function bucketCount(dimension: TimeDimension, range: ResolvedRange): number {
  const { first, last } = range;
  if (dimension === 'time:month') return (last.year - first.year) * 12 + last.month - first.month + 1;
  return (daysBetween(first, last) + 1) * (dimension === 'time:hour' ? 25 : 1);
}

export interface TimeBucket {
  label: string;
  start: number;
  end: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The time buckets of a range, in order, each clipped to the range, labelled as the model labels its rows:
 * `YYYY-MM-DD`, `YYYY-MM-01`, or `YYYY-MM-DD HH:00:00` local (a repeated hour of a fall-back day is one bucket).
 */
export function timeBuckets(dimension: TimeDimension, range: ResolvedRange, timeZone: string): TimeBucket[] {
  const raw: TimeBucket[] = [];
  if (dimension === 'time:hour') {
    const until = startOfDay(addDays(range.last, 1), timeZone);
    for (let t = startOfDay(range.first, timeZone); t < until; t += 3_600_000) {
      const p = localParts(t, timeZone);
      const label = `${formatDate(p)} ${pad(p.hour)}:00:00`;
      const previous = raw[raw.length - 1];
      if (previous?.label === label) previous.end = t + 3_600_000;
      else raw.push({ label, start: t, end: t + 3_600_000 });
    }
  } else {
    const month = dimension === 'time:month';
    let d: LocalDate = month ? { ...range.first, day: 1 } : range.first;
    while (daysBetween(d, range.last) >= 0) {
      const next = month
        ? { year: d.year + (d.month === 12 ? 1 : 0), month: (d.month % 12) + 1, day: 1 }
        : addDays(d, 1);
      raw.push({ label: formatDate(d), start: startOfDay(d, timeZone), end: startOfDay(next, timeZone) });
      d = next;
    }
  }
  return raw
    .map((b) => ({ label: b.label, start: Math.max(b.start, range.start), end: Math.min(b.end, range.end) }))
    .filter((b) => b.end > b.start);
}
