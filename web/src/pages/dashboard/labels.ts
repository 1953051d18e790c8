// Words for the dashboard's dimensions, filter operators, values and time buckets, as a reader wants them.
import type { Filter, Interval } from './state';

const DIMENSIONS: Record<string, string> = {
  'visit:channel': 'Channel',
  'visit:source': 'Source',
  'visit:referrer': 'Referrer',
  'visit:utm_medium': 'UTM medium',
  'visit:utm_source': 'UTM source',
  'visit:utm_campaign': 'UTM campaign',
  'event:page': 'Page',
  'visit:entry_page': 'Entry page',
  'visit:exit_page': 'Exit page',
  'visit:country': 'Country',
  'visit:region': 'Region',
  'visit:city': 'City',
  'visit:device': 'Device',
  'visit:browser': 'Browser',
  'visit:os': 'Operating system',
  'event:goal': 'Goal',
  'event:name': 'Event',
};

export function dimensionLabel(dimension: string): string {
  if (dimension.startsWith('event:props:')) return `Property ${dimension.slice('event:props:'.length)}`;
  return DIMENSIONS[dimension] ?? dimension;
}

const OPERATORS: Record<Filter['op'], string> = { is: 'is', is_not: 'is not', contains: 'contains' };
export const operatorLabel = (op: Filter['op']) => OPERATORS[op];

let regions: Intl.DisplayNames | null | undefined;

/** A country code as its English name ('DE' → 'Germany'); the code when the browser has no name for it. */
function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  if (regions === undefined) {
    try {
      regions = new Intl.DisplayNames(['en'], { type: 'region' });
    } catch {
      regions = null;
    }
  }
  return regions?.of(code) ?? code;
}

/** A dimension's value as shown in a row or a chip. */
export function valueLabel(dimension: string, value: string): string {
  if (value === '' || value === '(not set)') return '(not set)';
  if (dimension === 'visit:country') return countryName(value);
  return value;
}

const utc = (label: string) => {
  const [y, m, d] = label.slice(0, 10).split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d, Number(label.slice(11, 13)) || 0));
};

/** A time bucket's label (`2026-03-29`, `2026-03-29 14:00:00`) in short words for the interval. */
export function bucketLabel(label: string, interval: Interval, oneDay: boolean): string {
  const date = utc(label);
  if (interval === 'hour') {
    const time = `${label.slice(11, 16)}`;
    return oneDay
      ? time
      : `${date.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' })} ${time}`;
  }
  if (interval === 'month') return date.toLocaleDateString('en', { month: 'short', year: 'numeric', timeZone: 'UTC' });
  return date.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** An instant as the site's local `YYYY-MM-DD HH:MM:SS`, comparable with bucket labels as text. */
export function localStamp(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}
