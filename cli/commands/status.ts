// `tidemark status`: what an operator checks first. The roles that are up (their heartbeats), queue depths,
// the store's size and the last run of each scheduled job.
import { clickHouseTarget, createClickHouse, selectRows } from '../../lib/clickhouse/client';
import { maskUrlPassword } from '../../lib/config';
import { instanceId } from '../../lib/db/instance';
import { liveRoles } from '../../lib/process/heartbeat';
import { createProducerQueue, QUEUE_NAMES } from '../../lib/queue/queues';
import { createRedis, waitReady } from '../../lib/redis';
import { VERSION } from '../../lib/version';
import { type Context, printRows, type Values } from '../context';

type JobRun = {
  job: string;
  last_finished: string | null;
  state: 'completed' | 'failed';
  reason: string | null;
};

export async function runStatus(v: Values, ctx: Context): Promise<void> {
  const { config } = ctx;
  const redis = createRedis(config.REDIS_URL, 'request', 'tidemark-cli');
  const clickhouse = createClickHouse(clickHouseTarget(config), { requestTimeoutMs: 10_000 });
  const queues = Object.values(QUEUE_NAMES).map((name) =>
    createProducerQueue(name, config.REDIS_URL, config.REDIS_PREFIX),
  );
  try {
    await waitReady(redis, 5_000);
    const roles = await liveRoles(redis, config.REDIS_PREFIX);
    const depths = await Promise.all(
      queues.map(async (q) => ({ queue: q.name, ...(await q.getJobCounts('waiting', 'active', 'delayed', 'failed')) })),
    );
    const jobsQueue = queues.find((q) => q.name === QUEUE_NAMES.jobs)!;
    const finished = [...(await jobsQueue.getCompleted(0, 199)), ...(await jobsQueue.getFailed(0, 199))];
    const lastRuns = new Map<string, JobRun>();
    for (const job of finished) {
      if (!job.finishedOn) continue;
      const seen = lastRuns.get(job.name);
      if (seen?.last_finished && Date.parse(seen.last_finished) >= job.finishedOn) continue;
      lastRuns.set(job.name, {
        job: job.name,
        last_finished: new Date(job.finishedOn).toISOString(),
        state: job.failedReason ? 'failed' : 'completed',
        reason: job.failedReason ?? null,
      });
    }
    const store = await selectRows<{ bytes: string; rows: string; version: string }>(
      clickhouse,
      'SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows, version() AS version FROM system.parts WHERE database = currentDatabase() AND active',
      {},
    ).then(
      (r) => ({
        reachable: true,
        bytes: Number(r[0]?.bytes ?? 0),
        rows: Number(r[0]?.rows ?? 0),
        engine_version: r[0]?.version ?? null,
      }),
      (err: Error) => ({ reachable: false, error: err.message.split('\n')[0] }),
    );
    const status = {
      cli_version: VERSION,
      instance_id: await instanceId(await ctx.pool()),
      store: {
        url: maskUrlPassword(config.CLICKHOUSE_URL),
        database: config.CLICKHOUSE_DATABASE,
        embedded: config.EMBEDDED_STORE,
        ...store,
      },
      roles,
      queues: depths,
      jobs: [...lastRuns.values()].sort((a, b) => a.job.localeCompare(b.job)),
    };
    if (v.json === true) {
      ctx.io.out(JSON.stringify(status));
      return;
    }
    ctx.io.out(`tidemark ${VERSION}, instance ${status.instance_id}`);
    ctx.io.out(
      store.reachable && 'bytes' in store
        ? `store: ${status.store.url} database ${config.CLICKHOUSE_DATABASE}, ${formatBytes(store.bytes)}, ${store.rows} rows (ClickHouse ${store.engine_version})`
        : `store: ${status.store.url} NOT REACHABLE${'error' in store ? ` (${store.error})` : ''}`,
    );
    ctx.io.out('\nroles:');
    printRows(ctx.io, roles, false, ['role', 'version', 'host', 'pid', 'started_at', 'seen_at']);
    ctx.io.out('\nqueues:');
    printRows(ctx.io, depths, false, ['queue', 'waiting', 'active', 'delayed', 'failed']);
    ctx.io.out('\nscheduled jobs (last run):');
    printRows(ctx.io, status.jobs, false, ['job', 'last_finished', 'state', 'reason']);
  } finally {
    redis.disconnect();
    await Promise.allSettled([clickhouse.close(), ...queues.map((q) => q.close())]);
  }
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let value = n;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
