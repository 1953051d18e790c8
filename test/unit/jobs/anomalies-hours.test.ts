// Which hours a run of the anomaly job judges: the last complete UTC hour, or every complete hour of a day in
// the website's time zone (23 on a spring-forward day, none not yet over).
import { hoursToJudge } from '../../../jobs/anomalies';

const iso = (hours: number[]) => hours.map((h) => new Date(h).toISOString().slice(0, 13));

describe('hoursToJudge', () => {
  it('is the last complete hour without a date', () => {
    const now = Date.parse('2026-11-05T11:07:30Z');
    expect(iso(hoursToJudge({ id: 'w', timezone: 'UTC' }, {}, now))).toEqual(['2026-11-05T10']);
  });

  it('is every hour of the local day, 23 on the spring-forward day in Berlin', () => {
    const now = Date.parse('2026-04-01T00:00:00Z');
    const hours = iso(hoursToJudge({ id: 'w', timezone: 'Europe/Berlin' }, { date: '2026-03-29' }, now));
    expect(hours).toHaveLength(23);
    expect(hours[0]).toBe('2026-03-28T23'); // local midnight, CET
    expect(hours[22]).toBe('2026-03-29T21'); // local 23:00, CEST
  });

  it('stops at the last complete hour of a day still running, and refuses a malformed date', () => {
    const now = Date.parse('2026-11-05T03:30:00Z');
    expect(iso(hoursToJudge({ id: 'w', timezone: 'UTC' }, { date: '2026-11-05' }, now))).toEqual([
      '2026-11-05T00',
      '2026-11-05T01',
      '2026-11-05T02',
    ]);
    expect(() => hoursToJudge({ id: 'w', timezone: 'UTC' }, { date: '5 Nov' }, now)).toThrow(RangeError);
  });
});
