// The stats plan as a truth table, without a store: coverage × range × filters × dimension → which parts of
// a query read daily rollups, a merged window or raw events.
import type { DayVersion, LateMark, RollupCoverage } from '../../../../lib/stats/coverage';
import type { ConversionQuery, Dimension, GoalDefinition, ModelMetric, StatsQuery } from '../../../../lib/stats/model';
import type { Filter, FilterClause } from '../../../../lib/stats/params';
import {
  type CoverageFacts,
  planConversions,
  planDays,
  planEventBreakdowns,
  planStats,
  type StatsPlan,
  usesRawOnly,
} from '../../../../lib/stats/plan';
import { addDays, formatDate, parseDate } from '../../../../lib/stats/time';

const TZ = 'UTC';
const VERSION = 1_000_000;
const day = (d: string) => Date.parse(`${d}T00:00:00Z`);

/** Days [first, last] rolled up at VERSION (`superseded`: those also stored at an older version). */
function coverage(first: string, last: string, superseded: string[] = []): RollupCoverage {
  const days = new Map<string, DayVersion>();
  for (let d = parseDate(first)!; formatDate(d) <= last; d = addDays(d, 1)) {
    days.set(formatDate(d), {
      version: VERSION,
      final: true,
      superseded: superseded.includes(formatDate(d)),
      reach: 0,
    });
  }
  return { first: parseDate(first)!, last: parseDate(last)!, days, newest: VERSION, oldest: VERSION };
}

/** A late mark on a day's noon, newer than its version: the day is stale. */
const lateOn = (d: string): LateMark => ({ bucket: day(d) + 12 * 3600_000, marked: VERSION + 1 });

const iso = (ms: number) =>
  ms % 86_400_000 === 0 ? new Date(ms).toISOString().slice(0, 10) : new Date(ms).toISOString().slice(0, 16);

/** A plan in one line: rolled days | raw windows | where visit values come from | each part's sources. */
function describePlan(p: StatsPlan): string {
  const days = p.days
    ? `${p.days.firstDay}..${p.days.lastDay}${p.days.skipDays.length ? ` skip ${p.days.skipDays.join(',')}` : ''}`
    : '-';
  const raw = p.raw.map((w) => `${iso(w.start)}..${iso(w.end)}`).join(',') || '-';
  const around = p.visits.around.map((w) => `${iso(w.start)}..${iso(w.end)}`).join(',') || '-';
  const visits = p.visits.days
    ? `visits visit_values ${p.visits.days.firstDay}..${p.visits.days.lastDay} + around ${around}`
    : `visits around ${around}`;
  const events = p.events
    ? [
        p.events.daily ? `daily(${p.events.daily})` : '',
        p.events.raw ? (p.events.direct ? 'raw(direct)' : 'raw') : '',
        p.events.window
          ? `window(${[p.events.window.visitors && 'visitors', p.events.window.sums && 'sums', p.events.window.totalOnly && 'total only'].filter(Boolean).join(',')})`
          : '',
      ]
        .filter(Boolean)
        .join('+')
    : '-';
  const sessions = p.sessions
    ? [
        p.sessions.rolled ? `${p.sessions.rolled.from}${p.sessions.rolled.filtered ? '(attrs)' : ''}` : '',
        p.sessions.raw ? 'raw' : '',
      ]
        .filter(Boolean)
        .join('+')
    : '-';
  const scores = p.pageScores
    ? [p.pageScores.daily ? 'daily' : '', p.pageScores.raw ? 'raw' : ''].filter(Boolean).join('+')
    : '-';
  return `rollups ${days} | raw ${raw} | ${visits} | events ${events} | sessions ${sessions} | scores ${scores}`;
}

const ALL: ModelMetric[] = ['visitors', 'pageviews', 'events', 'visits', 'bounce_rate'];
const country: Filter = { key: 'country', operator: 'is', values: ['DE'] };
const source: Filter = { key: 'source', operator: 'is', values: ['Google'] };
const page: Filter = { key: 'page', operator: 'is', values: ['/'] };
const city: Filter = { key: 'city', operator: 'is', values: ['Berlin'] };
const region: Filter = { key: 'region', operator: 'is', values: ['Bavaria'] };

interface Case {
  facts: CoverageFacts;
  range?: [number, number];
  filters?: FilterClause[];
  dimension?: Dimension;
  metrics?: ModelMetric[];
  total?: boolean;
}

const MARCH = coverage('2026-03-01', '2026-03-10');
const WEEK: [number, number] = [day('2026-03-02'), day('2026-03-09')];

