// The interpreter against the question set of test/fixtures/nlquery-questions.json (issue 27: at least 150
// questions with their expected plans): every question's plan must equal the expected one, refused questions
// must get none, and the accuracy per shape is printed for the report.

import { interpret } from '../../../lib/nlquery/interpret';
import { queryPlan } from '../../../lib/nlquery/plan';
import fixture from '../../fixtures/nlquery-questions.json';

type Case = (typeof fixture.questions)[number];

const read = (c: Case) => interpret(c.question, fixture.vocabulary);

describe('the interpreter on the question set', () => {
  it('holds at least 150 questions covering every shape', () => {
    expect(fixture.questions.length).toBeGreaterThanOrEqual(150);
    const shapes = new Set(fixture.questions.map((c) => c.shape));
    for (const shape of [
      'total',
      'comparison',
      'breakdown',
      'filter_country',
      'filter_device',
      'filter_browser_os',
      'filter_source',
      'filter_page',
      'goals',
      'custom_events',
      'trend',
      'revenue',
      'realtime',
      'refused',
    ])
      expect(shapes).toContain(shape);
  });

  it('reports accuracy per shape', () => {
    const tally = new Map<string, { right: number; all: number }>();
    for (const c of fixture.questions) {
      const got = read(c);
      const right = c.plan === null ? got === undefined : JSON.stringify(got?.plan) === JSON.stringify(c.plan);
      const t = tally.get(c.shape) ?? { right: 0, all: 0 };
      tally.set(c.shape, { right: t.right + (right ? 1 : 0), all: t.all + 1 });
    }
    const lines = [...tally].map(
      ([s, t]) => `${s.padEnd(18)} ${t.right}/${t.all} (${Math.round((100 * t.right) / t.all)}%)`,
    );
    console.log(`interpreter accuracy by shape:\n${lines.join('\n')}`);
    expect([...tally.values()].every((t) => t.right === t.all)).toBe(true);
  });

  it.each(fixture.questions.map((c) => [c.question, c] as const))('%s', (_q, c) => {
    const got = read(c);
    if (c.plan === null) {
      expect(got).toBeUndefined();
      return;
    }
    expect(got?.plan).toEqual(c.plan);
    expect(queryPlan.parse(got?.plan)).toEqual(c.plan);
    expect(got!.confidence).toBeGreaterThan(0);
    expect(got!.confidence).toBeLessThanOrEqual(1);
  });
});
