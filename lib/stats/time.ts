// Calendar arithmetic in a website's time zone (DESIGN §3 "Analytics definitions"): local dates and hours to
// UTC instants, correct across daylight-saving changes, with nothing but Intl.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export interface LocalParts {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localParts(instant: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour,
    minute: parts.minute,
    second: parts.second,
  };
}

/** The zone's offset from UTC at an instant, in milliseconds (positive east of Greenwich). */
export function offsetAt(instant: number, timeZone: string): number {
  const p = localParts(instant, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The first instant at which the local wall clock shows the given date and hour. A wall time skipped by a
 * spring-forward change resolves to the instant the clocks jump to; a repeated one to its first occurrence.
 */
export function zonedToUtc(year: number, month: number, day: number, hour: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day, hour);
  // Two rounds settle the offset on either side of a change.
  let guess = wall - offsetAt(wall, timeZone);
  guess = wall - offsetAt(guess, timeZone);
  const earlier = guess - 3600_000;
  if (wall - offsetAt(earlier, timeZone) === earlier) return earlier; // repeated hour: take the first
  const p = localParts(guess, timeZone);
  if (Date.UTC(p.year, p.month - 1, p.day, p.hour) < wall) {
    // Skipped hour: the wall time does not exist; move to where the clocks land.
    return guess + 3600_000;
  }
  return guess;
}

export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

export function formatDate(d: LocalDate): string {
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
}

export function parseDate(text: string): LocalDate | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const d = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
  const check = new Date(Date.UTC(d.year, d.month - 1, d.day));
  if (check.getUTCFullYear() !== d.year || check.getUTCMonth() + 1 !== d.month || check.getUTCDate() !== d.day)
    return undefined;
  return d;
}

/** Calendar arithmetic on dates (no time zone involved). */
export function addDays(d: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

export function addMonths(d: LocalDate, months: number): LocalDate {
  const t = new Date(Date.UTC(d.year, d.month - 1 + months, 1));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: 1 };
}

export function daysBetween(a: LocalDate, b: LocalDate): number {
  return Math.round((Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day)) / 86_400_000);
}

/** The later of two dates. */
export const laterDate = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) > 0 ? b : a);
/** The earlier of two dates. */
export const earlierDate = (a: LocalDate, b: LocalDate) => (daysBetween(a, b) < 0 ? b : a);

export function today(timeZone: string, now = Date.now()): LocalDate {
  const p = localParts(now, timeZone);
  return { year: p.year, month: p.month, day: p.day };
}

/** Local midnight at the start of a date, as a UTC instant. */
export function startOfDay(d: LocalDate, timeZone: string): number {
  return zonedToUtc(d.year, d.month, d.day, 0, timeZone);
}

/** The hour buckets of a local date, as labels "YYYY-MM-DD HH:00:00": 23 on a spring-forward day, 24 otherwise
 *  (the repeated hour of a fall-back day is one bucket, as ClickHouse's local toStartOfHour groups it). */
export function hourLabels(d: LocalDate, timeZone: string): string[] {
  const from = startOfDay(d, timeZone);
  const to = startOfDay(addDays(d, 1), timeZone);
  const labels: string[] = [];
  for (let t = from; t < to; t += 3600_000) {
    const p = localParts(t, timeZone);
    const label = `${formatDate(p)} ${pad(p.hour)}:00:00`;
    if (labels[labels.length - 1] !== label) labels.push(label);
  }
  return labels;
}

/** An epoch-milliseconds value (ClickHouse returns 64-bit numbers as strings) as an ISO 8601 instant. */
export const isoFromMs = (ms: string | number): string => new Date(Number(ms)).toISOString();

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
/** A month's English name, 1 = January. */
export const monthName = (month: number): string => MONTHS[month - 1];
