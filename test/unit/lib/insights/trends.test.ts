// The trend test (lib/insights/trends.ts): a change must be large (≥ 20 %), significant (|z| ≥ 3) and on enough
// volume (≥ 50 in the larger week). Expected z values worked out by hand in the comments.
import { countTrend, poissonZ, proportionZ, trendInsights, type WeekFigures } from '../../../../lib/insights/trends';

const week = (over: Partial<WeekFigures>): WeekFigures => ({
  visitors: 0,
  pageviews: 0,
  visits: 0,
  bounce_rate: 0,
  sources: new Map(),
  pages: new Map(),
  countries: new Map(),
  ...over,
});

describe('the trend test', () => {
  it('z of two Poisson counts is (a − b) / √(a + b)', () => {
    expect(poissonZ(1300, 1000)).toBeCloseTo(300 / Math.sqrt(2300), 10); // 6.255
    expect(poissonZ(0, 0)).toBe(0);
  });

  it('a large change on small counts is not significant: no trend', () => {
    // +33.3 %, z = 15 / √105 = 1.46
    expect(countTrend(60, 45)).toBeUndefined();
    // +100 % but only 20 in the larger week: below the minimum volume
    expect(countTrend(20, 10)).toBeUndefined();
  });

  it('a significant but small change is not a trend', () => {
    // +5 %, z = 500 / √20500 = 3.49
    expect(countTrend(10_500, 10_000)).toBeUndefined();
  });

  it('a large and significant change is a trend, either way', () => {
    expect(countTrend(1300, 1000)).toEqual({ now: 1300, before: 1000, change: 30, z: 300 / Math.sqrt(2300) });
    const down = countTrend(600, 1000);
    expect(down?.change).toBe(-40);
    expect(down?.z).toBeCloseTo(-400 / 40, 10);
  });

  it('the bounce rate uses the pooled two-proportion test', () => {
    // 400/1000 → 500/1000: p = 0.45, se = √(0.45·0.55·0.002) = 0.022249, z = 0.1 / se = 4.49
    expect(proportionZ(500, 1000, 400, 1000)).toBeCloseTo(0.1 / Math.sqrt(0.45 * 0.55 * 0.002), 10);
    expect(proportionZ(1, 0, 1, 10)).toBe(0);
  });
});

describe('trend insights', () => {
  const now = week({
    visitors: 1300,
    pageviews: 2000,
    visits: 1000,
    bounce_rate: 50,
    sources: new Map([
      ['Google', 400],
      ['Bing', 70],
      ['Newsletter', 80],
    ]),
    countries: new Map([['DE', 300]]),
  });
  const before = week({
    visitors: 1000,
    pageviews: 1900,
    visits: 1000,
    bounce_rate: 40,
    sources: new Map([
      ['Google', 300],
      ['Bing', 50],
    ]),
    countries: new Map([['DE', 200]]),
  });
  const drafts = trendInsights(now, before, '2026-11-16', 'the 7 days to 2026-11-18', (d, k) =>
    d === 'country' && k === 'DE' ? 'Germany' : k,
  );
  const by = (rule: string, subject = '') => drafts.find((d) => d.rule === rule && d.subject === subject);

  it('finds exactly the trends the test allows', () => {
    // pageviews +5.3 % (not large); Bing +40 % with z = 20/√120 = 1.83 (not significant)
    expect(drafts.map((d) => `${d.rule}:${d.subject}`).sort()).toEqual([
      'country_visitors:DE', // +50 %, z = 100/√500 = 4.47
      'site_bounce_rate:', // 40 → 50 %, +25 %, z = 4.49
      'site_visitors:',
      'source_visitors:Google', // +33.3 %, z = 100/√700 = 3.78
      'source_visitors:Newsletter', // new: z = √80 = 8.94
    ]);
  });

  it('writes the numbers into the words, with a severity by direction', () => {
    const v = by('site_visitors');
    expect(v).toMatchObject({
      type: 'trend',
      period: '2026-11-16',
      severity: 'info',
      title: 'Visitors up 30% week over week',
      metric_name: 'visitors',
      metric_value: 1300,
      metric_change: 30,
    });
    expect(v?.description).toContain('1,300 visitors in the 7 days to 2026-11-18, against 1,000');
    const b = by('site_bounce_rate');
    expect(b).toMatchObject({ severity: 'warning', metric_value: 50, metric_change: 25 });
    expect(b?.title).toBe('Bounce rate up from 40% to 50%');
    const n = by('source_visitors', 'Newsletter');
    expect(n).toMatchObject({ metric_change: null, title: 'New source: Newsletter brought 80 visitors' });
    expect(by('country_visitors', 'DE')?.title).toBe('Country Germany: visitors up 50%');
  });

  it('a halved site is critical', () => {
    const [t] = trendInsights(week({ visitors: 400 }), week({ visitors: 1000 }), 'w', 'r');
    expect(t).toMatchObject({ rule: 'site_visitors', severity: 'critical', metric_change: -60 });
  });
});
