import { parseFilters, parseStatsParams } from '../../../../lib/stats/params';

const SITE = '3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b';
const base = { site_id: SITE, period: '7d', metrics: 'visitors' };
const code = (q: Record<string, unknown>, endpoint: 'aggregate' | 'timeseries' | 'breakdown' = 'aggregate') => {
  const r = parseStatsParams(q, endpoint);
  return 'error' in r ? r.error.code : 'OK';
};

describe('Stats v1 parameters', () => {
  it('names each missing parameter', () => {
    expect(code({})).toBe('MISSING_SITE_ID');
    expect(code({ site_id: SITE })).toBe('MISSING_PERIOD');
    expect(code({ site_id: SITE, period: '7d' })).toBe('MISSING_METRICS');
    expect(code(base, 'breakdown')).toBe('MISSING_PROPERTY');
    expect(code(base)).toBe('OK');
  });

  it('gives exactly one code per request, in the documented order', () => {
    // Everything wrong at once: the first check in the order wins.
    const bad = {
      site_id: SITE,
      period: 'week',
      metrics: 'clicks',
      property: 'visit:planet',
      interval: 'minute',
      filters: 'planet==mars',
    };
    expect(code({ ...bad, site_id: undefined }, 'breakdown')).toBe('MISSING_SITE_ID');
    expect(code({ ...bad, period: undefined }, 'breakdown')).toBe('MISSING_PERIOD');
    expect(code({ ...bad, metrics: undefined }, 'breakdown')).toBe('MISSING_METRICS');
    expect(code({ ...bad, property: undefined }, 'breakdown')).toBe('MISSING_PROPERTY');
    expect(code(bad, 'breakdown')).toBe('INVALID_METRIC');
    expect(code({ ...bad, metrics: 'visitors' }, 'breakdown')).toBe('INVALID_PROPERTY');
    expect(code({ ...bad, metrics: 'visitors', property: 'visit:os' }, 'breakdown')).toBe('INVALID_PERIOD');
    expect(code({ ...base, period: 'custom:2026-01-01' })).toBe('INVALID_CUSTOM_PERIOD');
    expect(code({ ...base, period: 'custom:2024-01-01,2025-01-01' })).toBe('PERIOD_TOO_LONG');
    expect(code({ ...base, interval: 'hour' }, 'timeseries')).toBe('INTERVAL_PERIOD_MISMATCH');
    expect(code({ ...base, interval: 'month' }, 'timeseries')).toBe('INTERVAL_PERIOD_MISMATCH');
    expect(code({ ...base, period: 'day', interval: 'hour' }, 'timeseries')).toBe('OK');
    expect(code({ ...base, period: '12mo', interval: 'month' }, 'timeseries')).toBe('OK');
    expect(code({ ...base, filters: 'planet==mars' })).toBe('UNKNOWN_FILTER_KEY');
    expect(code({ ...base, filters: 'country==' })).toBe('EMPTY_FILTER_VALUE');
    expect(code({ ...base, filters: 'country==US,' })).toBe('EMPTY_FILTER_VALUE');
  });

  it('answers VALIDATION_ERROR for other malformed values', () => {
    expect(code({ ...base, site_id: 'not-a-uuid' })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, interval: 'minute' }, 'timeseries')).toBe('VALIDATION_ERROR');
    expect(code({ ...base, date: '2026-13-01' })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, date: 'yesterday' })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, date: '2026-03-29' })).toBe('OK');
    expect(code({ ...base, date: '2026-03-29T10:00:00Z' })).toBe('OK');
    for (const limit of ['0', '1001', 'abc', '-1', '1.5'])
      expect(code({ ...base, property: 'visit:os', limit }, 'breakdown')).toBe('VALIDATION_ERROR');
    expect(code({ ...base, property: 'visit:os', limit: '1000', page: '3' }, 'breakdown')).toBe('OK');
    expect(code({ ...base, property: 'visit:os', page: '0' }, 'breakdown')).toBe('VALIDATION_ERROR');
    expect(code({ ...base, filters: 'country' })).toBe('VALIDATION_ERROR');
  });

  it('keeps every period within 2000-01-01 to 2099-12-31: custom dates, the date anchor, and what compare adds', () => {
    expect(code({ ...base, period: 'custom:1970-01-01,1970-01-02' })).toBe('INVALID_CUSTOM_PERIOD');
    expect(code({ ...base, period: 'custom:1999-12-31,2000-01-01' })).toBe('INVALID_CUSTOM_PERIOD');
    expect(code({ ...base, period: 'custom:2000-01-01,2000-01-02' })).toBe('OK');
    expect(code({ ...base, period: 'day', date: '1970-01-01' })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, period: 'day', date: '2000-01-01' })).toBe('OK');
    // The anchor is inside, but the 7 days ending on it are not.
    expect(code({ ...base, period: '7d', date: '2000-01-06' })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, period: '7d', date: '2000-01-07' })).toBe('OK');
    expect(code({ ...base, period: 'month', date: '2099-12-15' })).toBe('OK');
    expect(code({ ...base, period: 'day', date: '2100-01-01' })).toBe('VALIDATION_ERROR');
    const v2 = (q: Record<string, unknown>) => {
      const r = parseStatsParams(q, 'aggregate', 'v2');
      return 'error' in r ? r.error.code : 'OK';
    };
    expect(v2({ ...base, period: 'month', date: '2000-01-15', compare: 'previous_period' })).toBe('VALIDATION_ERROR');
    expect(v2({ ...base, period: 'month', date: '2000-02-15', compare: 'previous_period' })).toBe('OK');
    expect(v2({ ...base, period: 'custom:2000-01-01,2000-01-10', compare: 'previous_period' })).toBe(
      'VALIDATION_ERROR',
    );
    expect(v2({ ...base, period: 'custom:2000-01-11,2000-01-20', compare: 'previous_period' })).toBe('OK');
  });

  it('treats injection attempts as bad values, never as SQL', () => {
    expect(code({ ...base, metrics: "visitors'); DROP TABLE events; --" })).toBe('INVALID_METRIC');
    expect(code({ ...base, property: "event:page' OR 1=1", metrics: 'visitors' }, 'breakdown')).toBe(
      'INVALID_PROPERTY',
    );
    expect(code({ ...base, period: "7d' --" })).toBe('INVALID_PERIOD');
    const r = parseStatsParams({ ...base, filters: "page==/x' OR '1'='1" }, 'aggregate');
    expect('error' in r ? r.error : r.filters).toEqual([{ key: 'page', operator: 'is', values: ["/x' OR '1'='1"] }]);
  });

  it('parses the filter grammar', () => {
    expect(parseFilters('country==US,DE;browser!=Chrome;page==/blog')).toEqual([
      { key: 'country', operator: 'is', values: ['US', 'DE'] },
      { key: 'browser', operator: 'is_not', values: ['Chrome'] },
      { key: 'page', operator: 'is', values: ['/blog'] },
    ]);
    expect(parseFilters('')).toEqual([]);
  });

  it('keeps metrics once each, in order', () => {
    const r = parseStatsParams({ ...base, metrics: 'pageviews,visitors,pageviews' }, 'aggregate');
    expect('error' in r ? r.error : r.metrics).toEqual(['pageviews', 'visitors']);
  });
});

