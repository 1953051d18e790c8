// Webhook delivery throughput, the queue alone (issue 26): N event jobs on `webhook-events` for one webhook on a
// loopback receiver that answers 200 at once, through the worker's fan-out and delivery (workers/webhooks.ts)
// in this process; prints deliveries per second from the first event added to the last delivery received, and
// the per-webhook cap it ran under. PostgreSQL migrations only (no ClickHouse: nothing here reads events).
//
//   npx tsc -p tsconfig.json && node dist/bench/webhook-deliveries.js [--events 5000] [--concurrency 16] [--per-second 1000]
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { readMigrations } from '../lib/db/migrate';
import { createPool, ensureDatabase } from '../lib/db/pool';
import { createLogger } from '../lib/log';
import { QUEUE_NAMES } from '../lib/queue/queues';
import { bullPrefix, createRedis } from '../lib/redis';
import { createWebhook } from '../lib/webhooks/store';
import { DEFAULT_CAPS, startWebhookWorkers } from '../workers/webhooks';
import { cleanup, log, runBenchmark } from './service';

const PG_BASE = 'postgres://postgres@127.0.0.1:5432';
const REDIS_URL = 'redis://127.0.0.1:6379';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, 'per-second': { type: 'string' }, concurrency: { type: 'string' } },
  });
  const total = Number(values.events ?? 5_000);
  const perSecond = Number(values['per-second'] ?? DEFAULT_CAPS.perSecond);
  const concurrency = Number(values.concurrency ?? DEFAULT_CAPS.concurrency);
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const dbName = `tidemark_whbench_${id}`;
  const prefix = `tmwhbench_${id}`;
  await ensureDatabase(`${PG_BASE}/${dbName}`);
  const pool = createPool(`${PG_BASE}/${dbName}`, 8);
  const connection = createRedis(REDIS_URL, 'worker', 'tidemark-bench');
  let received = 0;
  let lastAt = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      lastAt = performance.now();
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const events = new Queue(QUEUE_NAMES.webhookEvents, { connection, prefix: bullPrefix(prefix) });
  const workers = startWebhookWorkers({
    pool,
    connection,
    redisPrefix: prefix,
    logger: createLogger('warn', 'bench'),
    rules: { allowPrivate: true, production: false },
    resolve: async () => [],
    caps: { concurrency, perSecond },
  });
  try {
    for (const m of readMigrations('postgres')) await pool.query(m.sql);
    const team = await pool.query<{ id: string }>(
      `INSERT INTO teams (name, plan) VALUES ('bench', 'enterprise') RETURNING id`,
    );
    const site = await pool.query<{ id: string }>(
      `INSERT INTO websites (team_id, domain, name, tracking_code) VALUES ($1, 'bench.example.com', 'bench', $2) RETURNING id`,
      [team.rows[0].id, `bench${id}`],
    );
    const websiteId = site.rows[0].id;
    await createWebhook(pool, websiteId, null, { url, events: ['event.tracked'] }, 'x'.repeat(32));
    const started = performance.now();
    for (let i = 0; i < total; i += 500) {
      const batch = Array.from({ length: Math.min(500, total - i) }, (_, j) => {
        const key = `bench-${i + j}`;
        const data = {
          event_id: key,
          type: 'event',
          name: 'click',
          visitor_id: 'v',
          session_id: 's',
          props: { n: i + j },
        };
        return {
          name: 'event.tracked',
          data: {
            websiteId,
            event: 'event.tracked',
            key,
            timestamp: new Date().toISOString(),
            data,
            eventName: 'click',
          },
          opts: { jobId: key },
        };
      });
      await events.addBulk(batch);
    }
    const deadline = Date.now() + 600_000;
    while (received < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const seconds = (lastAt - started) / 1000;
    log(`${received} of ${total} delivered in ${seconds.toFixed(2)} s`);
    process.stdout.write(
      `| events | per-webhook cap (in flight / per s) | deliveries/s |\n|---|---|---|\n| ${total} | ${concurrency} / ${perSecond} | ${(received / seconds).toFixed(0)} |\n`,
    );
    return received === total ? 0 : 1;
  } finally {
    await workers.close();
    await events.close();
    server.closeAllConnections();
    server.close();
    await pool.end();
    await connection.quit();
    await cleanup(dbName, prefix, `/tmp/${dbName}-none`);
  }
}

runBenchmark(main);
