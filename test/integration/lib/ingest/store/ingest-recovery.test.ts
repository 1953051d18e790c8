// A worker that stores rows and then dies before acknowledging its jobs must not double them when the jobs
// come back, even regrouped with other jobs in a different flush.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Worker } from 'bullmq';
import { sweepIngestPayloads } from '../../../../../jobs/sweepIngestPayloads';
import type { ClickHouseClient } from '../../../../../lib/clickhouse/client';
// A namespace import: the contract test below watches what the web role hands to packJob.
import * as rowBinary from '../../../../../lib/ingest/job/rowBinary';
import { type EventRow, ingestJobSchema } from '../../../../../lib/ingest/job/rows';
import { dedupToken, insertEventRows } from '../../../../../lib/ingest/store/chWriter';
import { type FlushJob, storeFlush } from '../../../../../lib/ingest/store/flush';
import { createLogger } from '../../../../../lib/log';
import { ingestEnqueuer, ingestPayloadKey } from '../../../../../lib/queue/ingest';
import { QUEUE_NAMES } from '../../../../../lib/queue/queues';
import { bullPrefix, createRedis } from '../../../../../lib/redis';
import { IngestWriter } from '../../../../../workers/ingestWriter';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { client } from '../../../../helpers/http';
import { countEvents, type IngestFixture, ingestFixture, pageview, waitForEvents } from '../../../../helpers/ingest';
import { eventRow, storeRows } from '../../../../helpers/statsFixture';

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

function startWriter(
  clickhouse: ClickHouseClient,
  opts: { lockDuration?: number; maxWaitMs?: number; concurrency?: number } = {},
) {
  const connection = createRedis(ctx.config.REDIS_URL, 'worker', 'test-writer');
  const writer = new IngestWriter({
    clickhouse,
    pool: ctx.pool,
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
    const res = await fx.post(
      Array.from({ length: size }, () => pageview({}, { url: `https://shop.example.com/${tag}` })),
    );
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
    expect(Number(sessions[0].pv)).toBe(
      await countEvents(ctx, `website_id = '${fx.website.id}' AND type = 'pageview'`),
    );
  } finally {
    await w.stop();
  }
});

