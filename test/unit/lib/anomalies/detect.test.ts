// Judging one hour against its seasonal baseline: the median of the earlier weeks (one odd week moves it
// little), the spec's severity bands at their edges, and the minimum-volume rule.
import { judge, median, severityOf } from '../../../../lib/anomalies/detect';

const sample = (over: Partial<Parameters<typeof judge>[0]> = {}) => ({
  metric: 'visitors' as const,
  actual: 100,
  history: [100, 100, 100, 100],
  pageviews: 200,
  baselinePageviews: 200,
  weeksWithTraffic: 4,
  ...over,
});

describe('median', () => {
  it('is the middle value, or the mean of the middle two', () => {
    expect(median([4, 1, 3])).toBe(3);
    expect(median([100, 400, 90, 110])).toBe(105);
    expect(median([])).toBe(0);
  });
});

describe('severityOf', () => {
  it('follows the spec: 50–100 info, 100–200 warning, over 200 critical, under 50 nothing', () => {
    expect(severityOf(49.99)).toBeUndefined();
    expect(severityOf(50)).toBe('info');
    expect(severityOf(99.99)).toBe('info');
    expect(severityOf(100)).toBe('warning');
    expect(severityOf(200)).toBe('warning');
    expect(severityOf(200.01)).toBe('critical');
    expect(severityOf(Number.NaN)).toBeUndefined();
  });
});

describe('judge', () => {
  it('takes the median of the earlier weeks, so one past outlier hardly moves it', () => {
    // A past week with 4× the traffic: expected (100 + 110) / 2 = 105, not the mean 175.
    const v = judge(sample({ actual: 260, history: [100, 400, 90, 110] }));
    expect(v).toEqual({ kind: 'anomaly', expected: 105, deviation: 147.62, severity: 'warning' });
    // The same hour against an outage week (0) still has its baseline.
    expect(judge(sample({ actual: 98, history: [0, 100, 96, 104], weeksWithTraffic: 3 }))).toEqual({
      kind: 'normal',
      expected: 98,
      deviation: 0,
    });
  });

  it('measures drops as well as spikes', () => {
    expect(judge(sample({ actual: 30 }))).toEqual({ kind: 'anomaly', expected: 100, deviation: 70, severity: 'info' });
    expect(judge(sample({ actual: 0 }))).toEqual({
      kind: 'anomaly',
      expected: 100,
      deviation: 100,
      severity: 'warning',
    });
    expect(judge(sample({ actual: 301 }))).toEqual({
      kind: 'anomaly',
      expected: 100,
      deviation: 201,
      severity: 'critical',
    });
  });

  it('does not judge an hour whose baseline has under 30 pageviews, or without 3 earlier weeks of traffic', () => {
    expect(judge(sample({ baselinePageviews: 29, actual: 1000 }))).toEqual({ kind: 'unjudged' });
    expect(judge(sample({ weeksWithTraffic: 2, actual: 1000 }))).toEqual({ kind: 'unjudged' });
    expect(judge(sample({ history: [0, 0, 0, 0], actual: 1000 }))).toEqual({ kind: 'unjudged' });
  });

  it('needs a count to move by 10 or more, and a ratio an hour of 30 pageviews or more', () => {
    // 4 → 12 goal conversions is 200 % but only 8 more: normal.
    expect(judge(sample({ metric: 'goal_conversions', actual: 12, history: [4, 4, 4, 4] }))).toEqual({
      kind: 'normal',
      expected: 4,
      deviation: 200,
    });
    expect(judge(sample({ metric: 'goal_conversions', actual: 14, history: [4, 4, 4, 4] }))).toMatchObject({
      kind: 'anomaly',
      severity: 'critical',
    });
    expect(judge(sample({ metric: 'bounce_rate', actual: 90, history: [40, 40, 40, 40], pageviews: 29 }))).toEqual({
      kind: 'unjudged',
    });
    expect(judge(sample({ metric: 'bounce_rate', actual: 90, history: [40, 40, 40, 40], pageviews: 30 }))).toEqual({
      kind: 'anomaly',
      expected: 40,
      deviation: 125,
      severity: 'warning',
    });
  });
});
