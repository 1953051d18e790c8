// Stats v2's JSON filters: operators, groups and their depth, regular expressions; v1 keeps its grammar.
import { parseJsonFilters, parseStatsParams } from '../../../../lib/stats/params';
import { bucketLabels, resolvePeriod } from '../../../../lib/stats/period';
import { parseDate } from '../../../../lib/stats/time';

const SITE = '3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b';
const base = { site_id: SITE, period: '30d', metrics: 'visitors' };
const parse = (filters: unknown) => parseJsonFilters(JSON.stringify(filters));
const code = (filters: unknown) => {
  const r = parse(filters);
  return Array.isArray(r) ? 'OK' : r.code;
};
const v = (
  version: 'v1' | 'v2',
  q: Record<string, unknown>,
  endpoint: 'aggregate' | 'timeseries' | 'breakdown' = 'aggregate',
) => {
  const r = parseStatsParams({ ...base, ...q }, endpoint, version);
  return 'error' in r ? r.error.code : 'OK';
};

describe('v2 JSON filters', () => {
  it('reads the new operators and keys', () => {
    expect(
      parse([
        ['contains_not', 'page', ['/blog']],
        ['matches', 'referrer', ['\\.org$']],
        ['matches_not', 'city', ['^B']],
      ]),
    ).toEqual([
      { key: 'page', operator: 'contains_not', values: ['/blog'] },
      { key: 'referrer', operator: 'matches', values: ['\\.org$'] },
      { key: 'city', operator: 'matches_not', values: ['^B'] },
    ]);
    expect(
      code([
        ['is', 'channel', ['Organic Search']],
        ['is_not', 'region', ['Bavaria']],
      ]),
    ).toBe('OK');
  });

  it('reads or, and and not groups', () => {
    expect(
      parse([
        [
          'or',
          [
            ['is', 'country', ['DE']],
            ['not', ['is', 'page', ['/a']]],
          ],
        ],
      ]),
    ).toEqual([
      {
        operator: 'or',
        clauses: [
          { key: 'country', operator: 'is', values: ['DE'] },
          { operator: 'not', clauses: [{ key: 'page', operator: 'is', values: ['/a'] }] },
        ],
      },
    ]);
    expect(code([['and', [['is', 'country', ['DE']]]]])).toBe('OK');
  });

  it('nests groups three deep, not four: FILTER_TOO_DEEP', () => {
    const leaf = ['is', 'country', ['DE']];
    const three = ['or', [['and', [['not', leaf]]]]];
    expect(code([three])).toBe('OK');
    expect(code([['not', three]])).toBe('FILTER_TOO_DEEP');
  });

  it('refuses malformed groups', () => {
    expect(code([['or', []]])).toBe('VALIDATION_ERROR');
    expect(code([['or', ['is', 'country', ['DE']]]])).toBe('VALIDATION_ERROR'); // not an array of clauses
    expect(code([['not', ['is', 'planet', ['Mars']]]])).toBe('UNKNOWN_FILTER_KEY');
    expect(code([['or', [['is', 'country', []]]]])).toBe('EMPTY_FILTER_VALUE');
  });

  it('takes goal, name and props clauses at the top level only, with is, is_not or contains', () => {
    const conversions: unknown[] = [];
    const r = parseJsonFilters(
      JSON.stringify([
        ['is', 'goal', ['Signup']],
        [
          'or',
          [
            ['is', 'city', ['Berlin']],
            ['is', 'channel', ['Direct']],
          ],
        ],
      ]),
      conversions as never,
    );
    expect(r).toEqual([
      {
        operator: 'or',
        clauses: [
          { key: 'city', operator: 'is', values: ['Berlin'] },
          { key: 'channel', operator: 'is', values: ['Direct'] },
        ],
      },
    ]);
    expect(conversions).toEqual([{ key: 'goal', operator: 'is', values: ['Signup'] }]);
    const inGroup = parseJsonFilters(JSON.stringify([['not', ['is', 'goal', ['Signup']]]]), []);
    expect('code' in inGroup && inGroup.code).toBe('VALIDATION_ERROR');
    const matches = parseJsonFilters(JSON.stringify([['matches', 'name', ['^Sign']]]), []);
    expect('code' in matches && matches.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a regular expression RE2 lacks or that is too long: INVALID_REGEX naming the problem', () => {
    const r = parse([['matches', 'page', ['^/(a)\\1$']]]);
    expect(r).toEqual({ code: 'INVALID_REGEX', message: 'filter page: back-references are not supported' });
    expect(code([['matches_not', 'page', ['(?=x)']]])).toBe('INVALID_REGEX');
    expect(code([['or', [['matches', 'page', ['x'.repeat(257)]]]]])).toBe('INVALID_REGEX');
    expect(code([['matches', 'page', ['[']]])).toBe('INVALID_REGEX');
  });
});

describe('v2 parameters, v1 unchanged', () => {
  it('takes the new metrics, properties and the week interval in v2 only', () => {
    expect(v('v2', { metrics: 'visits,views_per_visit,time_on_page' })).toBe('OK');
    expect(v('v1', { metrics: 'visits' })).toBe('INVALID_METRIC');
    for (const property of ['visit:channel', 'visit:referrer', 'visit:city', 'visit:region']) {
      expect(v('v2', { property }, 'breakdown')).toBe('OK');
      expect(v('v1', { property }, 'breakdown')).toBe('INVALID_PROPERTY');
    }
    expect(v('v2', { interval: 'week' }, 'timeseries')).toBe('OK');
    expect(v('v2', { interval: 'week', period: 'day' }, 'timeseries')).toBe('INTERVAL_PERIOD_MISMATCH');
    expect(v('v1', { interval: 'week' }, 'timeseries')).toBe('VALIDATION_ERROR');
  });

  it('keeps the v1 filter grammar: no JSON, no new keys', () => {
    expect(v('v1', { filters: '[["is","country",["DE"]]]' })).toBe('VALIDATION_ERROR'); // no == or !=
    expect(v('v1', { filters: 'channel==Direct' })).toBe('UNKNOWN_FILTER_KEY');
    expect(v('v2', { filters: '[["not",["is","channel",["Direct"]]]]' })).toBe('OK');
  });
});

describe('week buckets', () => {
  it('label each week by its Monday, the first one on or before the period’s start', () => {
    const p = resolvePeriod('custom:2026-03-04,2026-03-23', parseDate('2026-03-23')!, 'UTC');
    if ('error' in p) throw new Error(p.error);
    expect(bucketLabels(p, 'week', 'UTC')).toEqual(['2026-03-02', '2026-03-09', '2026-03-16', '2026-03-23']);
  });
});
