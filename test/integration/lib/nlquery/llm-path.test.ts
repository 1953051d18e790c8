// The LLM path of POST /query end to end (issue 27): the web role enqueues on the `llm` queue, a BullMQ worker
// running questionProcessor asks a loopback server speaking the chat-completions protocol, scripted per test
// (a well-formed plan, malformed JSON, an unknown metric, a 500, an answer slower than the timeout), and the
// numbers always come from lib/stats over hand-made events.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'bullmq';
import { createGoal } from '../../../../lib/accounts/goals';
import { setTeamLimits } from '../../../../lib/accounts/teams';
import { MonthlyUsage } from '../../../../lib/limits/usage';
import { QUEUE_NAMES } from '../../../../lib/queue/queues';
import { bullPrefix, createRedis } from '../../../../lib/redis';
import { questionProcessor } from '../../../../workers/questions';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { eventRow, storeRows } from '../../../helpers/statsFixture';

type Reply = { status?: number; body?: unknown; delayMs?: number };
interface Seen {
  tools: boolean;
  body: { messages: { role: string; content: string }[]; tools?: { function: { parameters: unknown } }[] };
}

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let site: string;
let key: string;
let worker: Worker;
let workerRedis: ReturnType<typeof createRedis>;
let server: http.Server;
let planReplies: Reply[] = [];
let summaryReply: Reply;
let seen: Seen[] = [];
const DAY = 86_400_000;
const TIMEOUT_MS = 1500;

const completion = (message: Record<string, unknown>) => ({
  id: 'cmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'test-model',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: null, ...message } }],
  usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
});
const toolReply = (args: string): Reply => ({
  body: completion({
    tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'answer_with_query_plan', arguments: args } }],
  }),
});
const textReply = (content: string): Reply => ({ body: completion({ content }) });
const plan = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    intent: 'total',
    metrics: ['visitors'],
    dimension: null,
    filters: [{ key: 'country', operator: 'is', value: 'DE' }],
    range: '7d',
    compare_to: null,
    interval: null,
    limit: 10,
    result: 'number',
    ...over,
  });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as Seen['body'];
      const tools = Array.isArray(body.tools);
      seen.push({ tools, body });
      const reply = (tools ? planReplies.shift() : summaryReply) ?? { status: 500, body: { error: 'unscripted' } };
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  ctx = await createTestContext({
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: base,
    OPENAI_MODEL: 'test-model',
    LLM_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  call = client(ctx.baseUrl);
  const connection = createRedis(ctx.config.REDIS_URL, 'worker', 'llm-test-worker');
  workerRedis = connection;
  worker = new Worker(
    QUEUE_NAMES.llm,
    questionProcessor(
      { pool: ctx.pool, clickhouse: ctx.clickhouse, redis: connection, redisPrefix: ctx.config.REDIS_PREFIX },
      { apiKey: 'test-key', baseURL: base, model: 'test-model', timeoutMs: TIMEOUT_MS },
    ),
    { connection, prefix: bullPrefix(ctx.config.REDIS_PREFIX), concurrency: 2 },
  );
  owner = await registerUser(ctx, 'scale', 'llm');
  await setTeamLimits(ctx.pool, owner.teamId, { rpm: null, monthly: 1000 });
  site = (await createWebsite(ctx, owner, 'llm.example.com')).id;
  key = (await createApiKey(ctx, owner)).key;
  await createGoal(ctx.pool, site, owner.id, { name: 'Signup', kind: 'event' });
  // Two days ago: v1 and v2 from Germany, v3 from the US; one Signup (v2) with plan=pro.
  const at = new Date(Math.floor(Date.now() / DAY) * DAY - 2 * DAY + DAY / 2).toISOString();
  const v = (id: string, country: string) => ({ visitor_id: id, session_id: `s-${id}`, country_code: country, ts: at });
  await storeRows(ctx.clickhouse, [
    eventRow(site, { ...v('v1', 'DE'), pathname: '/' }),
    eventRow(site, { ...v('v2', 'DE'), pathname: '/pricing' }),
    eventRow(site, { ...v('v2', 'DE'), type: 'event', name: 'Signup', props: '{"plan":"pro"}' }),
    eventRow(site, { ...v('v3', 'US'), pathname: '/' }),
  ]);
});

afterAll(async () => {
  await worker.close();
  await workerRedis.quit();
  await ctx.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  planReplies = [];
  summaryReply = textReply('2 visitors came from Germany in the last 7 days.');
});

let n = 0;
/** Each test asks its own wording, so no answer comes from another test's cache. */
const ask = (question: string) =>
  call('POST', `/api/external/v1/query/${site}`, {
    apiKey: key,
    body: { question: `${question}${' '.repeat(++n % 3)} #${n}` },
  });
const used = () => new MonthlyUsage(ctx.redis, ctx.config.REDIS_PREFIX).used(owner.teamId);