const plan = (c: Case) => {
  const [start, end] = c.range ?? WEEK;
  const q: StatsQuery = {
    websiteId: 'w',
    timeZone: TZ,
    start,
    end,
    metrics: c.metrics ?? ALL,
    filters: c.filters ?? [],
    dimension: c.dimension,
    total: c.total,
  };
  return describePlan(planStats(q, c.facts));
};

describe('planStats', () => {
  it.each<[string, Case, string]>([
    [
      'no rollups: everything raw',
      { facts: {} },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'rolled-up days: daily rows only',
      { facts: { coverage: MARCH } },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(sketches) | sessions daily | scores -',
    ],
    [
      'a range past the rolled-up days: daily rows and the raw tail',
      { facts: { coverage: MARCH }, range: [day('2026-03-08'), day('2026-03-13')] },
      'rollups 2026-03-08..2026-03-10 | raw 2026-03-11..2026-03-13 | visits around 2026-03-11..2026-03-13 | events daily(sketches)+raw | sessions daily+raw | scores -',
    ],
    [
      'a range not of whole days (24h): raw',
      { facts: { coverage: MARCH }, range: [day('2026-03-05') + 3600_000, day('2026-03-06') + 3600_000] },
      'rollups - | raw 2026-03-05T01:00..2026-03-06T01:00 | visits around 2026-03-05T01:00..2026-03-06T01:00 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'by hour: raw',
      { facts: { coverage: MARCH }, dimension: 'time:hour' },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'a stale day: read raw between rolled-up days',
      { facts: { coverage: MARCH, marks: [lateOn('2026-03-05')] } },
      'rollups 2026-03-02..2026-03-08 skip 2026-03-05 | raw 2026-03-05..2026-03-06 | visits around 2026-03-05..2026-03-06 | events daily(sketches)+raw | sessions daily+raw | scores -',
    ],
    [
      'a stale first day: the rolled-up days start after it',
      { facts: { coverage: MARCH, marks: [lateOn('2026-03-02')] } },
      'rollups 2026-03-03..2026-03-08 | raw 2026-03-02..2026-03-03 | visits around 2026-03-02..2026-03-03 | events daily(sketches)+raw | sessions daily+raw | scores -',
    ],
    [
      'filtered on attributes alone: the attrs rollups, visits of matching combinations, no session sets',
      { facts: { coverage: MARCH }, filters: [country] },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(sketches) | sessions daily(attrs) | scores -',
    ],
    [
      'filtered on attributes by day: the days’ own visitor counts cannot serve (several attrs rows a day)',
      { facts: { coverage: MARCH }, filters: [country], dimension: 'time:day' },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(sketches) | sessions daily(attrs) | scores -',
    ],
    [
      'filtered on attributes past the rolled-up days: session sets of the raw tail only',
      { facts: { coverage: MARCH }, filters: [country], range: [day('2026-03-08'), day('2026-03-13')] },
      'rollups 2026-03-08..2026-03-10 | raw 2026-03-11..2026-03-13 | visits around 2026-03-11..2026-03-13 | events daily(sketches)+raw | sessions daily(attrs)+raw | scores -',
    ],
    [
      'filtered on source: raw, the sessions of rolled-up days from visit_values, the edges folded',
      { facts: { coverage: MARCH }, filters: [source] },
      'rollups - | raw 2026-03-02..2026-03-09 | visits visit_values 2026-03-02..2026-03-08 + around 2026-03-02..2026-03-02,2026-03-09..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'filtered on an attribute with a breakdown: raw',
      { facts: { coverage: MARCH }, filters: [country], dimension: 'browser' },
      'rollups - | raw 2026-03-02..2026-03-09 | visits visit_values 2026-03-02..2026-03-08 + around 2026-03-02..2026-03-02,2026-03-09..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'filtered on the page: raw',
      { facts: { coverage: MARCH }, filters: [page] },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'a breakdown with a kept window: its sketches and sums',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'country' },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events window(visitors,sums) | sessions window | scores -',
    ],
    [
      'a window over a stale day: its sketches, the other days’ daily sums',
      { facts: { coverage: MARCH, marks: [lateOn('2026-03-05')], windowRun: '7' }, dimension: 'country' },
      'rollups 2026-03-02..2026-03-08 skip 2026-03-05 | raw 2026-03-05..2026-03-06 | visits around 2026-03-05..2026-03-06 | events daily(no visitors)+raw+window(visitors) | sessions daily+raw | scores -',
    ],
    [
      'by day with a total and a window: the window for the total, the days’ own counts',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'time:day', total: true },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(day counts)+window(visitors,total only) | sessions daily | scores -',
    ],
    [
      'by day without a total: the days’ own counts, no window',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'time:day' },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(day counts) | sessions daily | scores -',
    ],
    [
      'by entry page: visits only, no window sums for it',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'entry_page' },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events - | sessions daily | scores -',
    ],
    [
      'value scores by page: every page a visit viewed',
      {
        facts: { coverage: MARCH },
        dimension: 'page',
        metrics: ['pageviews', 'value_score'],
        range: [day('2026-03-08'), day('2026-03-12')],
      },
      'rollups 2026-03-08..2026-03-10 | raw 2026-03-11..2026-03-12 | visits around 2026-03-11..2026-03-12 | events daily(no visitors)+raw | sessions - | scores daily+raw',
    ],
    [
      'pageviews alone: no visitor sketches read',
      { facts: { coverage: MARCH, windowRun: '7' }, metrics: ['pageviews'] },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events window(sums) | sessions - | scores -',
    ],
    [
      'by channel: raw, the rollups hold no channel',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'channel' },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'filtered on the city: raw, its visit values folded (visit_values holds no city)',
      { facts: { coverage: MARCH }, filters: [city] },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'a region clause deep in a group: raw, no visit_values',
      {
        facts: { coverage: MARCH },
        filters: [{ operator: 'or', clauses: [page, { operator: 'not', clauses: [region] }] }],
      },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'a group of attributes: raw (the attrs rows answer clauses joined by AND only), their visits from visit_values',
      { facts: { coverage: MARCH }, filters: [{ operator: 'or', clauses: [country, { ...country, values: ['FR'] }] }] },
      'rollups - | raw 2026-03-02..2026-03-09 | visits visit_values 2026-03-02..2026-03-08 + around 2026-03-02..2026-03-02,2026-03-09..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
    [
      'matches on an attribute: the attrs rollups',
      { facts: { coverage: MARCH }, filters: [{ key: 'country', operator: 'matches', values: ['^D'] }] },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(sketches) | sessions daily(attrs) | scores -',
    ],
    [
      'by week: daily rows, as by month',
      { facts: { coverage: MARCH, windowRun: '7' }, dimension: 'time:week' },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(sketches) | sessions daily | scores -',
    ],
    [
      'views per visit: pageviews and visits from the rollups',
      { facts: { coverage: MARCH }, metrics: ['views_per_visit'] },
      'rollups 2026-03-02..2026-03-08 | raw - | visits around - | events daily(no visitors) | sessions daily | scores -',
    ],
    [
      'time on page: raw (the rollups hold no engaged time)',
      { facts: { coverage: MARCH, windowRun: '7' }, metrics: [...ALL, 'time_on_page'] },
      'rollups - | raw 2026-03-02..2026-03-09 | visits around 2026-03-02..2026-03-09 | events raw(direct) | sessions raw | scores -',
    ],
  ])('%s', (_name, c, expected) => {
    expect(plan(c)).toBe(expected);
  });

  it('reads engaged time from raw events in a part of its own, by entry page from the visits', () => {
    const q: StatsQuery = {
      websiteId: 'w',
      timeZone: TZ,
      start: WEEK[0],
      end: WEEK[1],
      metrics: ['time_on_page'],
      filters: [],
    };
    expect(usesRawOnly(q)).toBe(true);
    expect(planStats(q, { coverage: MARCH }).engagement).toEqual({ raw: true });
    const byEntry = planStats({ ...q, dimension: 'entry_page' }, { coverage: MARCH });
    expect([byEntry.engagement, byEntry.sessions]).toEqual([undefined, { raw: true, rolled: undefined }]);
    expect(usesRawOnly({ ...q, metrics: ['visitors'], dimension: 'region' })).toBe(true);
    expect(usesRawOnly({ ...q, metrics: ['visitors'], dimension: 'source' })).toBe(false);
  });

  it('refuses keys without a breakdown and a total without a time dimension', () => {
    const q: StatsQuery = { websiteId: 'w', timeZone: TZ, start: WEEK[0], end: WEEK[1], metrics: ALL, filters: [] };
    expect(() => planStats({ ...q, keys: ['a'] }, {})).toThrow(RangeError);
    expect(() => planStats({ ...q, dimension: 'page', total: true }, {})).toThrow(RangeError);
  });
});

