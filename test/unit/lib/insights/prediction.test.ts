// The month forecast (lib/insights/prediction.ts) on series whose answer is worked out by hand.
import { forecastRest, monthForecast, predictionInsights } from '../../../../lib/insights/prediction';
import { addDays, type LocalDate } from '../../../../lib/stats/time';

const NOV_30: LocalDate = { year: 2026, month: 11, day: 30 };

/** 56 days ending `last`: 100 on weekdays, 50 on Saturdays and Sundays. */
function weekly(last: LocalDate): number[] {
  const out: number[] = [];
  for (let i = 55; i >= 0; i--) {
    const d = addDays(last, -i);
    const w = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
    out.push(w === 0 || w === 6 ? 50 : 100);
  }
  return out;
}

describe('forecastRest', () => {
  it('follows the weekly pattern exactly when the series is the pattern', () => {
    // As of Wednesday 18 Nov 2026: 19–30 Nov has 8 weekdays and 4 weekend days: 800 + 200.
    const f = forecastRest(weekly({ year: 2026, month: 11, day: 18 }), { year: 2026, month: 11, day: 18 }, NOV_30);
    expect(f?.rest).toBeCloseTo(1000, 9);
    expect(f?.sd).toBeCloseTo(0, 9);
    expect(f?.days).toBe(56);
  });

  it('gives the error of the residuals: 10 days alternating 90 and 110', () => {
    // Under two weeks: flat pattern; level 100; residuals ±10 → σ² = 1000/9. Ten days to go:
    // var = 10·σ² + 10²·σ²/10 = 20000/9, sd = 47.1405.
    const values = [...new Array(46).fill(0), ...Array.from({ length: 10 }, (_, i) => (i % 2 ? 110 : 90))];
    const f = forecastRest(values, { year: 2026, month: 11, day: 20 }, NOV_30);
    expect(f?.rest).toBeCloseTo(1000, 9);
    expect(f?.sd).toBeCloseTo(Math.sqrt(20000 / 9), 9);
    expect(f?.days).toBe(10);
  });

  it('needs 7 days of data', () => {
    expect(forecastRest([0, 0, 5, 5, 5, 5, 5, 5], { year: 2026, month: 11, day: 20 }, NOV_30)).toBeUndefined();
    expect(forecastRest(new Array(56).fill(0), { year: 2026, month: 11, day: 20 }, NOV_30)).toBeUndefined();
  });
});

describe('monthForecast', () => {
  it('adds the rest to the month so far, with a 95 % interval', () => {
    const values = [...new Array(46).fill(0), ...Array.from({ length: 10 }, (_, i) => (i % 2 ? 110 : 90))];
    const f = { daily: values, soFar: 1000, dailySoFar: 1000, lastMonth: 1600 };
    // 2000 ± 1.96 × 47.1405 = ± 92.3954
    expect(monthForecast(f, { year: 2026, month: 11, day: 20 }, NOV_30, { decimals: 2, unique: false })).toEqual({
      value: 2000,
      lower: 1907.6,
      upper: 2092.4,
      change: 25,
      days: 10,
    });
  });

  it('scales unique visitors by the share the rest adds to the days’ sum', () => {
    // 1–18 Nov sum 1,550 (Sun 1st: 50; three weekends; 13 weekdays); 1,200 unique so far; rest 1,000:
    // 1200 + 1200 × 1000 / 1550 = 1974.19
    const asOf = { year: 2026, month: 11, day: 18 };
    const f = { daily: weekly(asOf), soFar: 1200, dailySoFar: 1550, lastMonth: 2000 };
    expect(monthForecast(f, asOf, NOV_30, { decimals: 0, unique: true })).toEqual({
      value: 1974,
      lower: 1974,
      upper: 1974,
      change: -1.3,
      days: 56,
    });
  });
});

describe('prediction insights', () => {
  it('one per metric, in words, warning when even the upper bound is below last month', () => {
    const asOf = { year: 2026, month: 11, day: 18 };
    const drafts = predictionInsights(
      { daily: weekly(asOf), soFar: 1550, dailySoFar: 1550, lastMonth: 3000 },
      { daily: weekly(asOf), soFar: 1550, dailySoFar: 1550, lastMonth: 2000 },
      asOf,
      NOV_30,
      'EUR',
    );
    expect(drafts.map((d) => [d.rule, d.period, d.severity, d.metric_value, d.metric_change])).toEqual([
      ['month_visitors', '2026-11', 'warning', 2550, -15],
      ['month_revenue', '2026-11', 'info', 2550, 27.5],
    ]);
    expect(drafts[0].title).toBe('November should end with about 2,550 visitors');
    expect(drafts[0].description).toContain('From 1,550 visitors in the first 18 days');
    expect(drafts[0].description).toContain('(95% interval 2,550 visitors to 2,550 visitors) with 12 days to go');
    expect(drafts[0].description).toContain("15% less than October's 3,000 visitors");
    expect(drafts[1].title).toBe('November should end with about 2,550 EUR');
  });

  it('nothing on the month’s last day', () => {
    expect(
      predictionInsights(
        { daily: weekly(NOV_30), soFar: 1, dailySoFar: 1, lastMonth: 1 },
        undefined,
        NOV_30,
        NOV_30,
        'USD',
      ),
    ).toEqual([]);
  });
});
