import {
  bucketLabels,
  intervalAllowed,
  previousPeriod,
  type ResolvedPeriod,
  resolvePeriod,
  withinSupportedDates,
} from '../../../../lib/stats/period';
import { hourLabels, offsetAt, parseDate, today, zonedToUtc } from '../../../../lib/stats/time';

const iso = (t: number) => new Date(t).toISOString();
const d = (s: string) => parseDate(s)!;
const ok = (r: ReturnType<typeof resolvePeriod>) => r as ResolvedPeriod;

describe('zoned time', () => {
  it('maps local wall times to UTC across both Berlin changes of 2026', () => {
    const tz = 'Europe/Berlin';
    expect(iso(zonedToUtc(2026, 1, 15, 0, tz))).toBe('2026-01-14T23:00:00.000Z'); // CET, +1
    expect(iso(zonedToUtc(2026, 7, 15, 0, tz))).toBe('2026-07-14T22:00:00.000Z'); // CEST, +2
    // 29 March: 02:00 does not exist (clocks jump to 03:00 CEST).
    expect(iso(zonedToUtc(2026, 3, 29, 1, tz))).toBe('2026-03-29T00:00:00.000Z');
    expect(iso(zonedToUtc(2026, 3, 29, 2, tz))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(zonedToUtc(2026, 3, 29, 3, tz))).toBe('2026-03-29T01:00:00.000Z');
    // 25 October: 02:00 happens twice; the first is 00:00 UTC.
    expect(iso(zonedToUtc(2026, 10, 25, 2, tz))).toBe('2026-10-25T00:00:00.000Z');
    expect(iso(zonedToUtc(2026, 10, 25, 3, tz))).toBe('2026-10-25T02:00:00.000Z');
    expect(offsetAt(Date.parse('2026-07-01T00:00:00Z'), 'America/New_York')).toBe(-4 * 3600_000);
    expect(iso(zonedToUtc(2026, 11, 1, 0, 'America/New_York'))).toBe('2026-11-01T04:00:00.000Z');
    expect(iso(zonedToUtc(2026, 6, 1, 0, 'UTC'))).toBe('2026-06-01T00:00:00.000Z');
    expect(iso(zonedToUtc(2026, 6, 1, 0, 'Asia/Kolkata'))).toBe('2026-05-31T18:30:00.000Z');
  });

  it('gives 23 hour buckets on a spring-forward day and 24 (one for the repeated hour) on a fall-back day', () => {
    const spring = hourLabels(d('2026-03-29'), 'Europe/Berlin');
    expect(spring).toHaveLength(23);
    expect(spring.slice(0, 4)).toEqual([
      '2026-03-29 00:00:00',
      '2026-03-29 01:00:00',
      '2026-03-29 03:00:00',
      '2026-03-29 04:00:00',
    ]);
    const fall = hourLabels(d('2026-10-25'), 'Europe/Berlin');
    expect(fall).toHaveLength(24);
    expect(fall.filter((l) => l === '2026-10-25 02:00:00')).toHaveLength(1);
    expect(hourLabels(d('2026-06-10'), 'Europe/Berlin')).toHaveLength(24);
  });

  it('knows today in a zone', () => {
    expect(today('Pacific/Kiritimati', Date.parse('2026-11-22T12:00:00Z'))).toEqual({ year: 2026, month: 11, day: 23 });
    expect(today('Pacific/Pago_Pago', Date.parse('2026-11-22T05:00:00Z'))).toEqual({ year: 2026, month: 11, day: 21 });
  });
});

