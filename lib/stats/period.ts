// Stats API periods and intervals (spec "Stats API", DESIGN §3): which local dates a request covers, the UTC
// instants that bound it, and every bucket label (zero-traffic buckets included) for its interval.
import {
  addDays,
  addMonths,
  daysBetween,
  formatDate,
  hourLabels,
  type LocalDate,
  parseDate,
  startOfDay,
  today,
} from './time';

export const PERIODS = ['day', '7d', '30d', 'month', '6mo', '12mo'] as const;
export const INTERVALS = ['day', 'hour', 'month'] as const;
/** v2 adds weeks (Monday to Sunday, labelled by their Monday). */
export const V2_INTERVALS = [...INTERVALS, 'week'] as const;
export type Interval = (typeof V2_INTERVALS)[number];
export const MAX_CUSTOM_DAYS = 366;

/**
 * The local dates a Stats period may cover. ClickHouse cannot take every instant as a bound: its Date ends in
 * 2149 and wraps below 1970 (a local midnight east of UTC on 1970-01-01 is a negative instant), and a
 * DateTime64 parameter of fewer than five digits (0 at 1970-01-01 UTC) does not parse. No event is older than
 * the service, so the range is wide on both sides and far inside those limits.
 */
export const FIRST_DATE: LocalDate = { year: 2000, month: 1, day: 1 };
export const LAST_DATE: LocalDate = { year: 2099, month: 12, day: 31 };
export const DATE_RANGE_TEXT = `${formatDate(FIRST_DATE)} to ${formatDate(LAST_DATE)}`;

/** Whether every date from `first` to `last` is a supported one. */
export function withinSupportedDates(first: LocalDate, last: LocalDate): boolean {
  return daysBetween(FIRST_DATE, first) >= 0 && daysBetween(last, LAST_DATE) >= 0;
}

export type PeriodError = 'INVALID_PERIOD' | 'INVALID_CUSTOM_PERIOD' | 'PERIOD_TOO_LONG';

export interface ResolvedPeriod {
  /** The period as given (`7d`, `custom:…`). */
  period: string;
  first: LocalDate;
  last: LocalDate;
  /** [start, end) as UTC instants: local midnight of `first`, local midnight after `last`. */
  start: number;
  end: number;
}

/** Checks a period's syntax (no time zone needed): the spec's code for what is wrong, or undefined. */
export function checkPeriod(period: string): PeriodError | undefined {
  if (!period.startsWith('custom:'))
    return (PERIODS as readonly string[]).includes(period) ? undefined : 'INVALID_PERIOD';
  const range = customRange(period);
  return 'error' in range ? range.error : undefined;
}

function customRange(period: string): { from: LocalDate; to: LocalDate } | { error: PeriodError } {
  const m = /^custom:(\d{4}-\d{2}-\d{2}),(\d{4}-\d{2}-\d{2})$/.exec(period);
  const from = m && parseDate(m[1]);
  const to = m && parseDate(m[2]);
  if (!from || !to || daysBetween(from, to) < 0 || !withinSupportedDates(from, to))
    return { error: 'INVALID_CUSTOM_PERIOD' };
  if (daysBetween(from, to) + 1 > MAX_CUSTOM_DAYS) return { error: 'PERIOD_TOO_LONG' };
  return { from, to };
}

/** Resolves a period around an anchor date in a time zone; an error names the spec's code. */
export function resolvePeriod(
  period: string,
  anchor: LocalDate,
  timeZone: string,
): ResolvedPeriod | { error: PeriodError } {
  let first: LocalDate;
  let last: LocalDate;
  if (period.startsWith('custom:')) {
    const range = customRange(period);
    if ('error' in range) return range;
    [first, last] = [range.from, range.to];
  } else {
    switch (period) {
      case 'day':
        [first, last] = [anchor, anchor];
        break;
      case '7d':
      case '30d':
        [first, last] = [addDays(anchor, period === '7d' ? -6 : -29), anchor];
        break;
      case 'month':
        first = { ...anchor, day: 1 };
        last = addDays(addMonths(anchor, 1), -1);
        break;
      case '6mo':
      case '12mo':
        first = addMonths(anchor, period === '6mo' ? -5 : -11);
        last = addDays(addMonths(anchor, 1), -1);
        break;
      default:
        return { error: 'INVALID_PERIOD' };
    }
  }
  return { period, first, last, start: startOfDay(first, timeZone), end: startOfDay(addDays(last, 1), timeZone) };
}

