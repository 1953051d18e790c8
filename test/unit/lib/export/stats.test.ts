import { statsCsv, statsCsvFileName } from '../../../../lib/export/stats';
import { parseDate } from '../../../../lib/stats/time';

describe('statsCsv', () => {
  it('names the key column after the property (a custom property by its key) and writes money as its value', () => {
    const text = [
      ...statsCsv(
        'breakdown',
        { metrics: ['visitors', 'total_revenue'], property: 'event:props:plan' },
        {
          results: [
            { plan: 'pro', visitors: 2, total_revenue: { value: 12.5, currency: 'EUR' } },
            { plan: '=evil', visitors: 1, total_revenue: { value: 0, currency: 'EUR' } },
          ],
        },
      ),
    ].join('');
    expect(text).toBe("plan,visitors,total_revenue\r\npro,2,12.5\r\n'=evil,1,0\r\n");
  });

  it('writes a goal breakdown under goal and a timeseries under date', () => {
    expect([...statsCsv('breakdown', { metrics: ['events'], property: 'event:goal' }, { results: [] })].join('')).toBe(
      'goal,events\r\n',
    );
    expect(
      [...statsCsv('timeseries', { metrics: ['visitors'] }, { results: [{ date: '2026-03-29', visitors: 3 }] })].join(
        '',
      ),
    ).toBe('date,visitors\r\n2026-03-29,3\r\n');
  });

  it('names the file after the domain, the question and the local dates of the period', () => {
    const params = { period: '7d', date: parseDate('2026-03-29'), interval: 'day' as const };
    expect(statsCsvFileName('shop.example.com', 'timeseries', params, 'Europe/Berlin')).toBe(
      'shop.example.com-timeseries-day-2026-03-23-2026-03-29.csv',
    );
    expect(statsCsvFileName('shop.example.com', 'breakdown', { ...params, property: 'event:props:pl an' }, 'UTC')).toBe(
      'shop.example.com-breakdown-pl_an-2026-03-23-2026-03-29.csv',
    );
  });
});
