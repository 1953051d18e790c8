// A funnel's statement and the shaping of its results, without a store: every step value bound, page filters
// on pageview steps only, visit-key filters as a set of visits; rates and drop-offs from visitors per step.
import type { FunnelRow } from '../../../../lib/accounts/funnels';
import { funnelResults, stepDefinitions } from '../../../../lib/stats/funnels';
import type { Filter } from '../../../../lib/stats/params';
import { funnelStatement } from '../../../../lib/stats/sql/funnels';

const range = { start: Date.parse('2026-03-01T00:00:00Z'), end: Date.parse('2026-03-31T00:00:00Z') };
const step = (over: Partial<FunnelRow['steps'][number]>) => ({
  goal_id: null,
  path: null,
  goal_name: null,
  goal_kind: null,
  goal_path: null,
  ...over,
});
const funnel: FunnelRow = {
  id: 'f',
  website_id: 'w',
  name: 'F',
  steps: [
    step({ path: "/it's*" }),
    step({ goal_id: 'g1', goal_name: 'Pricing', goal_kind: 'page', goal_path: '/pricing' }),
    step({ goal_id: 'g2', goal_name: "Sign'up", goal_kind: 'event' }),
    step({ goal_id: 'g3', goal_name: 'Bought', goal_kind: 'purchase' }),
  ],
  created_at: new Date(),
  updated_at: new Date(),
};

describe('funnelStatement', () => {
  it('binds every step value and evaluates each step once per row', () => {
    const { sql, params } = funnelStatement(stepDefinitions(funnel), [], range, { around: [range] });
    expect(sql).not.toContain("it's");
    expect(sql).not.toContain('Sign');
    expect(params).toMatchObject({ s0: "/it's%", s1: '/pricing', s2: "Sign'up", fw: range.end - range.start });
    expect(sql).toContain("windowFunnel({fw:UInt64}, 'strict_order')");
    expect(sql.match(/pathname LIKE \{s0:String\}/g)).toHaveLength(1);
    expect(sql).toContain('bitTest(m, 0), bitTest(m, 1), bitTest(m, 2), bitTest(m, 3)');
  });

  it('applies page filters to pageview steps only, visit-key filters as a set of visits', () => {
    const filters: Filter[] = [
      { key: 'page', operator: 'is_not', values: ['/x'] },
      { key: 'country', operator: 'is', values: ['DE'] },
    ];
    const { sql, params } = funnelStatement(stepDefinitions(funnel), filters, range, { around: [range] });
    expect(params).toMatchObject({ f0: ['/x'], f1: ['DE'] });
    expect(sql).toContain("((type = 'pageview' AND pathname = {s1:String}) AND pathname NOT IN {f0:Array(String)})");
    expect(sql).toContain("(type IN ('event', 'goal') AND name = {s2:String})");
    expect(sql).not.toMatch(/name = \{s2:String\} AND pathname/);
    expect(sql).toContain('session_id IN (SELECT session_id');
  });
});

describe('funnelResults', () => {
  it('derives conversion from the first and the previous step, and drop-offs', () => {
    const r = funnelResults(funnel, [8, 5, 3, 0]);
    expect(r.steps.map((s) => [s.step, s.kind, s.name, s.conversion_rate, s.step_conversion_rate, s.dropoff])).toEqual([
      [1, 'path', "/it's*", 100, 100, 0],
      [2, 'page', 'Pricing', 62.5, 62.5, 3],
      [3, 'event', "Sign'up", 37.5, 60, 2],
      [4, 'purchase', 'Bought', 0, 0, 3],
    ]);
    expect(r.totals).toEqual({ entered: 8, completed: 0, conversion_rate: 0, dropoff: 8 });
    expect(funnelResults(funnel, [0, 0, 0, 0]).steps[0]).toMatchObject({ conversion_rate: 0, step_conversion_rate: 0 });
  });
});
