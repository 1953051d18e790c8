import { main } from '../../../cli/main';
import { packJob } from '../../../lib/ingest/job/rowBinary';
import { INGEST_JOB_NAME, ingestEnqueuer } from '../../../lib/queue/ingest';
import { createProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { createApiKey, registerUser } from '../../helpers/accounts';
import { captureIo as io } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type IngestFixture, ingestFixture, pageview, startTestWorker, waitForEvents } from '../../helpers/ingest';
import { eventRow } from '../../helpers/statsFixture';

let ctx: TestContext;
let fx: IngestFixture;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker.stop();
  await ctx.close();
});

const env = () => ({
  DATABASE_URL: ctx.config.DATABASE_URL,
  REDIS_URL: ctx.config.REDIS_URL,
  REDIS_PREFIX: ctx.config.REDIS_PREFIX,
  CLICKHOUSE_URL: ctx.config.CLICKHOUSE_URL,
  CLICKHOUSE_PASSWORD: ctx.config.CLICKHOUSE_PASSWORD,
  CLICKHOUSE_DATABASE: ctx.config.CLICKHOUSE_DATABASE,
  DATA_DIR: ctx.config.DATA_DIR,
  JWT_SECRET: ctx.config.JWT_SECRET,
});

describe('failed jobs', () => {
  it('a malformed job fails at once into the failed list; the CLI lists and retries it', async () => {
    const queue = createProducerQueue(QUEUE_NAMES.ingest, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
    try {
      const job = await queue.add(INGEST_JOB_NAME, { v: 1, rows: 'not rows' }, { jobId: 'malformed-1', attempts: 5 });
      const end = Date.now() + 10_000;
      while (!(await job.isFailed()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(await job.isFailed()).toBe(true);
      const listed = io();
      expect(await main(['queue', 'failed'], listed, env())).toBe(0);
      const out = listed.stdout.join('\n');
      expect(out).toMatch(/^1 failed job\(s\) in ingest/);
      expect(out).toMatch(/malformed-1\tbatch\tattempts=1\t.*malformed ingest job/);
      const retried = io();
      expect(await main(['queue', 'retry', '--id', 'malformed-1'], retried, env())).toBe(0);
      expect(retried.stdout.join('')).toMatch(/1 job\(s\) moved back to ingest/);
      // Still malformed, so it fails again: but it did run again.
      const again = Date.now() + 10_000;
      while (Date.now() < again) {
        const fresh = await queue.getJob('malformed-1');
        if (fresh && (await fresh.isFailed()) && fresh.attemptsMade === 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await queue.getJob('malformed-1'))?.attemptsMade).toBe(2);
      expect(await main(['queue', 'retry'], io(), env())).toBe(2);
      expect(await main(['queue', 'failed', '--queue', 'nope'], io(), env())).toBe(2);
    } finally {
      await queue.close();
    }
  });
});

const noSide = { identities: [], payments: [], interactions: [], errors: [], replays: [] };

/** Waits until job `id` of the ingest queue has failed; then whether it did, its failed reason and attempts. */
async function failedJob(id: string) {
  const end = Date.now() + 20_000;
  while (!(await (await ctx.ingestQueue.getJob(id))?.isFailed()) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 50));
  // Read once failed: a job object read before holds its fields as they were then.
  const job = await ctx.ingestQueue.getJob(id);
  return { failed: (await job?.isFailed()) ?? false, reason: job?.failedReason, attempts: job?.attemptsMade };
}

describe('a job ClickHouse cannot read', () => {
  it('fails alone; the jobs flushed with it are stored', async () => {
    // A well-formed job whose payload row ClickHouse refuses (a UUID column holds garbage).
    const bad = eventRow(fx.website.id, { event_id: 'also-not', ts: new Date().toISOString() });
    await ingestEnqueuer(ctx.ingestQueue, 100)('poison-1', packJob(fx.website.id, [bad], noSide));
    const good = [pageview(), pageview()];
    expect((await fx.post(good)).body.acceptedCount).toBe(2);
    expect(
      await waitForEvents(ctx, 2, `idempotency_key IN ('${good[0].idempotencyKey}', '${good[1].idempotencyKey}')`),
    ).toBe(2);
    // Unrecoverable: not retried eleven more times.
    expect(await failedJob('poison-1')).toMatchObject({
      failed: true,
      attempts: 1,
      reason: expect.stringMatching(/UUID/i),
    });
  });
});

describe('job format', () => {
  it('a job of another version than the one format fails at once as malformed and writes nothing', async () => {
    const row = eventRow(fx.website.id, { pathname: '/other-version', ts: new Date().toISOString() });
    const { data, payload } = packJob(fx.website.id, [row], noSide);
    // v4 was this layout with JSON lines as the payload; read as RowBinary they would be garbage.
    await ingestEnqueuer(ctx.ingestQueue, 100)('other-version-1', {
      data: { ...data, v: 4 } as unknown as typeof data,
      payload,
    });
    expect(await failedJob('other-version-1')).toMatchObject({
      failed: true,
      attempts: 1,
      reason: expect.stringMatching(/^malformed ingest job/),
    });
    expect(await waitForEvents(ctx, 1, `pathname = '/other-version'`, 500)).toBe(0);
  });
});

describe('API key activity panel', () => {
  it('shows accepted events only, for admins of the key’s team', async () => {
    const { id, key } = await createApiKey(ctx, fx.user);
    const events = [pageview(), pageview(), { type: 'event', ts: Date.now(), props: { name: 'Signup clicked' } }];
    const res = await fx.post([...events, { ...pageview(), ts: 'yesterday' }], { key });
    expect(res.body).toMatchObject({ acceptedCount: 3, rejectedCount: 1 });
    await waitForEvents(ctx, 3, `api_key_id = '${id}'`);
    const call = client(ctx.baseUrl);
    const panel = await call('GET', `/api/teams/${fx.user.teamId}/api-keys/${id}/activity`, { token: fx.user.token });
    expect(panel.status).toBe(200);
    expect(panel.body.data.api_key).toMatchObject({ id, permission: 'full_access' });
    expect(panel.body.data.accepted_last_24h).toBe(3);
    expect(panel.body.data.accepted_last_7d).toBe(3);
    expect(panel.body.data.top_event_types).toEqual([
      { type: 'pageview', count: 2 },
      { type: 'event', count: 1 },
    ]);
    expect(panel.body.data.recent_events).toHaveLength(3);
    const stranger = await registerUser(ctx, 'pro', 'stranger');
    expect(
      (await call('GET', `/api/teams/${fx.user.teamId}/api-keys/${id}/activity`, { token: stranger.token })).status,
    ).toBe(404);
    expect(
      (await call('GET', `/api/teams/${stranger.teamId}/api-keys/${id}/activity`, { token: stranger.token })).status,
    ).toBe(404);
  });
});

describe('retention follows the plan', () => {
  it('admin plan re-stamps expire_at of the team’s stored rows', async () => {
    const ev = pageview();
    await fx.post([ev]);
    await waitForEvents(ctx, 1, `idempotency_key = '${ev.idempotencyKey}'`);
    const days = async () =>
      (
        await (
          await ctx.clickhouse.query({
            query: `SELECT dateDiff('day', toDateTime(ts), expire_at) AS d FROM events WHERE idempotency_key = {k:String}`,
            query_params: { k: ev.idempotencyKey },
            format: 'JSONEachRow',
          })
        ).json<{ d: string }>()
      ).map((r) => Number(r.d))[0];
    expect(await days()).toBe(1825); // enterprise
    // A rolled-up day's visit values (visit-key filters read them) must live as long as its events.
    await ctx.clickhouse.command({
      query: `INSERT INTO visit_values (website_id, tz, date, session_id, source_name, expire_at, version)
              VALUES ({w:UUID}, 'UTC', today(), 'retention-probe', 'Google', now() + INTERVAL 1825 DAY, 1)`,
      query_params: { w: fx.website.id },
    });
    const out = io();
    expect(await main(['admin', 'plan', '--team', fx.user.teamId, '--plan', 'pro'], out, env())).toBe(0);
    expect(out.stdout.join('\n')).toMatch(/retention of \d+ website\(s\) set to 365 days/);
    expect(await days()).toBe(365);
    const sessions = await (
      await ctx.clickhouse.query({
        query: `SELECT dateDiff('day', toDateTime(start_ts), expire_at) AS d FROM sessions WHERE session_id = {s:String}`,
        query_params: { s: ev.sessionId },
        format: 'JSONEachRow',
      })
    ).json<{ d: string }>();
    expect(sessions.map((r) => Number(r.d))).toEqual([365]);
    const visitValues = await (
      await ctx.clickhouse.query({
        query: `SELECT dateDiff('day', toDateTime(date), expire_at) AS d FROM visit_values WHERE session_id = 'retention-probe'`,
        format: 'JSONEachRow',
      })
    ).json<{ d: string }>();
    expect(visitValues.map((r) => Number(r.d))).toEqual([365]);
    await main(['admin', 'plan', '--team', fx.user.teamId, '--plan', 'enterprise'], io(), env());
  });
});

describe('metrics', () => {
  it('exports queue depth and writer lag', async () => {
    const res = await client(ctx.baseUrl)('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/tidemark_queue_jobs\{queue="ingest",state="waiting"[^}]*\} \d+/);
    expect(res.text).toMatch(/tidemark_queue_oldest_waiting_seconds\{queue="ingest"[^}]*\} [\d.]+/);
    expect(res.text).toMatch(/tidemark_ingest_writer_lag_seconds\{[^}]*\} [\d.]+/);
  });
});
