// The hand-built website of the insights tests (UTC): two weeks ending on `last`. The week before: 100 direct
// visitors from the US, each viewing / then /pricing. The last week: 100 such visitors (50 complete the goal
// Signup, 30 hit a TypeError on /pricing, 5 of those also a rarer error) plus 100 new visitors from the source
// Newsletter in Germany who land on /promo and leave. The website needs an active event goal named Signup.
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import type { EventRow } from '../../lib/ingest/job/rows';
import { addDays, formatDate, type LocalDate } from '../../lib/stats/time';
import { eventRow, storeRows } from './statsFixture';

export async function insertInsightsFixture(clickhouse: ClickHouseClient, site: string, last: LocalDate) {
  const at = (daysBeforeLast: number, hhmm: string) => `${formatDate(addDays(last, -daysBeforeLast))}T${hhmm}:00Z`;
  // Visitor i of a week comes on its day i % 7 (0 = the week's first day).
  const lastWeek = (i: number) => 6 - (i % 7);
  const weekBefore = (i: number) => 13 - (i % 7);
  const rows: EventRow[] = [];
  const regular = (prefix: string, day: number, i: number) => {
    const v = { visitor_id: `${prefix}${i}`, session_id: `${prefix}s${i}`, country_code: 'US' };
    return [
      eventRow(site, { ...v, pathname: '/', ts: at(day, '10:00') }),
      eventRow(site, { ...v, pathname: '/pricing', ts: at(day, '10:01') }),
    ];
  };
  for (let i = 0; i < 100; i++) {
    rows.push(...regular('b', weekBefore(i), i), ...regular('n', lastWeek(i), i));
    if (i < 50) {
      rows.push(
        eventRow(site, {
          visitor_id: `n${i}`,
          session_id: `ns${i}`,
          type: 'event',
          name: 'Signup',
          pathname: '',
          source_name: '',
          ts: at(lastWeek(i), '10:02'),
        }),
      );
    }
    rows.push(
      eventRow(site, {
        visitor_id: `p${i}`,
        session_id: `ps${i}`,
        country_code: 'DE',
        source_name: 'Newsletter',
        pathname: '/promo',
        ts: at(lastWeek(i), '12:00'),
      }),
    );
  }
  await storeRows(clickhouse, rows);

  const error = (i: number, fingerprint: string, message: string, n: number) => ({
    website_id: site,
    event_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    ts: `${at(lastWeek(i), '10:01').slice(0, 19).replace('T', ' ')}.500`,
    session_id: `ns${i}`,
    visitor_id: `n${i}`,
    pathname: '/pricing',
    fingerprint,
    error_type: 'TypeError',
    message,
    stack: '',
    browser: 'Chrome',
    os: 'Linux',
    device_type: 'desktop',
    expire_at: '2030-01-01 00:00:00',
  });
  const errors = [];
  for (let i = 0; i < 30; i++)
    errors.push(error(i, 'fp-price', "Cannot read properties of undefined (reading 'price')", i));
  for (let i = 0; i < 5; i++) errors.push(error(i, 'fp-tax', 'tax is not defined', 100 + i));
  await clickhouse.insert({ table: 'error_events', values: errors, format: 'JSONEachRow' });
}
