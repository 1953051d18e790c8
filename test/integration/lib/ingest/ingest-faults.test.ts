// Idempotency under faults: an event answered "deduped" is one that was durably queued, and a claim whose
// request died, timed out or lost a race never blocks the retry. Nothing accepted is lost, nothing doubled.
import { randomUUID } from 'node:crypto';
import { IdempotencyKeys } from '../../../../lib/ingest/accept/dedupe';
import type { ProducerQueue } from '../../../../lib/queue/queues';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { countEvents, type IngestFixture, ingestFixture, pageview, startTestWorker } from '../../../helpers/ingest';
import { type PrivateRedis, startPrivateRedis } from '../../../helpers/privateRedis';
import { startWebProcess, type WebProcess } from '../../../helpers/web-process';

jest.setTimeout(180_000);

type Batch = ReturnType<typeof pageview>[];
const batchOf = (n: number, tag: string): Batch =>
  Array.from({ length: n }, () => pageview({}, { url: `https://shop.example.com/${tag}` }));
const keysOf = (batch: Batch) => batch.map((e) => e.idempotencyKey);

/** Stored rows and distinct idempotency keys among `keys` (or matching `where`), once the writers have caught up with `expected`. */
async function stored(
  ctx: TestContext,
  keys: string[],
  expected: number,
  timeoutMs = 30_000,
  where = `idempotency_key IN (${keys.map((k) => `'${k}'`).join(',')})`,
) {
  const end = Date.now() + timeoutMs;
  let rows = await countEvents(ctx, where);
  while (rows < expected && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    rows = await countEvents(ctx, where);
  }
  await new Promise((r) => setTimeout(r, 1_500)); // anything late (a duplicate) lands too
  const [row] = await (
    await ctx.clickhouse.query({
      query: `SELECT count() AS n, uniqExact(idempotency_key) AS d FROM events WHERE ${where}`,
      format: 'JSONEachRow',
    })
  ).json<{ n: string; d: string }>();
  return { rows: Number(row.n), distinct: Number(row.d) };
}

/** The next enqueue lands, but its caller is told it timed out (a reply lost to the command timeout). */
function loseNextReply(queue: ProducerQueue) {
  const real = queue.addWithPayload.bind(queue);
  return jest.spyOn(queue, 'addWithPayload').mockImplementationOnce(async (...args) => {
    await real(...args);
    throw new Error('Command timed out');
  });
}

describe('within one web role', () => {
  let ctx: TestContext;
  let fx: IngestFixture;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    ctx = await createTestContext();
    fx = await ingestFixture(ctx);
    worker = await startTestWorker(ctx);
  });
  afterAll(async () => {
    await worker?.stop();
    await ctx?.close();
  });

  it('keys claimed by a request that died before enqueueing are taken over by the retry, not answered deduped', async () => {
    const batch = batchOf(50, 'died');
    // What a web role killed between its claim and its enqueue leaves behind.
    const claims = await new IdempotencyKeys(ctx.dedupeRedis, ctx.config.REDIS_PREFIX).claim(
      fx.website.id,
      keysOf(batch),
      randomUUID(),
    );
    expect(claims.every((c) => c.kind === 'claimed')).toBe(true);
    const retry = await fx.post(batch);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ acceptedCount: 50, dedupedCount: 0 });
    // Now the events are queued: a further retry is a duplicate.
    expect((await fx.post(batch)).body).toMatchObject({ acceptedCount: 0, dedupedCount: 50 });
    expect(await stored(ctx, keysOf(batch), 50)).toEqual({ rows: 50, distinct: 50 });
  });

  it('an enqueue whose reply was lost but which landed is answered 200, and its retry deduped', async () => {
    const batch = batchOf(20, 'lost-reply');
    const spy = loseNextReply(ctx.ingestQueue as ProducerQueue);
    try {
      const res = await fx.post(batch);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ acceptedCount: 20, dedupedCount: 0 });
    } finally {
      spy.mockRestore();
    }
    expect((await fx.post(batch)).body).toMatchObject({ acceptedCount: 0, dedupedCount: 20 });
    expect(await stored(ctx, keysOf(batch), 20)).toEqual({ rows: 20, distinct: 20 });
  });

  it('events without keys whose enqueue reply was lost but which landed are answered 200 and stored once', async () => {
    const batch = batchOf(10, 'lost-reply-keyless').map((e) => ({ ...e, idempotencyKey: undefined }));
    const spy = loseNextReply(ctx.ingestQueue as ProducerQueue);
    try {
      const res = await fx.post(batch);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ acceptedCount: 10, dedupedCount: 0 });
    } finally {
      spy.mockRestore();
    }
    const where = `pathname = '/lost-reply-keyless'`;
    expect(await stored(ctx, [], 10, 30_000, where)).toEqual({ rows: 10, distinct: 1 }); // no keys: one empty key
  });

  it('an enqueue that failed without landing is answered 503 and its retry accepted', async () => {
    const batch = batchOf(20, 'no-landing');
    const spy = jest
      .spyOn(ctx.ingestQueue as ProducerQueue, 'addWithPayload')
      .mockRejectedValueOnce(new Error('Connection is closed.'));
    try {
      const res = await fx.post(batch);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).not.toBeNull();
    } finally {
      spy.mockRestore();
    }
    expect((await fx.post(batch)).body).toMatchObject({ acceptedCount: 20, dedupedCount: 0 });
    expect(await stored(ctx, keysOf(batch), 20)).toEqual({ rows: 20, distinct: 20 });
  });

  it('a retry that overtakes its first try voids it: one is answered 200, the other 503, the events are stored once', async () => {
    const batch = batchOf(30, 'overtaken');
    const queue = ctx.ingestQueue as ProducerQueue;
    const real = queue.addWithPayload.bind(queue);
    let releaseFirst!: () => void;
    const firstWaits = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    const spy = jest.spyOn(queue, 'addWithPayload').mockImplementationOnce(async (...args) => {
      firstArrived();
      await firstWaits; // the first try stalls between its claim and its enqueue
      return real(...args);
    });
    try {
      const first = fx.post(batch);
      await arrived;
      const retry = await fx.post(batch);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ acceptedCount: 30, dedupedCount: 0 });
      releaseFirst();
      expect((await first).status).toBe(503);
    } finally {
      spy.mockRestore();
    }
    expect((await fx.post(batch)).body).toMatchObject({ acceptedCount: 0, dedupedCount: 30 });
    expect(await stored(ctx, keysOf(batch), 30)).toEqual({ rows: 30, distinct: 30 });
  });
});

