// POST /api/conversations/:id/ask (issue 27 point 4): the question and the answer (the /query result and its
// plan) are appended together, follow-ups ("only mobile", "and the last 30 days?", "what about Germany")
// change the previous plan, refusals append nothing, and the Scale gate and team checks hold. Numbers are
// hand-counted from the events below.
import { setTeamLimits } from '../../../lib/accounts/teams';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let proUser: TestUser;
let site: string;
let proSite: string;
const DAY = 86_400_000;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'scale', 'ask');
  await setTeamLimits(ctx.pool, owner.teamId, { rpm: null, monthly: null });
  site = (await createWebsite(ctx, owner, 'ask.example.com')).id;
  proUser = await registerUser(ctx, 'pro', 'ask-pro');
  proSite = (await createWebsite(ctx, proUser, 'ask-pro.example.com')).id;
  // Last 7 days: v1 (DE, mobile: / and /pricing), v2 (US: /pricing), v3 (DE: /). 10 days ago: v4 (DE: /).
  const noon = Math.floor(Date.now() / DAY) * DAY + DAY / 2;
  const at = (daysAgo: number, minute = 0) => new Date(noon - daysAgo * DAY + minute * 60_000).toISOString();
  const v = (id: string, country: string, device = 'desktop') => ({
    visitor_id: id,
    session_id: `s-${id}`,
    country_code: country,
    device_type: device,
  });
  await storeRows(ctx.clickhouse, [
    eventRow(site, { ...v('v1', 'DE', 'mobile'), ts: at(2), pathname: '/' }),
    eventRow(site, { ...v('v1', 'DE', 'mobile'), ts: at(2, 1), pathname: '/pricing' }),
    eventRow(site, { ...v('v2', 'US'), ts: at(2, 5), pathname: '/pricing' }),
    eventRow(site, { ...v('v3', 'DE'), ts: at(3), pathname: '/' }),
    eventRow(site, { ...v('v4', 'DE'), ts: at(10), pathname: '/' }),
  ]);
});

afterAll(() => ctx.close());

async function newConversation(user = owner): Promise<string> {
  const res = await call('POST', '/api/conversations', { token: user.token, body: { title: 'Questions' } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
const ask = (id: string, question: string, websiteId = site, user = owner) =>
  call('POST', `/api/conversations/${id}/ask`, { token: user.token, body: { question, website_id: websiteId } });
const last = (res: { body: { data: { messages: { result?: unknown }[] } } }) =>
  res.body.data.messages[res.body.data.messages.length - 1].result as { results: unknown; time_range: string };

describe('POST /api/conversations/:id/ask', () => {
  it('appends the question and the answer with its result', async () => {
    const id = await newConversation();
    const res = await ask(id, 'Top pages in the last 7 days');
    expect(res.status).toBe(201);
    const [question, answer] = res.body.data.messages;
    expect(question).toMatchObject({ role: 'user', content: 'Top pages in the last 7 days', website_id: site });
    expect(answer).toMatchObject({ role: 'assistant', website_id: site });
    expect(answer.content).toBe(answer.result.summary);
    expect(answer.result).toMatchObject({
      question: 'Top pages in the last 7 days',
      intent: 'breakdown',
      results: {
        type: 'table',
        columns: ['page', 'pageviews'],
        rows: [
          ['/', 2],
          ['/pricing', 2],
        ],
      },
    });
    expect(typeof question.timestamp).toBe('string');
    const read = await call('GET', `/api/conversations/${id}`, { token: owner.token });
    expect(read.body.data.messages).toHaveLength(2);
  });

  it('resolves follow-ups from the earlier turns', async () => {
    const id = await newConversation();
    await ask(id, 'Top pages in the last 7 days');
    const mobile = await ask(id, 'only mobile');
    expect(last(mobile).results).toEqual({
      type: 'table',
      columns: ['page', 'pageviews'],
      rows: [
        ['/', 1],
        ['/pricing', 1],
      ],
    });
    const visitors = await ask(id, 'How many visitors in the last 7 days?');
    expect(last(visitors).results).toMatchObject({ type: 'number', value: 3 });
    const month = await ask(id, 'and the last 30 days?');
    expect(last(month)).toMatchObject({ time_range: '30d', results: { type: 'number', value: 4 } });
    const germany = await ask(id, 'what about Germany?');
    expect(last(germany)).toMatchObject({ time_range: '30d', results: { type: 'number', value: 3 } });
    expect(germany.body.data.messages).toHaveLength(10);
  });

  it('appends nothing for a question it cannot read (422)', async () => {
    const id = await newConversation();
    const res = await ask(id, 'Tell me a joke');
    expect([res.status, res.body.error.code]).toEqual([422, 'QUERY_UNPROCESSABLE']);
    expect((await call('GET', `/api/conversations/${id}`, { token: owner.token })).body.data.messages).toEqual([]);
  });

  it('checks the body, the website’s team and the plan', async () => {
    const id = await newConversation();
    expect(
      (await call('POST', `/api/conversations/${id}/ask`, { token: owner.token, body: { question: 'visitors' } }))
        .status,
    ).toBe(400);
    expect((await ask(id, '')).status).toBe(400);
    expect((await ask(id, 'x'.repeat(501))).status).toBe(400);
    expect((await ask(id, 'visitors', proSite)).status).toBe(404);
    const proConversation = await newConversation(proUser);
    const refused = await ask(proConversation, 'visitors', proSite, proUser);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'PLAN_REQUIRED']);
    expect((await ask(proConversation, 'visitors', site, proUser)).status).toBe(404);
    expect((await ask(id, 'visitors', site, proUser)).status).toBe(404);
  });
});