describe('planDays', () => {
  it('pins superseded days to their version and skips nothing else', () => {
    const p = planDays(
      { timeZone: TZ, start: WEEK[0], end: WEEK[1] },
      { coverage: coverage('2026-03-01', '2026-03-10', ['2026-03-04']) },
    );
    expect(p).toMatchObject({
      firstDay: '2026-03-02',
      lastDay: '2026-03-08',
      pinned: [['2026-03-04', VERSION]],
      skipDays: [],
      newestInRange: VERSION,
      rawWindows: [],
    });
  });

  it('answers nothing when every day of the range is stale or not rolled up', () => {
    expect(
      planDays(
        { timeZone: TZ, start: day('2026-03-10'), end: day('2026-03-11') },
        { coverage: MARCH, marks: [lateOn('2026-03-10')] },
      ),
    ).toBeUndefined();
    expect(
      planDays({ timeZone: TZ, start: day('2026-03-12'), end: day('2026-03-14') }, { coverage: MARCH }),
    ).toBeUndefined();
  });
});

describe('planEventBreakdowns', () => {
  const q = { websiteId: 'w', timeZone: TZ, start: WEEK[0], end: WEEK[1], filters: [] as Filter[] };
  it('reads rolled-up days from the window’s sums when no day between is stale', () => {
    expect(planEventBreakdowns(q, { coverage: MARCH, windowRun: '7' })).toMatchObject({
      run: '7',
      sums: true,
      raw: [],
    });
    expect(planEventBreakdowns(q, { coverage: MARCH, marks: [lateOn('2026-03-05')], windowRun: '7' })).toMatchObject({
      run: '7',
      sums: false,
    });
  });
  it('filtered: the whole range raw, visit values of rolled-up days from visit_values', () => {
    const p = planEventBreakdowns({ ...q, filters: [country] }, { coverage: MARCH, windowRun: '7' });
    expect(p).toMatchObject({ days: undefined, run: undefined, sums: false, raw: [{ start: WEEK[0], end: WEEK[1] }] });
    expect(p.visits.days?.firstDay).toBe('2026-03-02');
  });
});