describe('periods', () => {
  const tz = 'Europe/Berlin';
  const anchor = d('2026-03-29');

  it('resolves every named period around the anchor date', () => {
    const bounds = (p: string) => {
      const r = ok(resolvePeriod(p, anchor, tz));
      return [r.first, r.last].map(
        (x) => `${x.year}-${String(x.month).padStart(2, '0')}-${String(x.day).padStart(2, '0')}`,
      );
    };
    expect(bounds('day')).toEqual(['2026-03-29', '2026-03-29']);
    expect(bounds('7d')).toEqual(['2026-03-23', '2026-03-29']);
    expect(bounds('30d')).toEqual(['2026-02-28', '2026-03-29']);
    expect(bounds('month')).toEqual(['2026-03-01', '2026-03-31']);
    expect(bounds('6mo')).toEqual(['2025-10-01', '2026-03-31']);
    expect(bounds('12mo')).toEqual(['2025-04-01', '2026-03-31']);
    expect(bounds('custom:2024-02-28,2024-03-01')).toEqual(['2024-02-28', '2024-03-01']);
  });

  it('bounds a day by local midnights: 23 h long on the spring-forward day', () => {
    const r = ok(resolvePeriod('day', anchor, tz));
    expect(iso(r.start)).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(r.end)).toBe('2026-03-29T22:00:00.000Z');
  });

  it('compares with the calendar period before: previous months, or as many whole local days', () => {
    const previous = (p: string, at = anchor) => {
      const r = previousPeriod(ok(resolvePeriod(p, at, tz)), tz);
      const day = (x: typeof r.first) =>
        `${x.year}-${String(x.month).padStart(2, '0')}-${String(x.day).padStart(2, '0')}`;
      return [day(r.first), day(r.last), iso(r.start), iso(r.end)];
    };
    // 29 March is 23 h long; the day before is a whole 24 h one, bounded by its local midnights.
    expect(previous('day')).toEqual([
      '2026-03-28',
      '2026-03-28',
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T23:00:00.000Z',
    ]);
    expect(previous('7d').slice(0, 2)).toEqual(['2026-03-16', '2026-03-22']);
    expect(previous('30d').slice(0, 2)).toEqual(['2026-01-29', '2026-02-27']);
    // March is compared with all of February (28 days), not with the 31 days before 1 March.
    expect(previous('month')).toEqual([
      '2026-02-01',
      '2026-02-28',
      '2026-01-31T23:00:00.000Z',
      '2026-02-28T23:00:00.000Z',
    ]);
    expect(previous('6mo').slice(0, 2)).toEqual(['2025-04-01', '2025-09-30']);
    expect(previous('12mo').slice(0, 2)).toEqual(['2024-04-01', '2025-03-31']);
    expect(previous('custom:2024-02-28,2024-03-01').slice(0, 2)).toEqual(['2024-02-25', '2024-02-27']);
  });

  it('refuses bad periods with the spec codes', () => {
    expect(resolvePeriod('week', anchor, tz)).toEqual({ error: 'INVALID_PERIOD' });
    expect(resolvePeriod('custom:2026-01-01', anchor, tz)).toEqual({ error: 'INVALID_CUSTOM_PERIOD' });
    expect(resolvePeriod('custom:2026-02-30,2026-03-01', anchor, tz)).toEqual({ error: 'INVALID_CUSTOM_PERIOD' });
    expect(resolvePeriod('custom:2026-03-02,2026-03-01', anchor, tz)).toEqual({ error: 'INVALID_CUSTOM_PERIOD' });
    expect(resolvePeriod('custom:2025-01-01,2026-01-02', anchor, tz)).toEqual({ error: 'PERIOD_TOO_LONG' }); // 367 days
    expect(ok(resolvePeriod('custom:2024-01-01,2024-12-31', anchor, tz)).last).toEqual(d('2024-12-31')); // 366 days
  });

  it('takes custom dates from 2000-01-01 to 2099-12-31 only: 1970 cannot be a ClickHouse bound', () => {
    expect(ok(resolvePeriod('custom:2000-01-01,2000-01-31', anchor, tz)).first).toEqual(d('2000-01-01'));
    expect(ok(resolvePeriod('custom:2099-12-01,2099-12-31', anchor, tz)).last).toEqual(d('2099-12-31'));
    for (const period of [
      'custom:1999-12-31,2000-01-01',
      'custom:1970-01-01,1970-01-01',
      'custom:1969-12-31,1970-01-02',
      'custom:2099-12-31,2100-01-01',
    ]) {
      expect(resolvePeriod(period, anchor, tz)).toEqual({ error: 'INVALID_CUSTOM_PERIOD' });
    }
    expect(withinSupportedDates(d('2000-01-01'), d('2099-12-31'))).toBe(true);
    expect(withinSupportedDates(d('1999-12-31'), d('2000-01-01'))).toBe(false);
  });

  it('lists every bucket and checks interval rules', () => {
    expect(bucketLabels(ok(resolvePeriod('7d', anchor, tz)), 'day', tz)).toEqual([
      '2026-03-23',
      '2026-03-24',
      '2026-03-25',
      '2026-03-26',
      '2026-03-27',
      '2026-03-28',
      '2026-03-29',
    ]);
    expect(bucketLabels(ok(resolvePeriod('6mo', anchor, tz)), 'month', tz)).toEqual([
      '2025-10-01',
      '2025-11-01',
      '2025-12-01',
      '2026-01-01',
      '2026-02-01',
      '2026-03-01',
    ]);
    expect(bucketLabels(ok(resolvePeriod('day', anchor, tz)), 'hour', tz)).toHaveLength(23);
    expect(intervalAllowed('hour', 'day')).toBe(true);
    expect(intervalAllowed('hour', '7d')).toBe(false);
    expect(intervalAllowed('month', 'custom:2026-01-01,2026-03-01')).toBe(true);
    expect(intervalAllowed('month', '30d')).toBe(false);
    expect(intervalAllowed('day', '12mo')).toBe(true);
  });
});
