// Queue depth and worker lag on /metrics: ops scale the worker role by these (DESIGN §1).
import { Gauge } from 'prom-client';
import type { Metrics } from '../metrics';
import type { Redis } from '../redis';
import { WriterLag } from './lag';
import type { ProducerQueue } from './queues';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

export function registerQueueMetrics(metrics: Metrics, queues: ProducerQueue[], redis: Redis, prefix: string): void {
  if (metrics.registry.getSingleMetric('tidemark_queue_jobs')) return; // one registration per registry
  const lag = new WriterLag(redis, prefix);
  new Gauge({
    name: 'tidemark_queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [metrics.registry],
    async collect() {
      for (const queue of queues) {
        const counts = await queue.getJobCounts(...STATES).catch(() => undefined);
        if (!counts) continue;
        for (const state of STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
      }
    },
  });
  new Gauge({
    name: 'tidemark_queue_oldest_waiting_seconds',
    help: 'Age of the oldest job waiting in each queue (0 when none waits)',
    labelNames: ['queue'],
    registers: [metrics.registry],
    async collect() {
      for (const queue of queues) {
        const [oldest] = await queue.getJobs(['wait'], 0, 0, true).catch(() => []);
        this.set({ queue: queue.name }, oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0);
      }
    },
  });
  new Gauge({
    name: 'tidemark_ingest_writer_lag_seconds',
    help: 'Enqueue-to-stored delay of the oldest job in the latest ingest flush',
    registers: [metrics.registry],
    async collect() {
      const last = await lag.last().catch(() => undefined);
      this.set(last?.lagSeconds ?? 0);
    },
  });
}