/**
 * The period a `compare=previous_period` question compares with, in whole local days: the calendar months
 * just before for `month`, `6mo` and `12mo`; otherwise as many days as the period has, ending the day before
 * it starts. Local midnights bound it, so a day shortened by a DST change is compared with the whole day before.
 */
export function previousPeriod(p: ResolvedPeriod, timeZone: string): ResolvedPeriod {
  const months = { month: 1, '6mo': 6, '12mo': 12 }[p.period];
  const last = addDays(p.first, -1);
  const first = months ? addMonths(p.first, -months) : addDays(p.first, -(daysBetween(p.first, p.last) + 1));
  return { period: p.period, first, last, start: startOfDay(first, timeZone), end: startOfDay(p.first, timeZone) };
}

/** Whether an interval may be used with a period (spec: hour only with day; month with 6mo, 12mo, month, custom). */
export function intervalAllowed(interval: Interval, period: string): boolean {
  if (interval === 'hour') return period === 'day';
  if (interval === 'week') return period !== 'day';
  if (interval === 'month') return ['6mo', '12mo', 'month'].includes(period) || period.startsWith('custom:');
  return true;
}

/**
 * Every bucket label of the period, in order: `YYYY-MM-DD`, `YYYY-MM-DD HH:00:00` (local), `YYYY-MM-01`, or for
 * weeks the Monday starting each (the first may be before the period starts, as a month's first day may).
 */
export function bucketLabels(p: ResolvedPeriod, interval: Interval, timeZone: string): string[] {
  const labels: string[] = [];
  if (interval === 'hour') {
    for (let d = p.first; daysBetween(d, p.last) >= 0; d = addDays(d, 1)) labels.push(...hourLabels(d, timeZone));
  } else if (interval === 'day') {
    for (let d = p.first; daysBetween(d, p.last) >= 0; d = addDays(d, 1)) labels.push(formatDate(d));
  } else if (interval === 'week') {
    for (let d = monday(p.first); daysBetween(d, p.last) >= 0; d = addDays(d, 7)) labels.push(formatDate(d));
  } else {
    for (let d = { ...p.first, day: 1 }; daysBetween(d, p.last) >= 0; d = addMonths(d, 1)) labels.push(formatDate(d));
  }
  return labels;
}

/** The Monday on or before a date (ISO weeks start on Monday, as ClickHouse's toMonday). */
export function monday(d: LocalDate): LocalDate {
  const weekday = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay(); // 0 = Sunday
  return addDays(d, -((weekday + 6) % 7));
}

/** The External API's ranges (DESIGN §3): `24h` = the last 24 hours; `Nd`/`1y` = that many calendar days ending
 *  today, inclusive; the legacy `today` = since local midnight. Days end at the next local midnight. */
export const RANGE_DAYS: Record<string, number> = { today: 1, '7d': 7, '30d': 30, '90d': 90, '1y': 365 };

export function resolveRange(range: string, timeZone: string, now = Date.now()): ResolvedPeriod {
  if (range === '24h') {
    const start = now - 86_400_000;
    return { period: range, first: today(timeZone, start), last: today(timeZone, now - 1), start, end: now };
  }
  const days = RANGE_DAYS[range];
  if (days === undefined) throw new RangeError(`unknown range ${range}`);
  const last = today(timeZone, now);
  const first = addDays(last, 1 - days);
  return {
    period: range,
    first,
    last,
    start: startOfDay(first, timeZone),
    end: startOfDay(addDays(last, 1), timeZone),
  };
}