describe('the LLM path', () => {
  it('runs a well-formed plan through lib/stats and keeps a summary whose numbers are in the results', async () => {
    planReplies = [toolReply(plan())];
    const res = await ask('How many Germans visited?');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      intent: 'total',
      confidence: 0.9,
      time_range: '7d',
      results: { type: 'number', value: 2 },
      summary: '2 visitors came from Germany in the last 7 days.',
    });
    const [planCall, summaryCall] = seen;
    expect([planCall.tools, summaryCall.tools]).toEqual([true, false]);
    // The tool's schema is the zod plan's; the context names this website's goal, event and property values.
    expect(JSON.stringify(planCall.body.tools?.[0].function.parameters)).toContain('"conversion_rate"');
    const system = planCall.body.messages[0].content;
    expect(system).toContain('"goals":["Signup"]');
    expect(system).toContain('"key":"plan","values":["pro"]');
    expect(planCall.body.messages[1].content).toMatch(/^How many Germans visited\?/);
  });

  it('falls back to the template when the model’s summary states a number the results do not hold', async () => {
    planReplies = [toolReply(plan())];
    summaryReply = textReply('About 5 visitors came from Germany.');
    const res = await ask('How many Germans visited?');
    expect(res.body.data.results.value).toBe(2);
    expect(res.body.data.summary).not.toContain('5');
    expect(res.body.data.summary).toContain('2');
  });

  it('asks again after malformed JSON and uses the second, valid plan', async () => {
    planReplies = [toolReply('{"intent": "total", '), toolReply(plan({ filters: [] }))];
    const res = await ask('How many people visited?');
    expect(res.body.data).toMatchObject({ confidence: 0.9, results: { value: 3 } });
    expect(seen.filter((s) => s.tools)).toHaveLength(2);
  });

  it('hands the question to the interpreter after two invalid plans (malformed JSON, an unknown metric)', async () => {
    planReplies = [toolReply('not json'), toolReply(plan({ metrics: ['sessions_per_user'] }))];
    const res = await ask('How many visitors from Germany in the last 7 days?');
    expect(res.status).toBe(200);
    expect(res.body.data.results.value).toBe(2);
    expect(res.body.data.confidence).not.toBe(0.9);
    expect(seen.filter((s) => s.tools)).toHaveLength(2);
    expect(seen.some((s) => !s.tools)).toBe(false); // the interpreter's summary is the template
  });

  it('hands the question to the interpreter when the server answers 500, without a second try', async () => {
    planReplies = [{ status: 500, body: { error: { message: 'boom' } } }];
    const res = await ask('How many visitors from the US in the last 7 days?');
    expect(res.body.data.results.value).toBe(1);
    expect(seen).toHaveLength(1);
  });

  it('answers 422 when neither the model nor the interpreter has a plan', async () => {
    planReplies = [toolReply('{}'), toolReply('{}')];
    const res = await ask('Tell me a joke');
    expect([res.status, res.body.error.code]).toEqual([422, 'QUERY_UNPROCESSABLE']);
  });

  it('answers 503 with Retry-After past the timeout, and refunds the credits', async () => {
    const before = await used();
    planReplies = [{ ...toolReply(plan()), delayMs: TIMEOUT_MS + 1000 }];
    const started = Date.now();
    const res = await ask('How many Germans visited?');
    expect([res.status, res.body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(res.headers.get('retry-after')).toBe('10');
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 900);
    await new Promise((r) => setTimeout(r, 100));
    expect(await used()).toBe(before);
  });

  it('answers an identical question for the same site and range from the cache, charging it', async () => {
    planReplies = [toolReply(plan())];
    const body = { question: 'Visitors from Germany, cached?', context: { time_range: '7d' } };
    const first = await call('POST', `/api/external/v1/query/${site}`, { apiKey: key, body });
    const calls = seen.length;
    const before = await used();
    const again = await call('POST', `/api/external/v1/query/${site}`, {
      apiKey: key,
      body: { ...body, question: '  visitors FROM germany,   cached?' },
    });
    expect(again.body.data).toEqual(first.body.data);
    expect(seen).toHaveLength(calls);
    expect(await used()).toBe(before + 3);
    const other = await call('POST', `/api/external/v1/query/${site}`, {
      apiKey: key,
      body: { ...body, context: { time_range: '30d' } },
    });
    expect(other.status).toBe(200);
    expect(seen.length).toBeGreaterThan(calls);
  });

  it('counts questions by path, failures and tokens in /metrics', async () => {
    const text = await ctx.metrics.registry.metrics();
    expect(text).toMatch(/tidemark_nlquery_questions_total\{path="llm",role="test"\} [1-9]/);
    expect(text).toMatch(/tidemark_nlquery_questions_total\{path="interpreter",role="test"\} [1-9]/);
    expect(text).toMatch(/tidemark_nlquery_questions_total\{path="cache",role="test"\} 1/);
    expect(text).toMatch(/tidemark_nlquery_failures_total\{reason="timeout",role="test"\} 1/);
    expect(text).toMatch(/tidemark_nlquery_failures_total\{reason="invalid",role="test"\} [1-9]/);
    expect(text).toMatch(/tidemark_nlquery_failures_total\{reason="unreachable",role="test"\} [1-9]/);
    expect(text).toMatch(/tidemark_nlquery_tokens_total\{kind="prompt",role="test"\} [1-9]\d*/);
  });
});
