// The hand-made conversions fixture (issue 22) shared by the Stats v2 and External API tests: goals of each
// kind, custom events with properties, purchases in two currencies with a refund.
import type { EventRow } from '../../lib/ingest/job/rows';
import type { TestUser } from './accounts';
import type { client } from './http';
import { eventRow } from './statsFixture';

/**
 * Website in UTC, revenue in USD, everything on one day. Goals: Signup (event), Thank you (page
 * /thank-you), Docs (page /docs/*), Purchase (purchases).
 * - V1 US Chrome (Google): /, /pricing, event Signup {plan: pro, method: email}, /thank-you, purchase 100 USD.
 * - V2 DE Firefox: /docs/intro, event Signup {plan: free, method: google}, event Download {file: a.pdf}.
 * - V3 US Firefox (Google): /, purchase 50 EUR, purchase 30 USD, refund of 30 USD.
 * - V4 DE Chrome: /docs/api/x, then a server `goal` Signup (no browser, no page).
 * - V5 US Chrome: / (a bounce).
 * Visitors 5 (US 3). Signup: V1, V2, V4 → 3 visitors, 3 completions, 60 %. Thank you: V1 → 20 %. Docs: V2, V4
 * (`*` crosses `/`) → 40 %. Purchase: V1, V3 → 2 visitors, 3 succeeded purchases, 40 %; revenue in USD
 * 100 + 30 − 30 = 100.00 over 2 USD purchases → average 50.00 (the EUR one is not converted).
 */
export function conversionsFixture(site: string, day: string): EventRow[] {
  const at = (hhmm: string) => `${day}T${hhmm}:00.000Z`;
  const visit = (v: number, country: string, browser: string, source = 'Direct / None') => ({
    visitor_id: `v${v}`,
    session_id: `s${v}`,
    country_code: country,
    browser,
    source_name: source,
  });
  const V1 = visit(1, 'US', 'Chrome', 'Google');
  const V2 = visit(2, 'DE', 'Firefox');
  const V3 = visit(3, 'US', 'Firefox', 'Google');
  const V4 = visit(4, 'DE', 'Chrome');
  const V5 = visit(5, 'US', 'Chrome');
  const pv = (v: object, hhmm: string, pathname: string) => eventRow(site, { ...v, ts: at(hhmm), pathname });
  const custom = (v: object, hhmm: string, name: string, props: object, type = 'event') =>
    eventRow(site, { ...v, ts: at(hhmm), type, name, pathname: '', props: JSON.stringify(props) });
  const purchase = (v: object, hhmm: string, amount: number, currency: string, status = 'succeeded') =>
    eventRow(site, {
      ...v,
      ts: at(hhmm),
      type: 'purchase',
      pathname: '',
      revenue: amount,
      currency,
      props: JSON.stringify({ payment_provider: 'server', status }),
    });
  const server = { country_code: '', browser: '', source_name: '' };
  return [
    pv(V1, '10:00', '/'),
    pv(V1, '10:01', '/pricing'),
    custom(V1, '10:02', 'Signup', { plan: 'pro', method: 'email' }),
    pv(V1, '10:03', '/thank-you'),
    purchase({ ...V1, ...server }, '10:04', 100, 'USD'),
    pv(V2, '11:00', '/docs/intro'),
    custom(V2, '11:01', 'Signup', { plan: 'free', method: 'google' }),
    custom(V2, '11:02', 'Download', { file: 'a.pdf' }),
    pv(V3, '12:00', '/'),
    purchase({ ...V3, ...server }, '12:01', 50, 'EUR'),
    purchase({ ...V3, ...server }, '12:02', 30, 'USD'),
    purchase({ ...V3, ...server }, '12:10', 30, 'USD', 'refunded'),
    pv(V4, '13:00', '/docs/api/x'),
    custom({ ...V4, ...server }, '13:01', 'Signup', {}, 'goal'),
    pv(V5, '14:00', '/'),
  ];
}

/** The fixture's goals, created through the goals API in this order. */
export async function addConversionGoals(call: ReturnType<typeof client>, user: TestUser, siteId: string) {
  for (const goal of [
    { name: 'Signup' },
    { name: 'Thank you', kind: 'page', path: '/thank-you' },
    { name: 'Docs', kind: 'page', path: '/docs/*' },
    { name: 'Purchase', kind: 'purchase' },
  ]) {
    const res = await call('POST', `/api/websites/${siteId}/goals`, { token: user.token, body: goal });
    if (res.status !== 201) throw new Error(`goal ${goal.name}: ${res.status}`);
  }
}
