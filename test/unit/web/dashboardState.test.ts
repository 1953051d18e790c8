// The dashboard's URL state and the periods it works out itself (web/src/pages/dashboard/{state,period}.ts):
// pure functions, checked in Node.
import { previousRange, weekLabels } from '../../../web/src/pages/dashboard/period';
import { effectiveInterval, intervalsFor, parseState, serializeState } from '../../../web/src/pages/dashboard/state';

describe('previousRange', () => {
  it('takes the same number of whole days before a day range, across a daylight-saving change', () => {
    expect(previousRange(['2026-11-19T00:00:00+00:00', '2026-11-25T23:59:59+00:00'])).toEqual([
      '2026-11-12',
      '2026-11-18',
    ]);
    // March in Berlin: 31 days, CET to CEST.
    expect(previousRange(['2026-03-01T00:00:00+01:00', '2026-03-31T23:59:59+02:00'])).toEqual([
      '2026-01-29',
      '2026-02-28',
    ]);
  });

  it('shifts the last 24 hours by their length, to the second', () => {
    expect(previousRange(['2026-11-24T10:30:00+00:00', '2026-11-25T10:30:00+00:00'])).toEqual([
      '2026-11-23T10:29:59.000Z',
      '2026-11-24T10:29:59.000Z',
    ]);
  });
});

it('weekLabels names every Monday-started week of a range, the first before it when the range starts mid-week', () => {
  expect(weekLabels(['2026-11-01T00:00:00+00:00', '2026-11-30T23:59:59+00:00'], ['2026-11-09'])).toEqual([
    '2026-10-26',
    '2026-11-02',
    '2026-11-09',
    '2026-11-16',
    '2026-11-23',
    '2026-11-30',
  ]);
});

describe('parseState / serializeState', () => {
  it('round-trips filters whose values hold commas and percent signs', () => {
    const state = parseState(new URLSearchParams('range=7d&compare=1&interval=hour'));
    const next = {
      ...state,
      filters: [
        { dimension: 'visit:country', op: 'is' as const, values: ['DE', 'FR'] },
        { dimension: 'event:page', op: 'contains' as const, values: ['/a,b%20c'] },
      ],
    };
    const query = serializeState(next);
    expect(query).toBe(
      '?range=7d&compare=1&interval=hour&f=visit%3Acountry%2Cis%2CDE%2CFR&f=event%3Apage%2Ccontains%2C%2Fa%252Cb%252520c',
    );
    expect(parseState(new URLSearchParams(query))).toEqual(next);
  });

  it('falls back from what a hand-edited link gets wrong', () => {
    // An unknown range, a custom range without dates, an interval the range does not offer, a bad filter.
    expect(parseState(new URLSearchParams('range=forever&interval=hour&f=visit:country,like,DE'))).toEqual({
      range: '30d',
      from: undefined,
      to: undefined,
      compare: false,
      interval: null,
      filters: [],
    });
    expect(parseState(new URLSearchParams('range=custom&from=2026-11-20')).range).toBe('30d');
    // Dates the wrong way round are the days between them; a stray % is kept as text.
    const swapped = parseState(new URLSearchParams('range=custom&from=2026-11-20&to=2026-11-01&f=event:page,is,/100%'));
    expect([swapped.range, swapped.from, swapped.to]).toEqual(['custom', '2026-11-01', '2026-11-20']);
    expect(swapped.filters).toEqual([{ dimension: 'event:page', op: 'is', values: ['/100%'] }]);
  });

  it('offers the intervals that suit a range and picks its natural one', () => {
    expect(intervalsFor({ range: 'today' })).toEqual(['hour']);
    expect(intervalsFor({ range: '12mo' })).toEqual(['day', 'week', 'month']);
    expect(intervalsFor({ range: 'custom', from: '2026-11-01', to: '2026-11-05' })).toEqual(['hour', 'day']);
    const base = { compare: false, interval: null, filters: [] };
    expect(effectiveInterval({ ...base, range: '24h' })).toBe('hour');
    expect(effectiveInterval({ ...base, range: '30d' })).toBe('day');
    expect(effectiveInterval({ ...base, range: '6mo' })).toBe('month');
    expect(effectiveInterval({ ...base, range: '7d', interval: 'month' })).toBe('day');
    expect(effectiveInterval({ ...base, range: 'custom', from: '2026-01-01', to: '2026-11-01' })).toBe('month');
  });
});
