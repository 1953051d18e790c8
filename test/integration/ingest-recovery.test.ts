// A worker that stores rows and then dies before acknowledging its jobs must not double them when the jobs
// come back, even regrouped with other jobs in a different flush.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Worker } from 'bullmq';
import { sweepIngestPayloads } from '../../jobs/sweepIngestPayloads';
import { dedupToken, insertEventsText } from '../../lib/ingest/chWriter';
import { IdempotencyKeys } from '../../lib/ingest/dedupe';
import { packEvents, packJob } from '../../lib/ingest/rows';
import { ingestEnqueuer, ingestPayloadKey } from '../../lib/queue/ingest';
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import { createLogger } from '../../lib/log';
import { QUEUE_NAMES } from '../../lib/queue/queues';
import { bullPrefix, createRedis } from '../../lib/redis';
import { IngestWriter } from '../../workers/ingestWriter';
import { createTestContext, type TestContext } from '../helpers/context';
import { eventRow } from '../helpers/statsFixture';
import { countEvents, ingestFixture, pageview, waitForEvents, type IngestFixture } from '../helpers/ingest';

let ctx: TestContext;
let fx: IngestFixture;
const logger = createLogger('silent', 'test');

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
});
afterAll(() => ctx.close());

/** A ClickHouse client whose event inserts really happen, then `after` decides what the caller sees. */
function clickhouseWithInsertHook(after: (call: number) => Promise<void>): ClickHouseClient {
  let calls = 0;
  return new Proxy(ctx.clickhouse, {
    get(target, prop, receiver) {
      if (prop === 'exec') {
        return async (params: Parameters<ClickHouseClient['exec']>[0]) => {
          const result = await target.exec(params);
          if (!params.query.startsWith('INSERT INTO events')) return result;
          // The insert has landed once its response is read to the end.
          for await (const _chunk of result.stream) void _chunk;
          await after(++calls);
          return { ...result, stream: Readable.from([]) };
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function startWriter(clickhouse: ClickHouseClient, opts: { lockDuration?: number; maxWaitMs?: number; concurrency?: number } = {}) {
  const connection = createRedis(ctx.config.REDIS_URL, 'worker', 'test-writer');
  const writer = new IngestWriter({
    clickhouse,
    pool: ctx.pool,
    idempotency: new IdempotencyKeys(ctx.redis, ctx.config.REDIS_PREFIX),
    queueRedis: connection,
    logger,
    concurrency: opts.concurrency ?? 8,
    // Long enough that jobs arriving close together share a flush: the retries below are regrouped.
    maxWaitMs: opts.maxWaitMs ?? 1_500,
  });
  const worker = new Worker(QUEUE_NAMES.ingest, writer.process, {
    connection,
    prefix: bullPrefix(ctx.config.REDIS_PREFIX),
    concurrency: opts.concurrency ?? 8,
    lockDuration: opts.lockDuration ?? 30_000,
    // Short for every worker of this file: the queue-wide stalled check is throttled by the last interval set.
    stalledInterval: 1_000,
  });
  writer.attach(worker);
  worker.on('error', () => undefined); // a "dead" worker's lock renewals fail by design
  return {
    async stop() {
      await worker.close();
      await connection.quit().catch(() => undefined);
    },
    /** Like kill -9: its Redis connection drops at once, so it renews no lock and acknowledges nothing. */
    async kill() {
      connection.disconnect();
      await worker.close(true).catch(() => undefined);
    },
  };
}

async function postBatches(n: number, size: number, tag: string) {
  let accepted = 0;
  for (let i = 0; i < n; i++) {
    const res = await fx.post(Array.from({ length: size }, () => pageview({}, { url: `https://shop.example.com/${tag}` })));
    accepted += res.body.acceptedCount;
  }
  return accepted;
}

it('a flush whose insert landed but whose jobs failed is retried, regrouped, and stored exactly once', async () => {
  // The first insert lands, then the writer "crashes" before the jobs are acknowledged.
  let flushes = 0;
  const w = startWriter(
    clickhouseWithInsertHook(async (call) => {
      flushes = call;
      if (call === 1) throw new Error('simulated crash after insert');
    }),
  );
  try {
    const first = await postBatches(3, 50, 'crash-a');
    // The failed jobs come back after a 1 s backoff; fresh jobs posted meanwhile share their next flush,
    // so the retry's insert carries other rows (and another dedup token) than the one that landed.
    await waitForEvents(ctx, first, `pathname = '/crash-a'`);
    const second = await postBatches(2, 50, 'crash-a');
    const accepted = first + second;
    expect(accepted).toBe(250);
    expect(await waitForEvents(ctx, accepted, `pathname = '/crash-a'`, 20_000)).toBe(accepted);
    await new Promise((r) => setTimeout(r, 2_000)); // let any further retry run
    expect(flushes).toBe(2);
    expect(await countEvents(ctx, `pathname = '/crash-a'`)).toBe(accepted);
    const sessions = await (
      await ctx.clickhouse.query({
        query: `SELECT sum(pageviews) AS pv FROM sessions WHERE website_id = {w:UUID}`,
        query_params: { w: fx.website.id },
        format: 'JSONEachRow',
      })
    ).json<{ pv: string }>();
    expect(Number(sessions[0].pv)).toBe(await countEvents(ctx, `website_id = '${fx.website.id}' AND type = 'pageview'`));
  } finally {
    await w.stop();
  }
});

it('jobs of a worker that died after inserting (lock lapsed, jobs stalled) are not doubled by the next worker', async () => {
  // The dying worker's insert lands and then never returns: the process is gone as far as BullMQ can tell.
  const dying = startWriter(clickhouseWithInsertHook(() => new Promise(() => undefined)), { lockDuration: 1_000, maxWaitMs: 100 });
  const accepted = await postBatches(4, 25, 'stalled-b');
  expect(await waitForEvents(ctx, 1, `pathname = '/stalled-b'`)).toBeGreaterThan(0);
  await dying.kill();
  // The heir flushes when all six jobs (two new, four stalled) are in its buffer: one flush holds both kinds,
  // so its insert differs from the one that landed and only the stored-rows check prevents doubles.
  const heir = startWriter(ctx.clickhouse, { lockDuration: 1_000, maxWaitMs: 15_000, concurrency: 6 });
  try {
    const more = await postBatches(2, 25, 'stalled-b');
    const total = accepted + more;
    expect(await waitForEvents(ctx, total, `pathname = '/stalled-b'`, 20_000)).toBe(total);
    // Wait until the queue is empty: every stalled job has been handed over and completed.
    const end = Date.now() + 20_000;
    const prefix = bullPrefix(ctx.config.REDIS_PREFIX);
    while (Date.now() < end) {
      const [active, wait] = await Promise.all([
        ctx.redis.llen(`${prefix}:${QUEUE_NAMES.ingest}:active`),
        ctx.redis.llen(`${prefix}:${QUEUE_NAMES.ingest}:wait`),
      ]);
      if (active + wait === 0) break;

      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await countEvents(ctx, `pathname = '/stalled-b'`)).toBe(total);
  } finally {
    await heir.stop();
  }
});

describe('job payloads', () => {
  const queueName = () => `${bullPrefix(ctx.config.REDIS_PREFIX)}:${QUEUE_NAMES.ingest}`;
  const payloadKeys = async () => (await ctx.redis.keys(`${ingestPayloadKey(queueName(), '')}*`)).sort();
  const job = (path: string) =>
    packJob(fx.website.id, [eventRow(fx.website.id, { pathname: path, session_id: randomUUID(), ts: new Date().toISOString() })], {
      identities: [], payments: [], interactions: [], errors: [], replays: [],
    });

  it('travel beside their job, are deleted once it completes, and a sweep removes only orphans', async () => {
    const enqueue = ingestEnqueuer(ctx.ingestQueue);
    const id = randomUUID();
    const queued = job('/payload-a');
    await enqueue(id, queued);
    const key = ingestPayloadKey(queueName(), id);
    expect(await ctx.redis.getBuffer(key)).toEqual(queued.payload);
    expect(JSON.stringify(await ctx.redis.hget(`${queueName()}:${id}`, 'data'))).not.toContain('/payload-a');
    // An orphan: a payload whose job is gone.
    const orphan = ingestPayloadKey(queueName(), randomUUID());
    await ctx.redis.set(orphan, 'left behind');
    expect(await sweepIngestPayloads(ctx.redis, ctx.config.REDIS_PREFIX)).toEqual({ scanned: 2, deleted: 1 });
    expect(await payloadKeys()).toEqual([key]);

    const w = startWriter(ctx.clickhouse, { maxWaitMs: 100 });
    try {
      expect(await waitForEvents(ctx, 1, `pathname = '/payload-a'`)).toBe(1);
      const end = Date.now() + 5_000;
      while ((await payloadKeys()).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      expect(await payloadKeys()).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('a job of a request answered 503 (released) writes nothing; the next request’s job is written', async () => {
    const enqueue = ingestEnqueuer(ctx.ingestQueue);
    const keys = new IdempotencyKeys(ctx.redis, ctx.config.REDIS_PREFIX);
    const voidToken = randomUUID();
    await enqueue(voidToken, job('/voided-c'));
    await keys.release([], voidToken);
    await enqueue(randomUUID(), job('/kept-c'));
    const w = startWriter(ctx.clickhouse, { maxWaitMs: 100 });
    try {
      expect(await waitForEvents(ctx, 1, `pathname = '/kept-c'`)).toBe(1);
      await new Promise((r) => setTimeout(r, 500));
      expect(await countEvents(ctx, `pathname = '/voided-c'`)).toBe(0);
    } finally {
      await w.stop();
    }
  });

  it('the same rows inserted twice with one token are stored once, their session too', async () => {
    const session = randomUUID();
    const rows = [1, 2].map((i) => eventRow(fx.website.id, { pathname: '/twice-d', session_id: session, ts: new Date(Date.now() - i * 1000).toISOString() }));
    const { eventsText, eventIds } = packEvents(rows);
    await insertEventsText(ctx.clickhouse, eventsText, dedupToken(eventIds));
    await insertEventsText(ctx.clickhouse, Buffer.from(eventsText), dedupToken(eventIds));
    expect(await countEvents(ctx, `pathname = '/twice-d'`)).toBe(2);
    const sessions = await (
      await ctx.clickhouse.query({
        query: `SELECT count() AS n, sum(pageviews) AS pv FROM sessions WHERE website_id = {w:UUID} AND session_id = {s:String}`,
        query_params: { w: fx.website.id, s: session },
        format: 'JSONEachRow',
      })
    ).json<{ n: string; pv: string }>();
    expect(sessions[0]).toEqual({ n: '1', pv: '2' });
    // Another token is another insert.
    await insertEventsText(ctx.clickhouse, eventsText, dedupToken([...eventIds, 'x']));
    expect(await countEvents(ctx, `pathname = '/twice-d'`)).toBe(4);
  });
});
