// Every scheduled job, by name: its cron line (UTC) and its body. The clock only enqueues; workers run bodies.

import { insightsFromAnomalies } from '../lib/insights/anomalies';
import { detectAnomalies } from './anomalies';
import { anomalyAlerts } from './anomalyAlerts';
import type { JobContext, JobScope } from './context';
import { emailReports } from './emailReports';
import { expireSessions } from './expireSessions';
import { insightsJob } from './insights';
import { ltvJob } from './ltv';
import { retention } from './retention';
import { rollupDaily } from './rollupDaily';
import { sweepIngestPayloads } from './sweepIngestPayloads';

// In a file of their own so that job bodies can name them without importing this table (a cycle).
export type { JobContext, JobScope } from './context';

export interface ScheduledJob {
  name: string;
  cron: string;
  /** The scope fields the body honours (`tidemark jobs run` refuses the others); all of them when absent. */
  scope?: readonly (keyof JobScope)[];
  run(ctx: JobContext, scope: JobScope): Promise<unknown>;
}

export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  // A few minutes past the hour, once the hour's events have been written (the ingest buffer flushes in seconds).
  // Every anomaly it opens or changes is told in words at once (an `anomaly` insight), not at the nightly run.
  {
    name: 'anomalies',
    cron: '7 * * * *',
    run: async (ctx, scope) => {
      const run = await detectAnomalies(ctx, scope);
      await insightsFromAnomalies(ctx.pool, scope.websiteId);
      return run;
    },
  },
  // Every 5 minutes: an anomaly the hourly run opened (or resolved) is told within minutes, once per recipient.
  {
    name: 'anomaly-alerts',
    cron: '*/5 * * * *',
    scope: ['websiteId'],
    run: (ctx, scope) => anomalyAlerts(ctx, scope),
  },
  // Hourly, so that every time zone gets its Monday (weekly) and 1st-of-month (monthly) report early in its
  // day; the first run of that local day sends and the sent log makes the others (and re-runs) send nothing.
  { name: 'email-reports', cron: '25 * * * *', run: (ctx, scope) => emailReports(ctx, scope) },
  { name: 'expire-sessions', cron: '17 * * * *', scope: [], run: (ctx) => expireSessions(ctx.pool) },
  // Nightly: each website's latest complete local day (for zones west of UTC, the day before UTC's yesterday).
  { name: 'insights', cron: '35 1 * * *', run: (ctx, scope) => insightsJob(ctx, scope) },
  // Nightly, after most zones' midnight has passed and the rollups caught up; as of each website's yesterday.
  { name: 'ltv', cron: '30 3 * * *', run: (ctx, scope) => ltvJob(ctx, scope) },
  // Nightly, after every website's previous day has ended in most time zones (cohorts as of that day).
  {
    name: 'retention',
    cron: '23 3 * * *',
    scope: ['websiteId', 'date'],
    run: (ctx, scope) => retention(ctx, scope),
  },
  // Days close 26 h after they end; every 10 minutes keeps the rollups within minutes of that. It rolls up
  // whichever days are missing or had late events, so a day is not a scope it takes; a website is.
  {
    name: 'rollup-daily',
    cron: '*/10 * * * *',
    scope: ['websiteId'],
    run: (ctx, scope) => rollupDaily(ctx.pool, ctx.clickhouse, ctx.logger, Date.now(), { websiteId: scope.websiteId }),
  },
  {
    name: 'sweep-ingest-payloads',
    cron: '43 * * * *',
    scope: [],
    run: (ctx) => sweepIngestPayloads(ctx.redis, ctx.redisPrefix),
  },
];