describe('planConversions', () => {
  const signup: GoalDefinition = { name: 'Signup', kind: 'event', path: null };
  const docs: GoalDefinition = { name: 'Docs', kind: 'page', path: '/docs/*' };
  const question = (over: Partial<ConversionQuery>): ConversionQuery => ({
    websiteId: 'w',
    timeZone: TZ,
    start: WEEK[0],
    end: WEEK[1],
    filters: [],
    metrics: ['visitors'],
    conversionFilters: [],
    dimension: 'goal',
    goals: [signup, docs],
    currency: 'USD',
    ...over,
  });
  const facts: CoverageFacts = { coverage: MARCH, windowRun: '7' };
  const describeConversions = (over: Partial<ConversionQuery>, goals = [signup, docs], f = facts) => {
    const p = planConversions(question(over), goals, f);
    if (!p) return 'raw';
    const raw = p.days.rawWindows.map((w) => `${iso(w.start)}..${iso(w.end)}`).join(',') || '-';
    return `${p.run ? 'window' : 'daily'} ${p.days.firstDay}..${p.days.lastDay} | raw ${raw}`;
  };

  it.each<[string, Partial<ConversionQuery>, GoalDefinition[], CoverageFacts, string]>([
    ['by goal: the window', {}, [signup, docs], facts, 'window 2026-03-02..2026-03-08 | raw -'],
    [
      'by goal without a window: daily rows',
      {},
      [signup, docs],
      { coverage: MARCH },
      'daily 2026-03-02..2026-03-08 | raw -',
    ],
    [
      'a total past the rolled-up days: the rest raw',
      { dimension: undefined, end: day('2026-03-13') },
      [docs],
      facts,
      'window 2026-03-02..2026-03-10 | raw 2026-03-11..2026-03-13',
    ],
    ['by day: daily rows only', { dimension: 'time:day' }, [docs], facts, 'daily 2026-03-02..2026-03-08 | raw -'],
    ['no page goal: raw', {}, [signup], facts, 'raw'],
    ['a visit filter: raw', { filters: [country] }, [signup, docs], facts, 'raw'],
    ['a page filter: raw', { filters: [page] }, [signup, docs], facts, 'raw'],
    [
      'a property filter: raw',
      { conversionFilters: [{ key: 'props:plan', operator: 'is', values: ['pro'] }] },
      [signup, docs],
      facts,
      'raw',
    ],
    ['by country: raw', { dimension: 'country' }, [docs], facts, 'raw'],
    ['by hour: raw', { dimension: 'time:hour' }, [docs], facts, 'raw'],
    ['nothing rolled up: raw', {}, [signup, docs], {}, 'raw'],
    [
      'a stale day: read raw, and no window (its sums hold the day too)',
      {},
      [docs],
      { ...facts, marks: [lateOn('2026-03-04')] },
      'daily 2026-03-02..2026-03-08 | raw 2026-03-04..2026-03-05',
    ],
  ])('%s', (_what, over, goals, f, expected) => {
    expect(describeConversions(over, goals, f)).toBe(expected);
  });
});