describe('parameters given more than once, and v2 specifics', () => {
  const v2 = (q: Record<string, unknown>, endpoint: 'aggregate' | 'timeseries' | 'breakdown' = 'aggregate') => {
    const r = parseStatsParams(q, endpoint, 'v2');
    return 'error' in r ? r.error.code : 'OK';
  };

  it('refuses a repeated or nested parameter with VALIDATION_ERROR before any other check, never reading one copy', () => {
    // Express parses `filters=a&filters=b` into an array and `filters[x]=a` into an object.
    expect(code({ ...base, filters: ['country==US', 'browser==Chrome'] })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, filters: { x: 'country==US' } })).toBe('VALIDATION_ERROR');
    expect(code({ site_id: [SITE, SITE] })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, metrics: ['visitors', 'pageviews'] })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, date: ['2026-03-29', '2026-03-30'] })).toBe('VALIDATION_ERROR');
    expect(code({ ...base, property: 'visit:os', limit: ['10', '20'] }, 'breakdown')).toBe('VALIDATION_ERROR');
    const r = parseStatsParams({ ...base, filters: ['country==US'] }, 'aggregate');
    expect('error' in r && r.error.message).toMatch(/filters must be given once/);
    // Parameters the endpoints do not read are not checked.
    expect(code({ ...base, utm: ['a', 'b'] })).toBe('OK');
  });

  it('takes compare on aggregate only', () => {
    expect(v2({ ...base, compare: 'previous_period' })).toBe('OK');
    expect(v2({ ...base, compare: 'previous_period' }, 'timeseries')).toBe('VALIDATION_ERROR');
    expect(v2({ ...base, property: 'visit:os', compare: 'previous_period' }, 'breakdown')).toBe('VALIDATION_ERROR');
    expect(v2({ ...base, compare: 'last_year' })).toBe('VALIDATION_ERROR');
  });

  it('takes format (json or csv) on v2 only, csv on timeseries and breakdown only', () => {
    const parsed = parseStatsParams({ ...base, format: 'csv' }, 'timeseries', 'v2');
    expect('error' in parsed ? parsed.error : parsed.format).toBe('csv');
    expect(v2({ ...base, property: 'visit:os', format: 'csv' }, 'breakdown')).toBe('OK');
    expect(v2({ ...base, format: 'json' })).toBe('OK');
    expect(v2({ ...base, format: 'csv' })).toBe('VALIDATION_ERROR'); // aggregate
    expect(v2({ ...base, format: 'xlsx' }, 'timeseries')).toBe('VALIDATION_ERROR');
    expect(v2({ ...base, format: ['csv', 'json'] }, 'timeseries')).toBe('VALIDATION_ERROR');
    // v1's parameter set is the spec's: format is not one of them, so it is not read at all.
    const v1 = parseStatsParams({ ...base, format: 'csv' }, 'timeseries', 'v1');
    expect('error' in v1 ? v1.error : v1.format).toBeUndefined();
    expect(code({ ...base, format: ['csv', 'json'] })).toBe('OK');
  });

  it('names a JSON filter without values EMPTY_FILTER_VALUE, like the v1 grammar', () => {
    expect(v2({ ...base, filters: '[["is","country",[]]]' })).toBe('EMPTY_FILTER_VALUE');
    expect(v2({ ...base, filters: '[["is","country",[""]]]' })).toBe('EMPTY_FILTER_VALUE');
    expect(v2({ ...base, filters: '[["is","country","US"]]' })).toBe('VALIDATION_ERROR');
    expect(v2({ ...base, filters: '[["is","planet",[]]]' })).toBe('UNKNOWN_FILTER_KEY');
    expect(v2({ ...base, filters: '[["is","country",["US"]]]' })).toBe('OK');
  });
});
