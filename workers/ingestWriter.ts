// The ingest writer: a BullMQ processor that coalesces many jobs into one flush (bounded by rows and
// time), writes PostgreSQL records and one ClickHouse insert, then completes every job of the flush.
// A job is acknowledged only after its rows are stored; a crash before that hands it back to the queue.
// Retried jobs (failed or stalled before) are checked against what is already stored, so a job that is
// regrouped with others on its next attempt never doubles rows.
import { UnrecoverableError, type Job } from 'bullmq';
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { existingEventIds, insertEvents } from '../lib/ingest/chWriter';
import type { IdempotencyKeys } from '../lib/ingest/dedupe';
import { insertBrowserRows, upsertErrorGroups } from '../lib/ingest/browserWriter';
import { writeIdentities, writePayments } from '../lib/ingest/pgWriter';
import { ingestJobSchema, type EventRow, type IngestJob } from '../lib/ingest/rows';
import type { Logger } from '../lib/log';

export interface IngestWriterOptions {
  clickhouse: ClickHouseClient;
  pool: Pool;
  idempotency: IdempotencyKeys;
  logger: Logger;
  /** Flush when this many rows are buffered. */
  maxRows?: number;
  /** Flush at the latest this long after the first job was buffered. */
  maxWaitMs?: number;
  /** The BullMQ worker's concurrency: when every slot waits in the buffer, flush at once. */
  concurrency: number;
  onFlush?: (stats: FlushStats) => void;
}

export interface FlushStats {
  jobs: number;
  rows: number;
  dropped: number;
  ms: number;
  oldestEnqueuedAt: number;
}

interface Pending {
  job: Job;
  data: IngestJob;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class IngestWriter {
  private buffer: Pending[] = [];
  private bufferedRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly maxRows: number;
  private readonly maxWaitMs: number;

  constructor(private readonly opts: IngestWriterOptions) {
    this.maxRows = opts.maxRows ?? 50_000;
    this.maxWaitMs = opts.maxWaitMs ?? 250;
  }

  readonly process = async (job: Job): Promise<void> => {
    const parsed = ingestJobSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`malformed ingest job: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    await new Promise<void>((resolve, reject) => {
      this.buffer.push({ job, data: parsed.data, resolve, reject });
      this.bufferedRows += parsed.data.rows.length;
      if (this.bufferedRows >= this.maxRows || this.buffer.length >= this.opts.concurrency) this.schedule(0);
      else this.schedule(this.maxWaitMs);
    });
  };

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Flushes run one after another; jobs arriving meanwhile form the next one.
      this.flushing = this.flushing.then(() => this.flush());
    }, delayMs);
  }

  /** Writes everything buffered now. Resolves when done (also used at shutdown). */
  async drain(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(() => this.flush());
    await this.flushing;
  }

  private async flush(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    this.bufferedRows = 0;
    if (batch.length === 0) return;
    const started = Date.now();
    try {
      const { rows, identities, payments, dropped } = await this.collect(batch);
      const browser = {
        interactions: batch.flatMap((p) => p.data.interactions),
        errors: batch.flatMap((p) => p.data.errors),
        replays: batch.flatMap((p) => p.data.replays),
      };
      await writeIdentities(this.opts.pool, identities);
      await writePayments(this.opts.pool, payments);
      await upsertErrorGroups(this.opts.pool, browser.errors);
      await insertBrowserRows(this.opts.clickhouse, browser);
      await insertEvents(this.opts.clickhouse, rows);
      for (const p of batch) p.resolve();
      this.opts.onFlush?.({
        jobs: batch.length,
        rows: rows.length,
        dropped,
        ms: Date.now() - started,
        oldestEnqueuedAt: Math.min(...batch.map((p) => p.job.timestamp)),
      });
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message, jobs: batch.length }, 'ingest flush failed; jobs will be retried');
      for (const p of batch) p.reject(err as Error);
    }
  }

  /** The rows a flush may write: void claims dropped, already-stored rows of retried jobs dropped. */
  private async collect(batch: Pending[]) {
    const rows: EventRow[] = [];
    const identities: IngestJob['identities'] = [];
    const payments: IngestJob['payments'] = [];
    let dropped = 0;
    for (const { job, data } of batch) {
      const voided = await this.voidedEvents(job, data.rows);
      const retried = job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0;
      const stored = retried ? await existingEventIds(this.opts.clickhouse, data.rows) : new Set<string>();
      for (const row of data.rows) {
        if (voided.has(row.event_id) || stored.has(row.event_id)) dropped++;
        else rows.push(row);
      }
      // PostgreSQL writes are idempotent by themselves; only voided events are left out.
      identities.push(...data.identities.filter((r) => !voided.has(r.event_id)));
      payments.push(...data.payments.filter((r) => !voided.has(r.event_id)));
    }
    return { rows, identities, payments, dropped };
  }

  /** Events whose idempotency claim was released (their request was answered 503) or taken over. */
  private async voidedEvents(job: Job, rows: EventRow[]): Promise<Set<string>> {
    const keyed = rows.filter((r) => r.idempotency_key !== '');
    if (keyed.length === 0 || !job.id) return new Set();
    const held = await this.opts.idempotency.claimStillHeld(
      keyed.map((r) => this.opts.idempotency.key(r.website_id, r.idempotency_key)),
      job.id,
    );
    return new Set(keyed.filter((_, i) => !held[i]).map((r) => r.event_id));
  }
}