it('jobs of a worker that died after inserting (lock lapsed, jobs stalled) are not doubled by the next worker', async () => {
  // The dying worker's insert lands and then never returns: the process is gone as far as BullMQ can tell.
  const dying = startWriter(
    clickhouseWithInsertHook(() => new Promise(() => undefined)),
    { lockDuration: 1_000, maxWaitMs: 100 },
  );
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

const noSide = { identities: [], payments: [], interactions: [], errors: [], replays: [] };

describe('job payloads', () => {
  const queueName = () => `${bullPrefix(ctx.config.REDIS_PREFIX)}:${QUEUE_NAMES.ingest}`;
  const payloadKeys = async () => (await ctx.redis.keys(`${ingestPayloadKey(queueName(), '')}*`)).sort();
  const job = (path: string) =>
    rowBinary.packJob(
      fx.website.id,
      [eventRow(fx.website.id, { pathname: path, session_id: randomUUID(), ts: new Date().toISOString() })],
      {
        identities: [],
        payments: [],
        interactions: [],
        errors: [],
        replays: [],
      },
    );

  it('travel beside their job, are deleted once it completes, and a sweep removes only orphans', async () => {
    const enqueue = ingestEnqueuer(ctx.ingestQueue, 100);
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

  it('a void job writes nothing, whether voided before or after it landed; a queued mark cannot be voided', async () => {
    const enqueue = ingestEnqueuer(ctx.ingestQueue, 100);
    // Landed first, voided after (a request whose enqueue reply was lost and that then answered 503).
    const lateVoid = randomUUID();
    expect(await enqueue(lateVoid, job('/voided-c'), { mark: false })).toBe('queued');
    expect(await enqueue.voidUnlessQueued([lateVoid])).toEqual([false]);
    // Voided first (its claims taken over by a retry), landed after: refused its queued mark.
    const early = randomUUID();
    expect(await enqueue.voidUnlessQueued([early])).toEqual([false]);
    expect(await enqueue(early, job('/voided-c'), { mark: true })).toBe('voided');
    // Queued with its mark: voiding it is refused, and it is written.
    const kept = randomUUID();
    expect(await enqueue(kept, job('/kept-c'), { mark: true })).toBe('queued');
    expect(await enqueue.voidUnlessQueued([kept, randomUUID()])).toEqual([true, false]);
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
    const tag = '/twice';
    const rows = [1, 2].map((i) =>
      eventRow(fx.website.id, {
        pathname: tag,
        session_id: session,
        ts: new Date(Date.now() - i * 1000).toISOString(),
      }),
    );
    const eventIds = rows.map((r) => r.event_id);
    const body = rowBinary.packJob(fx.website.id, rows, noSide).payload;
    await insertEventRows(ctx.clickhouse, body, dedupToken(eventIds));
    await insertEventRows(ctx.clickhouse, body, dedupToken(eventIds));
    expect(await countEvents(ctx, `pathname = '${tag}'`)).toBe(2);
    const sessions = await (
      await ctx.clickhouse.query({
        query: `SELECT count() AS n, sum(pageviews) AS pv FROM sessions WHERE website_id = {w:UUID} AND session_id = {s:String}`,
        query_params: { w: fx.website.id, s: session },
        format: 'JSONEachRow',
      })
    ).json<{ n: string; pv: string }>();
    expect(sessions[0]).toEqual({ n: '1', pv: '2' });
    // Another token is another insert.
    await insertEventRows(ctx.clickhouse, body, dedupToken([...eventIds, 'x']));
    expect(await countEvents(ctx, `pathname = '${tag}'`)).toBe(4);
  });

  it('RowBinary rows are stored with exactly the values they were given', async () => {
    const at = Date.now() - 60_000;
    const texts = [
      'plain',
      'ümlaut €',
      'lone \ud800 high',
      'quote " \\ back',
      'tab\tnew\nline',
      'x'.repeat(300),
      '😀'.repeat(60),
    ];
    const variants = texts.map((text, i) => ({
      url: `https://shop.example.com/${text}`,
      referrer: text,
      props: JSON.stringify({ note: text }),
      name: text.slice(0, 40),
      screen_width: 1920 + i,
      screen_height: 65535,
      engagement_ms: 4_000_000_000 + i,
      scroll_depth: 100 - i,
      revenue: [0, 19.99, 123.45678, -0.5, 1e12, 0.0001, 1e-7][i],
      ts: new Date(at + i).toISOString(),
    }));
    const session = randomUUID();
    const rows = variants.map((v) =>
      eventRow(fx.website.id, {
        ...v,
        type: 'custom',
        session_id: session,
        visitor_id: 'same',
        pathname: '/same-rows',
      }),
    );
    await insertEventRows(
      ctx.clickhouse,
      rowBinary.packJob(fx.website.id, rows, noSide).payload,
      dedupToken(rows.map((r) => r.event_id)),
    );
    const stored = await (
      await ctx.clickhouse.query({
        query: `SELECT * FROM events WHERE website_id = {w:UUID} AND session_id = {s:String} ORDER BY ts`,
        query_params: { w: fx.website.id, s: session },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    expect(stored).toHaveLength(texts.length);
    // Every text column as given (made well formed), every integer exact; times as the store writes them.
    const TEXT = [
      'event_id',
      'type',
      'name',
      'session_id',
      'visitor_id',
      'url',
      'hostname',
      'pathname',
      'referrer',
      'props',
      'source',
      'ip_hash',
    ] as const;
    const INT = ['screen_width', 'screen_height', 'engagement_ms', 'scroll_depth'] as const;
    expect(stored.map((r) => [...TEXT, ...INT].map((c) => r[c]))).toEqual(
      rows.map((r) => [...TEXT.map((c) => r[c].toWellFormed()), ...INT.map((c) => r[c])]),
    );
    expect(stored.map((r) => r.ts)).toEqual(rows.map((r) => r.ts));
    expect(stored.map((r) => r.revenue)).toEqual([0, 19.99, 123.4567, -0.5, 1e12, 0.0001, 0]);
    expect(stored[2].referrer).toBe('lone \ufffd high');
    expect(stored[6].referrer).toBe('😀'.repeat(60));
  });

  it('a retried job writes only its rows not stored yet', async () => {
    const rows = [1, 2, 3].map((i) =>
      eventRow(fx.website.id, {
        pathname: '/retried-e',
        session_id: randomUUID(),
        ts: new Date(Date.now() - i * 1000).toISOString(),
      }),
    );
    // Its middle row was stored by an earlier attempt.
    await storeRows(ctx.clickhouse, [rows[1]]);
    const enqueue = ingestEnqueuer(ctx.ingestQueue, 100);
    const id = randomUUID();
    await enqueue(id, rowBinary.packJob(fx.website.id, rows, noSide));
    // BullMQ counts attempts on the job hash: mark it as tried once, as after a failed attempt.
    await ctx.redis.hset(`${queueName()}:${id}`, 'atm', '1');
    const w = startWriter(ctx.clickhouse, { maxWaitMs: 100 });
    try {
      expect(await waitForEvents(ctx, 3, `pathname = '/retried-e'`)).toBe(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(await countEvents(ctx, `pathname = '/retried-e'`)).toBe(3);
      const ids = await (
        await ctx.clickhouse.query({
          query: `SELECT toString(event_id) AS id FROM events WHERE pathname = '/retried-e' ORDER BY ts DESC`,
          format: 'JSONEachRow',
        })
      ).json<{ id: string }>();
      expect(ids.map((r) => r.id)).toEqual(rows.map((r) => r.event_id));
    } finally {
      await w.stop();
    }
  });
});

describe('the job contract', () => {
  afterEach(() => jest.restoreAllMocks());

  it('a job written by the web role (server and browser paths) decodes in the worker to the rows it built, every column', async () => {
    // The rows each path hands to the encoder, recorded on their way in.
    const encode = rowBinary.packJob;
    const built: EventRow[] = [];
    jest.spyOn(rowBinary, 'packJob').mockImplementation((websiteId, rows, side) => {
      built.push(...rows.map((r) => ({ ...r })));
      return encode(websiteId, rows, side);
    });
    const session = randomUUID();
    const ua =
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
    const long = 'ä€😀'.repeat(60) + 'x'.repeat(200);
    const events = [
      pageview(
        { sessionId: session },
        {
          url: `https://shop.example.com/contract/${long}?utm_source=news&utm_medium=mail&utm_campaign=spring&utm_content=top&utm_term=shoes`,
          referrer: 'https://www.google.com/search?q=shoes',
          device_type: 'mobile',
          browser: 'Firefox',
          os: 'Android',
          country_code: 'de',
          city: 'Köln',
          screen_width: 65535,
          screen_height: 812,
          language: 'de-DE',
          note: long,
        },
      ),
      pageview({ sessionId: session, type: 'event' }, { name: 'Signup ✓', plan: { tier: 'pro', seats: 3 } }),
      pageview(
        { sessionId: session, type: 'purchase' },
        { amount: 1234.5678, currency: 'eur', payment_provider: 'stripe', plan_name: 'Pro' },
      ),
      pageview({ sessionId: session, type: 'identify' }, { email: 'a@example.com', name: 'Ann' }),
    ];
    const accepted = await fx.post(events, {
      serverContext: { clientIp: '203.0.113.9', userAgent: ua, acceptLanguage: 'de-DE' },
    });
    expect(accepted.body.acceptedCount).toBe(events.length);
    const { rows: sites } = await ctx.pool.query<{ domain: string }>('SELECT domain FROM websites WHERE id = $1', [
      fx.website.id,
    ]);
    const browserSession = `sess-${randomUUID()}`;
    const browser = await client(ctx.baseUrl)('POST', `/api/events/${fx.website.tracking_code}`, {
      headers: { 'user-agent': ua },
      body: {
        event_type: 'pageview',
        session_id: browserSession,
        url: `https://${sites[0].domain}/contract?utm_source=x`,
        referrer: 'https://news.ycombinator.com/',
        device_type: 'desktop',
        browser: 'Chrome',
        os: 'macOS',
        user_agent: ua,
        screen_width: 1440,
        screen_height: 900,
        language: 'en-US',
      },
    });
    expect(browser.status).toBe(200);
    const ours = built.filter((r) => r.session_id === session || r.session_id === browserSession);
    expect(ours.length).toBe(events.length + 1);

    // What the worker reads: each job's data through its schema, each payload through the decoder.
    const queueName = `${bullPrefix(ctx.config.REDIS_PREFIX)}:${QUEUE_NAMES.ingest}`;
    const decoded: EventRow[] = [];
    for (const key of await ctx.redis.keys(`${ingestPayloadKey(queueName, '')}*`)) {
      const rows = rowBinary.decodeEventRows((await ctx.redis.getBuffer(key)) ?? Buffer.alloc(0));
      if (!rows.some((r) => r.session_id === session || r.session_id === browserSession)) continue;
      decoded.push(...rows);
      const data = ingestJobSchema.parse(
        JSON.parse(
          (await ctx.redis.hget(`${queueName}:${key.slice(ingestPayloadKey(queueName, '').length)}`, 'data')) ?? 'null',
        ),
      );
      expect(data).toMatchObject({ websiteId: fx.website.id, rows: rows.length });
    }
    const byId = (a: EventRow, b: EventRow) => a.event_id.localeCompare(b.event_id);
    expect(decoded.sort(byId)).toEqual(ours.sort(byId));
    // The rows are not trivially alike: the columns that matter hold what the requests sent.
    const page = decoded.find((r) => r.type === 'pageview' && r.session_id === session);
    expect(page).toMatchObject({
      utm_term: 'shoes',
      country_code: 'DE',
      city: 'Köln',
      screen_width: 65535,
      language: 'de-DE',
      browser: 'Firefox',
    });
    expect(page?.url).toContain(long);
    expect(decoded.find((r) => r.type === 'purchase')).toMatchObject({ revenue: 1234.5678, currency: 'EUR' });

    // And the worker stores exactly these rows.
    const w = startWriter(ctx.clickhouse, { maxWaitMs: 100 });
    try {
      const where = `session_id IN ('${session}', '${browserSession}')`;
      expect(await waitForEvents(ctx, ours.length, where)).toBe(ours.length);
      const stored = await (
        await ctx.clickhouse.query({
          query: `SELECT toString(event_id) AS id, url, props, toFloat64(revenue) AS revenue FROM events WHERE ${where}`,
          format: 'JSONEachRow',
        })
      ).json<{ id: string; url: string; props: string; revenue: number }>();
      expect(stored.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        decoded.map((r) => ({ id: r.event_id, url: r.url, props: r.props, revenue: r.revenue })),
      );
    } finally {
      await w.stop();
    }
  });
});

describe('the flush module, without BullMQ', () => {
  it('stores the good jobs of a flush and tells each job’s fate: poison and missing payloads fail for good', async () => {
    const queue = `test-flush-${randomUUID()}`;
    const ts = new Date().toISOString();
    const jobOf = async (
      row: ReturnType<typeof eventRow> | null,
      over: Partial<FlushJob['data']> = {},
    ): Promise<FlushJob> => {
      const { data, payload } = rowBinary.packJob(fx.website.id, row ? [row] : [], noSide);
      const id = randomUUID();
      if (row && !over.rows) await ctx.redis.set(ingestPayloadKey(queue, id), payload);
      return { id, queue, data: { ...data, ...over }, retried: false };
    };
    const good = [1, 2].map(() => eventRow(fx.website.id, { pathname: '/flush-f', ts }));
    const jobs = [
      await jobOf(good[0]),
      await jobOf(eventRow(fx.website.id, { pathname: '/flush-f', event_id: 'not-a-uuid', ts })),
      await jobOf(null, { rows: 1 }), // its payload is gone
      await jobOf(eventRow(fx.website.id, { pathname: '/flush-f', ts }), { websiteId: randomUUID() }), // website deleted
      await jobOf(good[1]),
    ];
    const result = await storeFlush({ clickhouse: ctx.clickhouse, pool: ctx.pool, queueRedis: ctx.redis }, jobs);
    expect(result.isolated).toBe(true);
    expect(
      result.outcomes.map((o) => (o.stored ? 'stored' : `${o.final ? 'final' : 'retry'}: ${o.error.message}`)),
    ).toEqual([
      'stored',
      expect.stringMatching(/^final: .*UUID/i),
      'final: ingest job payload is missing',
      'stored',
      'stored',
    ]);
    expect(await countEvents(ctx, `pathname = '/flush-f'`)).toBe(2);
    await ctx.redis.unlink(...(await ctx.redis.keys(`${queue}:*`)));
  });
});
