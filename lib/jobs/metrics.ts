// Scheduled job series on /metrics. The worker runs the jobs but only the web role serves /metrics, so both
// meet in PostgreSQL: each run adds to job_run_totals (lib/jobs/runs.ts) and a scrape reads them. The figures
// are the instance's, not one process's: with several web roles every one reports the same values (aggregate
// with max, not sum).
import type { Pool } from 'pg';
import { Gauge, type Metric } from 'prom-client';
import type { Metrics } from '../metrics';
import { JOB_DURATION_BUCKETS, type JobRunTotals, jobRunTotals } from './runs';

const DURATION = 'tidemark_job_run_duration_seconds';
const FAILURES = 'tidemark_job_failures_total';
const LAST_SUCCESS = 'tidemark_job_last_success_timestamp_seconds';

type Value = { metricName?: string; labels: Record<string, string | number>; value: number };

/** A metric whose values come whole from elsewhere (prom-client's own types only accumulate in-process). */
function readThrough(name: string, help: string, type: 'histogram' | 'counter', values: () => Promise<Value[]>) {
  return {
    name,
    help,
    type,
    aggregator: 'max',
    async get() {
      return { name, help, type, aggregator: 'max', values: await values() };
    },
    reset() {},
  };
}

export function registerJobMetrics(metrics: Metrics, pool: Pool): void {
  if (metrics.registry.getSingleMetric(DURATION)) return; // one registration per registry
  // One read serves the series of one scrape (they are collected together).
  let pending: Promise<JobRunTotals[]> | undefined;
  const totals = () => {
    pending ??= jobRunTotals(pool)
      .catch(() => [])
      .finally(() => setImmediate(() => (pending = undefined)));
    return pending;
  };
  const duration = readThrough(
    DURATION,
    'Duration of scheduled job runs (worker and `tidemark jobs run`), failed ones included',
    'histogram',
    async () =>
      (await totals()).flatMap((t): Value[] => [
        ...JOB_DURATION_BUCKETS.map((le, i) => ({
          metricName: `${DURATION}_bucket`,
          labels: { job: t.job, le },
          value: t.buckets[i],
        })),
        { metricName: `${DURATION}_bucket`, labels: { job: t.job, le: '+Inf' }, value: t.runs },
        { metricName: `${DURATION}_sum`, labels: { job: t.job }, value: t.durationSeconds },
        { metricName: `${DURATION}_count`, labels: { job: t.job }, value: t.runs },
      ]),
  );
  const failures = readThrough(
    FAILURES,
    'Scheduled job runs that failed (each failed attempt of a retried job counts)',
    'counter',
    async () => (await totals()).map((t) => ({ labels: { job: t.job }, value: t.failures })),
  );
  for (const metric of [duration, failures]) metrics.registry.registerMetric(metric as unknown as Metric);
  new Gauge({
    name: LAST_SUCCESS,
    help: 'When each scheduled job last finished a run successfully (Unix seconds)',
    labelNames: ['job'],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const t of await totals()) {
        if (t.lastSuccessAt) this.set({ job: t.job }, t.lastSuccessAt.getTime() / 1000);
      }
    },
  });
}