// The faults of the hostile test, with real processes: the web role SIGKILLed mid-request, and its Redis
// paused past the web role's 5 s command timeout. Every batch is then retried with the same keys until it
// is answered 200; all must be stored exactly once. Run with the queue and the keys on one Redis, and with
// DEDUPE_REDIS_URL on a second one.
describe.each([
  ['one Redis', false],
  ['DEDUPE_REDIS_URL separate', true],
])('a web role process under faults (%s)', (_name, separateDedupe) => {
  let queueRedis: PrivateRedis;
  let dedupeRedis: PrivateRedis | undefined;
  let ctx: TestContext;
  let fx: IngestFixture;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let web: WebProcess;
  const sent: Batch[] = [];

  beforeAll(async () => {
    queueRedis = await startPrivateRedis();
    dedupeRedis = separateDedupe ? await startPrivateRedis() : undefined;
    ctx = await createTestContext({
      REDIS_URL: queueRedis.url,
      ...(dedupeRedis ? { DEDUPE_REDIS_URL: dedupeRedis.url } : {}),
    });
    fx = await ingestFixture(ctx);
    worker = await startTestWorker(ctx);
    web = await startWebProcess(ctx.config);
  });
  afterAll(async () => {
    await web?.stop();
    await worker?.stop();
    await ctx?.close();
    await queueRedis?.stop();
    await dedupeRedis?.stop();
  });

  const post = (batch: Batch) =>
    client(web.baseUrl)('POST', '/api/v1/events', {
      token: fx.key,
      body: { trackingCode: fx.website.tracking_code, events: batch },
    }).catch((err: Error) => ({ status: 0, body: { error: err.message } }) as const);

  /** Retries each batch with its keys until it is answered 200; answers the 200s. */
  async function retryUntilAccepted(batches: Batch[]) {
    const answers = [];
    for (const batch of batches) {
      for (let attempt = 0; ; attempt++) {
        const res = await post(batch);
        if (res.status === 200) {
          answers.push(res.body as { acceptedCount: number; dedupedCount: number });
          break;
        }
        expect([0, 503]).toContain(res.status);
        if (attempt > 40) throw new Error(`batch never accepted: ${JSON.stringify(res.body)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    return answers;
  }

  it('SIGKILL of the web role mid-request loses and doubles nothing', async () => {
    // Two rounds that cut requests off; on a loaded machine every request of a round may finish before the
    // kill lands, so such a round proves nothing and another one is run (at most 6 in all).
    let interrupted = 0;
    for (let round = 0; round < 6 && interrupted < 2; round++) {
      const batches = Array.from({ length: 6 }, () => batchOf(400, 'killed'));
      sent.push(...batches);
      const inFlight = batches.map(post);
      // Killed as soon as the first batch is answered: the others are somewhere between parse and enqueue.
      await Promise.race(inFlight);
      try {
        await web.kill();
        const first = await Promise.all(inFlight);
        if (first.some((r) => r.status !== 200)) interrupted++;
      } finally {
        // Restarted whatever happened, so a failure here does not leave the next tests without a web role.
        web = await startWebProcess(ctx.config);
      }
      const answers = await retryUntilAccepted(batches);
      for (const a of answers) expect(a.acceptedCount + a.dedupedCount).toBe(400);
    }
    expect(interrupted).toBe(2);
  });

  it.each(separateDedupe ? ['the dedupe Redis', 'the queue Redis'] : ['the Redis'])(
    '%s paused past the command timeout loses and doubles nothing',
    async (which) => {
      const batches = Array.from({ length: 6 }, () => batchOf(400, 'paused'));
      sent.push(...batches);
      const target = which === 'the dedupe Redis' ? dedupeRedis! : queueRedis;
      const started = Date.now();
      const inFlight = batches.map(post);
      await new Promise((r) => setTimeout(r, 30));
      process.kill(target.pid, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, 6_500));
      process.kill(target.pid, 'SIGCONT');
      const first = await Promise.all(inFlight);
      // The pause bit: requests waited past the command timeout. A claim that timed out is answered 503; an
      // enqueue that timed out is settled once Redis is back, often as queued (200).
      expect(Date.now() - started).toBeGreaterThan(5_000);
      for (const r of first) expect([200, 503]).toContain(r.status);
      await retryUntilAccepted(batches);
    },
  );

  it('after all that, every key is stored exactly once and every repeat is answered deduped', async () => {
    // Only these batches were sent to this context's website: every key stored, and once.
    const keys = sent.flatMap(keysOf);
    expect(await stored(ctx, keys, keys.length, 60_000, `pathname IN ('/killed', '/paused')`)).toEqual({
      rows: keys.length,
      distinct: keys.length,
    });
    for (const answer of await retryUntilAccepted(sent))
      expect(answer).toMatchObject({ acceptedCount: 0, dedupedCount: 400 });
  });
});
