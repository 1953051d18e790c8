// Periods worked out in the browser: the period before a range (v2 has no include.comparisons) and the
// weeks of a range (v2 lists no time_labels for weeks). No DOM, no requests: unit-tested in Node.
import type { PlausibleQueryBody } from '../../../../lib/stats/plausible/query';

type DateRange = PlausibleQueryBody['date_range'];

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The period before a resolved range (v2's `query.date_range`, local times with offsets), of equal length:
 * whole days as dates (so the site's zone and a daylight-saving change keep the days whole), anything else
 * (the last 24 hours) as instants shifted by the range's length.
 */
export function previousRange(resolved: [string, string]): DateRange {
  const [from, to] = resolved;
  if (from.slice(11, 19) === '00:00:00' && to.slice(11, 19) === '23:59:59') {
    const first = Date.parse(`${from.slice(0, 10)}T00:00:00Z`);
    const last = Date.parse(`${to.slice(0, 10)}T00:00:00Z`);
    const days = Math.round((last - first) / DAY_MS) + 1;
    return [isoDay(first - days * DAY_MS), isoDay(first - DAY_MS)];
  }
  const start = Date.parse(from);
  // The end is inclusive to the second, as v2 reads it.
  const length = Date.parse(to) + 1000 - start;
  return [new Date(start - length).toISOString(), new Date(start - 1000).toISOString()];
}

/** Monday-started weeks overlapping a range, labelled by their Monday as v2 labels them (the first may start before the range). */
export function weekLabels(resolved: [string, string], found: string[]): string[] {
  const first = Date.parse(`${resolved[0].slice(0, 10)}T00:00:00Z`);
  const last = Date.parse(`${resolved[1].slice(0, 10)}T00:00:00Z`);
  const labels = new Set<string>();
  // Monday on or before the first day (getUTCDay: 0 is Sunday).
  let monday = first - ((new Date(first).getUTCDay() + 6) % 7) * DAY_MS;
  for (; monday <= last; monday += 7 * DAY_MS) labels.add(isoDay(monday));
  for (const label of found) labels.add(label);
  return [...labels].sort();
}
