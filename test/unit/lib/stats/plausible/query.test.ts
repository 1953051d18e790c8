// The Plausible request parser without a database: names through the tables, filter trees into the model's
// filters, date ranges and time buckets in a zone with a DST change.
import { HttpError } from '../../../../../lib/errors';
import { METRICS } from '../../../../../lib/stats/plausible/names';
import { parsePlausibleQuery, resolveRange, resolveTime, timeBuckets } from '../../../../../lib/stats/plausible/query';

const base = { site_id: 'example.com', metrics: ['visitors'], date_range: '7d' };
const refusal = (body: unknown) => {
  try {
    parsePlausibleQuery(body);
  } catch (err) {
    if (err instanceof HttpError) return [err.status, err.code, err.message];
    throw err;
  }
  throw new Error('accepted');
};
const berlin = 'Europe/Berlin';
const day = (text: string) => {
  const [year, month, d] = text.split('-').map(Number);
  return { year, month, day: d };
};

describe('parsePlausibleQuery', () => {
  it('maps names through the tables and keeps the request', () => {
    const q = parsePlausibleQuery({
      ...base,
      metrics: ['pageviews', 'visitors'],
      dimensions: ['visit:source', 'time'],
      order_by: [['visit:source', 'asc']],
      include: { total_rows: true },
      pagination: { limit: 5 },
    });
    expect(q.metrics).toEqual([
      { name: 'pageviews', model: 'pageviews' },
      { name: 'visitors', model: 'visitors' },
    ]);
    expect(q.breakdown).toEqual({ name: 'visit:source', model: 'source' });
    expect(q.time).toEqual({ name: 'time', model: 'time' });
    expect(q.include).toEqual({ imports: false, time_labels: false, total_rows: true });
    expect(q.pagination).toEqual({ limit: 5, offset: 0 });
    expect(q.orderBy).toEqual([['visit:source', 'asc']]);
  });

  it('flattens and groups, negates through not, and reads "(not set)" as the empty value', () => {
    const q = parsePlausibleQuery({
      ...base,
      filters: [
        [
          'and',
          [
            ['is', 'visit:country', ['US', '(not set)']],
            ['not', ['is_not', 'event:page', ['/a']]],
          ],
        ],
        ['not', ['is', 'visit:browser', ['Chrome']]],
        ['contains', 'event:page', ['/Docs'], { case_sensitive: false }],
      ],
    });
    expect(q.filters).toEqual([
      { key: 'country', operator: 'is', values: ['US', ''] },
      { key: 'page', operator: 'is', values: ['/a'] },
      { key: 'browser', operator: 'is_not', values: ['Chrome'] },
      { key: 'page', operator: 'contains', values: ['/Docs'] },
    ]);
  });

  it('refuses with a code and a message naming the part', () => {
    expect(refusal({ ...base, metrics: ['bogus'] })).toEqual([400, 'UNKNOWN_METRIC', "Unknown metric 'bogus'."]);
    expect(refusal({ ...base, metrics: ['visitors', 'visitors'] })[1]).toBe('INVALID_QUERY');
    expect(refusal({ ...base, dimensions: ['visit:screen'] })[1]).toBe('UNSUPPORTED_DIMENSIONS');
    expect(refusal({ ...base, dimensions: ['time:day', 'time:hour'] })[1]).toBe('UNSUPPORTED_DIMENSIONS');
    expect(refusal({ ...base, filters: [['is', 'visit:country', ['US'], { case_sensitive: false }]] })[1]).toBe(
      'UNSUPPORTED_FILTER',
    );
    expect(refusal({ ...base, filters: [['is', 'visit:country', ['US'], { exact: true }]] })[1]).toBe('INVALID_FILTER');
    expect(refusal({ ...base, filters: [['not', ['and', [['is', 'visit:os', ['Mac']]]]]] })[2]).toMatch(/'or'/);
    expect(refusal({ ...base, filters: [['has_done', ['is', 'event:page', ['/a']]]] })[2]).toMatch(/'has_done'/);
    expect(refusal({ ...base, filters: [['is', 'event:hostname', ['a.com']]] })[2]).toMatch(/'event:hostname'/);
    expect(refusal({ ...base, filters: [['is', 'event:props:', ['pro']]] })[1]).toBe('INVALID_PROPERTY_KEY');
    expect(refusal({ ...base, filters: [['and', []]] })[1]).toBe('INVALID_FILTER');
    expect(refusal({ ...base, filters: [['is', 'event:page', Array(101).fill('/')]] })[1]).toBe('INVALID_FILTER');
    expect(refusal({ ...base, filters: [['is', 'event:page', ['x'.repeat(501)]]] })[1]).toBe('INVALID_FILTER');
    expect(refusal('visitors')[1]).toBe('INVALID_QUERY');
    expect(refusal(undefined)[1]).toBe('INVALID_QUERY');
  });

  it('sends goal, event name and property filters to the conversion filters', () => {
    const q = parsePlausibleQuery({
      ...base,
      dimensions: ['event:props:plan'],
      filters: [
        ['is', 'event:goal', ['Signup']],
        ['not', ['is', 'event:name', ['Download']]],
        ['contains', 'event:props:method', ['mail']],
        ['is', 'visit:os', ['Mac']],
      ],
    });
    expect(q.breakdown).toEqual({ name: 'event:props:plan', model: 'props:plan' });
    expect(q.filters).toEqual([{ key: 'os', operator: 'is', values: ['Mac'] }]);
    expect(q.conversionFilters).toEqual([
      { key: 'goal', operator: 'is', values: ['Signup'] },
      { key: 'name', operator: 'is_not', values: ['Download'] },
      { key: 'props:method', operator: 'contains', values: ['mail'] },
    ]);
  });

  it('caps the depth of groups at 3 and the number of nodes', () => {
    const leaf = ['is', 'visit:os', ['Mac']];
    expect(parsePlausibleQuery({ ...base, filters: [['and', [['and', [leaf]]]]] }).filters).toHaveLength(1);
    expect(refusal({ ...base, filters: [['and', [['and', [['and', [leaf]]]]]]] })[1]).toBe('FILTERS_TOO_DEEP');
    const wide = Array.from({ length: 34 }, () => ['and', [leaf, leaf]]); // 102 nodes
    expect(refusal({ ...base, filters: wide })[1]).toBe('INVALID_FILTER');
  });

  it('has a table entry for every metric Plausible documents', () => {
    for (const name of [
      'visitors',
      'visits',
      'pageviews',
      'views_per_visit',
      'bounce_rate',
      'visit_duration',
      'events',
    ]) {
      expect(Object.hasOwn(METRICS, name)).toBe(true);
    }
  });
});

