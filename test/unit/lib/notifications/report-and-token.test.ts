// The report's periods and change wording, and the unsubscribe token's signature.
import { countChange, pointChange, previousReportPeriod, reportPeriod } from '../../../../lib/notifications/report';
import { readUnsubscribeToken, unsubscribeToken } from '../../../../lib/notifications/unsubscribe';
import { formatDate, type LocalDate } from '../../../../lib/stats/time';

const d = (text: string): LocalDate => {
  const [year, month, day] = text.split('-').map(Number);
  return { year, month, day };
};
const span = (p?: { first: LocalDate; last: LocalDate }) =>
  p ? `${formatDate(p.first)}..${formatDate(p.last)}` : null;

describe('report periods', () => {
  it('a Monday covers the week before, a 1st the month before, other days nothing', () => {
    expect(span(reportPeriod('weekly', d('2026-11-23')))).toBe('2026-11-16..2026-11-22');
    expect(span(reportPeriod('weekly', d('2026-11-24')))).toBeNull();
    expect(span(reportPeriod('monthly', d('2026-03-01')))).toBe('2026-02-01..2026-02-28');
    expect(span(reportPeriod('monthly', d('2026-03-02')))).toBeNull();
    // Across a year: Monday 4 Jan 2027, and 1 Jan 2027.
    expect(span(reportPeriod('weekly', d('2027-01-04')))).toBe('2026-12-28..2027-01-03');
    expect(span(reportPeriod('monthly', d('2027-01-01')))).toBe('2026-12-01..2026-12-31');
  });

  it('compares with the period just before', () => {
    const week = reportPeriod('weekly', d('2026-11-23'));
    expect(week && span(previousReportPeriod('weekly', week))).toBe('2026-11-09..2026-11-15');
    const march = reportPeriod('monthly', d('2024-04-01'));
    expect(march && span(previousReportPeriod('monthly', march))).toBe('2024-02-01..2024-02-29');
  });
});

describe('change wording', () => {
  it.each([
    [6, 5, '+20%'],
    [3, 5, '−40%'],
    [3, 0, 'new'],
    [0, 0, 'no change'],
    [1000, 999, 'no change'], // +0.1 % rounds to 0
    [0, 6, '−100%'],
  ])('%d against %d is %s', (value, previous, text) => {
    expect(countChange(value, previous)).toBe(text);
  });

  it('rates change in points', () => {
    expect(pointChange(50, 80)).toBe('−30 pts');
    expect(pointChange(42.25, 40)).toBe('+2.3 pts');
    expect(pointChange(40, 40)).toBe('no change');
  });
});

describe('unsubscribe tokens', () => {
  const secret = 'a-secret-of-at-least-thirty-two-chars!!';
  const site = '23d512a6-c460-421b-bd84-70e3a797a61c';

  it('name the website and the lower-cased address', () => {
    expect(readUnsubscribeToken(secret, unsubscribeToken(secret, site, 'Bob@Example.com'))).toEqual({
      websiteId: site,
      email: 'bob@example.com',
    });
  });

  it('refuse another address, another website, another secret and garbage', () => {
    const token = unsubscribeToken(secret, site, 'bob@example.com');
    const [, , mac] = token.split('.');
    const eve = `${site}.${Buffer.from('eve@example.com').toString('base64url')}.${mac}`;
    expect(readUnsubscribeToken(secret, eve)).toBeUndefined();
    expect(readUnsubscribeToken(secret, token.replace(site, '00000000-0000-4000-8000-000000000000'))).toBeUndefined();
    expect(readUnsubscribeToken(`${secret}x`, token)).toBeUndefined();
    expect(readUnsubscribeToken(secret, 'x.y.z')).toBeUndefined();
    expect(readUnsubscribeToken(secret, `${token}.more`)).toBeUndefined();
  });
});
