// Purchases for the lifetime-value tests, on a website in America/New_York (UTC-5 in winter, UTC-4 from
// 8 March 2026), with USD the revenue currency and exchange rates EUR 1.10 from 2026-01-01 and 1.20 from
// 2026-03-01 (none for GBP). As of 2026-03-31 (a Tuesday):
// - A (visitor A): +100 Mon 5 Jan, +50 Tue 20 Jan, a pending 500 on 21 Jan (ignored), refunded 30 Tue 10 Feb;
//   +1000 on 1 Apr 01:00 local (after the as-of day).
// - B (visitor B): +200 EUR Wed 7 Jan (220 USD), +100 EUR Mon 2 Mar (120 USD), +10 USD Tue 31 Mar 23:30 local
//   (03:30 UTC on 1 Apr).
// - C (no visitor id, customer_email C@Example.com): +80 Sat 31 Jan 22:00 local (1 Feb UTC), -20 (a succeeded
//   negative amount) Sun 15 Feb.
// - D (visitor D): +70 GBP 10 Jan only: no rate, left out, not a customer.
// - E (visitor E): +90 GBP Tue 3 Feb (left out), then +40 USD Fri 20 Feb: first purchase 20 Feb.
// - F (visitor F): +10 EUR 20 Dec 2025, before the first EUR rate: left out.
// - G (visitor G): +60 Mon 15 Dec 2025, +15 Tue 20 Jan, +30 Fri 20 Mar.
// - one USD 999 purchase on 15 Jan with neither a visitor id nor an email: unattributed.
import type { EventRow } from '../../lib/ingest/job/rows';
import { eventRow } from './statsFixture';

export const LTV_ZONE = 'America/New_York';
export const LTV_RATES: [string, string, string][] = [
  ['EUR', '1.10', '2026-01-01'],
  ['EUR', '1.20', '2026-03-01'],
];

function purchase(
  websiteId: string,
  ts: string,
  amount: number,
  who: { visitor?: string; email?: string },
  currency = 'USD',
  status = 'succeeded',
): EventRow {
  return eventRow(websiteId, {
    ts,
    type: 'purchase',
    pathname: '',
    source_name: '',
    visitor_id: who.visitor ?? '',
    revenue: amount,
    currency,
    props: JSON.stringify({ payment_provider: 'server', status, ...(who.email ? { customer_email: who.email } : {}) }),
  });
}

export function ltvFixture(websiteId: string): EventRow[] {
  const p = (
    ts: string,
    amount: number,
    who: { visitor?: string; email?: string },
    currency?: string,
    status?: string,
  ) => purchase(websiteId, ts, amount, who, currency, status);
  const A = { visitor: 'A' };
  const B = { visitor: 'B' };
  const C = { email: 'C@Example.com ' };
  return [
    p('2026-01-05T15:00:00Z', 100, A),
    p('2026-01-20T15:00:00Z', 50, A),
    p('2026-01-21T15:00:00Z', 500, A, 'USD', 'pending'),
    p('2026-02-10T15:00:00Z', 30, A, 'USD', 'refunded'),
    p('2026-04-01T05:00:00Z', 1000, A),
    p('2026-01-07T12:00:00Z', 200, B, 'EUR'),
    p('2026-03-02T15:00:00Z', 100, B, 'EUR'),
    p('2026-04-01T03:30:00Z', 10, B),
    p('2026-02-01T03:00:00Z', 80, C),
    p('2026-02-15T15:00:00Z', -20, { email: 'c@example.com' }),
    p('2026-01-10T15:00:00Z', 70, { visitor: 'D' }, 'GBP'),
    p('2026-02-03T15:00:00Z', 90, { visitor: 'E' }, 'GBP'),
    p('2026-02-20T15:00:00Z', 40, { visitor: 'E' }),
    p('2025-12-20T15:00:00Z', 10, { visitor: 'F' }, 'EUR'),
    p('2025-12-15T15:00:00Z', 60, { visitor: 'G' }),
    p('2026-01-20T16:00:00Z', 15, { visitor: 'G' }),
    p('2026-03-20T15:00:00Z', 30, { visitor: 'G' }),
    p('2026-01-15T15:00:00Z', 999, {}),
    // Not purchases: a pageview of A, which changes nothing.
    eventRow(websiteId, { ts: '2026-01-05T14:59:00Z', visitor_id: 'A', session_id: 's' }),
  ];
}
