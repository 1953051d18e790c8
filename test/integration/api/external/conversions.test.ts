// External API goals, custom events and revenue (issue 22) on the conversions fixture placed yesterday (UTC),
// so that range=7d covers it; expected values are worked out in test/helpers/conversionsFixture.ts.
import { createApiKey, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { addConversionGoals, conversionsFixture } from '../../../helpers/conversionsFixture';
import { client } from '../../../helpers/http';
import { storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let key: string;
let otherKey: string;
let siteId: string;
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const usd = (value: number) => ({ value, currency: 'USD' });

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  const user = await registerUser(ctx, 'pro', 'conversions');
  const site = await call('POST', '/api/websites', {
    token: user.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'UTC' },
  });
  siteId = site.body.data.website.id;
  key = (await createApiKey(ctx, user)).key;
  otherKey = (await createApiKey(ctx, await registerUser(ctx, 'pro', 'stranger'))).key;
  await addConversionGoals(call, user, siteId);
  await storeRows(ctx.clickhouse, conversionsFixture(siteId, yesterday));
});
afterAll(() => ctx.close());

const get = (what: string, query = 'range=7d', apiKey = key) =>
  call('GET', `/api/external/v1/analytics/${siteId}/${what}?${query}`, { apiKey });

describe('External API conversions', () => {
  it('lists every goal with its completions, rate and (for purchases) revenue', async () => {
    const res = await get('goals');
    expect(res.status).toBe(200);
    const { goals, total_visitors } = res.body.data;
    expect(total_visitors).toBe(5);
    for (const g of goals) expect(g.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(goals.map(({ id: _id, ...rest }: { id: string }) => rest)).toEqual([
      { name: 'Signup', kind: 'event', visitors: 3, events: 3, conversion_rate: 60, revenue: null },
      { name: 'Thank you', kind: 'page', visitors: 1, events: 1, conversion_rate: 20, revenue: null },
      { name: 'Docs', kind: 'page', visitors: 2, events: 2, conversion_rate: 40, revenue: null },
      { name: 'Purchase', kind: 'purchase', visitors: 2, events: 3, conversion_rate: 40, revenue: usd(100) },
    ]);
  });

  it('lists custom events with their properties’ most frequent values', async () => {
    const res = await get('events');
    expect(res.status).toBe(200);
    expect(res.body.data.events).toEqual([
      {
        name: 'Signup',
        visitors: 3,
        events: 3,
        properties: [
          {
            key: 'method',
            values: [
              { value: 'email', events: 1 },
              { value: 'google', events: 1 },
            ],
          },
          {
            key: 'plan',
            values: [
              { value: 'free', events: 1 },
              { value: 'pro', events: 1 },
            ],
          },
        ],
      },
      {
        name: 'Download',
        visitors: 1,
        events: 1,
        properties: [{ key: 'file', values: [{ value: 'a.pdf', events: 1 }] }],
      },
    ]);
    const one = await get('events', 'range=7d&limit=1');
    expect(one.body.data.events.map((e: { name: string }) => e.name)).toEqual(['Signup']);
  });

  it('reports revenue in the website currency, by day and by the visit’s source, other currencies apart', async () => {
    const res = await get('revenue');
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      currency: 'USD',
      total: usd(100),
      average: usd(50),
      purchases: 3,
      by_source: [{ source: 'Google', revenue: usd(100), visitors: 2 }],
      other_currencies: [{ currency: 'EUR', total: 50 }],
    });
    expect(data.by_day).toHaveLength(7);
    expect(data.by_day.filter((d: { revenue: { value: number } }) => d.revenue.value !== 0)).toEqual([
      { date: yesterday, revenue: usd(100) },
    ]);
  });

  it('answers 404 to another team’s key and 400 to an unknown range', async () => {
    for (const what of ['goals', 'events', 'revenue']) {
      const res = await get(what, 'range=7d', otherKey);
      expect({ what, status: res.status }).toEqual({ what, status: 404 });
    }
    const bad = await get('goals', 'range=forever');
    expect({ status: bad.status, code: bad.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });
});
