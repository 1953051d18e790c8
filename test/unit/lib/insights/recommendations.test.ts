// Each recommendation rule (lib/insights/recommendations.ts) on hand-built figures: firing, and not firing
// just across each of its thresholds.
import { landingPageBounce, pageErrors, sourceNotConverting } from '../../../../lib/insights/recommendations';

const W = '2026-11-16';
const R = 'the 7 days to 2026-11-18';

describe('landing_page_bounce', () => {
  const site = { visits: 1000, bounceRate: 40 };

  it('fires for an entry page with ≥ 100 visits bouncing ≥ 20 points above the site', () => {
    const [d, ...rest] = landingPageBounce([{ page: '/pricing', visits: 200, bounceRate: 75 }], site, W, R);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      type: 'recommendation',
      rule: 'landing_page_bounce',
      subject: '/pricing',
      severity: 'warning',
      metric_name: 'bounce_rate',
      metric_value: 75,
      metric_change: 87.5, // (75 − 40) / 40
    });
    expect(d.description).toBe(
      "75% of the 200 visits that began on /pricing in the 7 days to 2026-11-18 left without interacting, against 40% across the site's 1,000 visits.",
    );
    // 200 × 35 % = 70 more visits kept
    expect(d.recommendation).toContain('about 70 more visits a week');
  });

  it('does not fire below 100 visits, nor 19 points above the site', () => {
    expect(
      landingPageBounce(
        [
          { page: '/blog', visits: 99, bounceRate: 95 },
          { page: '/home', visits: 500, bounceRate: 59 },
        ],
        site,
        W,
        R,
      ),
    ).toEqual([]);
  });
});

describe('page_errors', () => {
  const page = (over: object) => ({
    page: '/checkout',
    errorVisitors: 30,
    errorVisitorsBefore: 10,
    occurrences: 45,
    pageVisitors: 100,
    topMessage: "Cannot read properties of undefined (reading 'price')",
    topType: 'TypeError',
    ...over,
  });

  it('fires for ≥ 20 visitors and ≥ 5 % of the page’s visitors; critical from 25 %', () => {
    const drafts = pageErrors([page({}), page({ page: '/help', errorVisitors: 20, pageVisitors: 400 })], W, R);
    expect(drafts.map((d) => [d.subject, d.severity, d.metric_value, d.metric_change])).toEqual([
      ['/checkout', 'critical', 30, 200], // 30 % of visitors; 10 → 30 visitors
      ['/help', 'warning', 20, 100], // exactly 5 %
    ]);
    expect(drafts[0].description).toContain('30 of the 100 visitors of /checkout');
    expect(drafts[0].description).toContain("TypeError: Cannot read properties of undefined (reading 'price')");
  });

  it('does not fire for 19 visitors, nor for 4.9 % of the page’s visitors', () => {
    expect(
      pageErrors(
        [page({ errorVisitors: 19, pageVisitors: 19 }), page({ errorVisitors: 49, pageVisitors: 1000 })],
        W,
        R,
      ),
    ).toEqual([]);
  });
});

describe('source_not_converting', () => {
  // Site: 2,000 visitors, 100 converted: 5 %.
  const site = { visitors: 2000, converted: 100, goals: ['Signup'] };
  const source = (over: object) => ({
    source: 'Newsletter',
    visitors: 400,
    visitorsBefore: 200,
    converted: 2,
    ...over,
  });

  it('fires for a source that grew (a trend) and converts at most half the expected', () => {
    // expected 400 × 5 % = 20; 2 ≤ 10
    const [d, ...rest] = sourceNotConverting([source({})], site, W, R);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      rule: 'source_not_converting',
      subject: 'Newsletter',
      severity: 'info',
      metric_name: 'visitors',
      metric_value: 400,
      metric_change: 100,
    });
    expect(d.description).toContain('only 2 of them (0.5%) completed the goal Signup, against 5% across the site');
    expect(sourceNotConverting([source({ converted: 0 })], site, W, R)[0].severity).toBe('warning');
  });

  it('does not fire when the source converts, did not grow, grew insignificantly, or the site has no conversions', () => {
    expect(sourceNotConverting([source({ converted: 11 })], site, W, R)).toEqual([]); // 11 > 20 / 2
    expect(sourceNotConverting([source({ visitorsBefore: 400, converted: 0 })], site, W, R)).toEqual([]);
    // +50 % but z = 20 / √100 = 2
    expect(sourceNotConverting([source({ visitors: 60, visitorsBefore: 40, converted: 0 })], site, W, R)).toEqual([]);
    // expected 60 × 5 % = 3 < 5: too few to tell
    expect(sourceNotConverting([source({ visitors: 60, visitorsBefore: 0, converted: 0 })], site, W, R)).toEqual([]);
    expect(sourceNotConverting([source({})], { ...site, converted: 0 }, W, R)).toEqual([]);
    expect(sourceNotConverting([source({})], { ...site, goals: [] }, W, R)).toEqual([]);
  });
});
