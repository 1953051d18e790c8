import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../../api/app';
import { scheduledJobId } from '../../../jobs/clock';
import { createClickHouse } from '../../../lib/clickhouse/client';
import { createProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { startWorker } from '../../../workers/main';
import { registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function serve(app: ReturnType<typeof createApp>) {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('health, readiness and metrics', () => {
  it('healthz and readyz answer 200 when every store is reachable', async () => {
    const call = client(ctx.baseUrl);
    expect((await call('GET', '/healthz')).status).toBe(200);
    const ready = await call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok', clickhouse: 'ok' });
  });

  it('readyz answers 503 naming the store that is down', async () => {
    const deadClickHouse = createClickHouse({ url: 'http://127.0.0.1:1', database: 'x' });
    const s = await serve(createApp({ ...ctx, clickhouse: deadClickHouse }));
    try {
      const res = await client(s.url)('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks).toEqual({ postgres: 'ok', redis: 'ok', clickhouse: 'unreachable' });
    } finally {
      await s.close();
      await deadClickHouse.close();
    }
  });

  it('metrics are served to loopback without a token, and need the token when one is set', async () => {
    const open = await client(ctx.baseUrl)('GET', '/metrics');
    expect(open.status).toBe(200);
    expect(open.text).toMatch(/tidemark_http_requests_total/);
    const token = 'metrics-token-0123456789';
    const s = await serve(createApp({ ...ctx, config: { ...ctx.config, METRICS_TOKEN: token } }));
    try {
      expect((await client(s.url)('GET', '/metrics')).status).toBe(401);
      expect((await client(s.url)('GET', '/metrics', { token: 'wrong-token-0123456789' })).status).toBe(401);
      expect((await client(s.url)('GET', '/metrics', { token })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('unknown routes get the error envelope', async () => {
    const res = await client(ctx.baseUrl)('GET', '/api/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});

describe('scheduled jobs', () => {
  it('job ids are deterministic per job and minute', () => {
    const a = scheduledJobId('expire-sessions', new Date('2026-11-22T10:17:03Z'));
    expect(a).toBe(scheduledJobId('expire-sessions', new Date('2026-11-22T10:17:59Z')));
    expect(a).not.toBe(scheduledJobId('expire-sessions', new Date('2026-11-22T10:18:00Z')));
  });

  it('a worker runs an enqueued job: expire-sessions deletes only expired sessions', async () => {
    const user = await registerUser(ctx);
    await ctx.pool.query(
      `INSERT INTO user_sessions (token_hash, user_id, expires_at) VALUES ('old', $1, now() - interval '1 hour')`,
      [user.id],
    );
    const worker = await startWorker(ctx.config);
    const queue = createProducerQueue(QUEUE_NAMES.jobs, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
    try {
      const job = await queue.add('expire-sessions', {}, { jobId: scheduledJobId('expire-sessions', new Date()) });
      const dup = await queue.add('expire-sessions', {}, { jobId: job.id });
      expect(dup.id).toBe(job.id);
      const end = Date.now() + 10_000;
      while (!(await job.isCompleted()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(await job.isCompleted()).toBe(true);
      const left = await ctx.pool.query(
        'SELECT token_hash, expires_at > now() AS live FROM user_sessions WHERE user_id = $1',
        [user.id],
      );
      expect(left.rows.length).toBe(1);
      expect(left.rows[0].live).toBe(true);
    } finally {
      await queue.close();
      await worker.stop();
    }
  });
});