describe('ranges and time buckets', () => {
  const q = (date_range: unknown, extra: object = {}) => parsePlausibleQuery({ ...base, date_range, ...extra });

  it('resolves relative ranges on an anchor, in the zone', () => {
    const anchor = day('2026-03-29');
    expect(resolveRange(q('7d'), berlin, anchor, undefined)).toMatchObject({
      first: day('2026-03-23'),
      last: day('2026-03-29'),
      start: Date.parse('2026-03-22T23:00:00Z'),
      end: Date.parse('2026-03-29T22:00:00Z'),
    });
    expect(resolveRange(q('year'), berlin, anchor, undefined)).toMatchObject({
      first: day('2026-01-01'),
      last: day('2026-12-31'),
    });
    expect(resolveRange(q('28d'), berlin, anchor, undefined).first).toEqual(day('2026-03-02'));
    expect(resolveRange(q('all'), berlin, anchor, day('2025-11-05')).first).toEqual(day('2025-11-05'));
    expect(resolveRange(q('all'), berlin, anchor, undefined).first).toEqual(anchor);
    expect(() => resolveRange(q('custom:2026-01-01,2026-01-02'), berlin, anchor, undefined)).toThrow(/date_range/);
  });

  it('picks time by the span, as Plausible does', () => {
    const span = (a: string, b: string) => resolveRange(q([a, b]), berlin, day(a), undefined);
    expect(resolveTime('time', span('2026-03-29', '2026-03-29'))).toBe('time:hour');
    expect(resolveTime('time', span('2026-03-01', '2026-03-31'))).toBe('time:day');
    expect(resolveTime('time', span('2026-03-15', '2026-04-15'))).toBe('time:month');
    expect(resolveTime('time:day', span('2026-03-15', '2026-04-15'))).toBe('time:day');
  });

  it('lists hours of the spring-forward day and clips buckets to a date-time range', () => {
    const dst = resolveRange(q('day'), berlin, day('2026-03-29'), undefined);
    const hours = timeBuckets('time:hour', dst, berlin);
    expect(hours).toHaveLength(23);
    expect(hours[2]).toEqual({
      label: '2026-03-29 03:00:00',
      start: Date.parse('2026-03-29T01:00:00Z'),
      end: Date.parse('2026-03-29T02:00:00Z'),
    });
    const part = resolveRange(
      q(['2026-03-29T01:30:00+01:00', '2026-03-30T00:59:59+02:00']),
      berlin,
      day('2026-03-29'),
      undefined,
    );
    const days = timeBuckets('time:day', part, berlin);
    expect(days).toEqual([
      { label: '2026-03-29', start: Date.parse('2026-03-29T00:30:00Z'), end: Date.parse('2026-03-29T22:00:00Z') },
      { label: '2026-03-30', start: Date.parse('2026-03-29T22:00:00Z'), end: Date.parse('2026-03-29T23:00:00Z') },
    ]);
    expect(
      timeBuckets('time:month', resolveRange(q('6mo'), berlin, day('2026-03-29'), undefined), berlin).map(
        (b) => b.label,
      ),
    ).toEqual(['2025-10-01', '2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01']);
  });
});
