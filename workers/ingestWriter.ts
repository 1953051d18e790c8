// The ingest writer: a BullMQ processor that coalesces many jobs into one flush (bounded by rows and
// time) and settles every job of the flush by what lib/ingest/store/flush.ts made of it. A job is
// acknowledged only after its rows are stored; a crash before that hands it back to the queue, and its
// retry is checked against what is already stored (in the flush module), so it never doubles rows.
import { type Job, UnrecoverableError, type Worker } from 'bullmq';
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import { type IngestJob, ingestJobSchema } from '../lib/ingest/job/rows';
import { isBadRowError, type StoredJob, storeFlush } from '../lib/ingest/store/flush';
import type { Logger } from '../lib/log';
import { ingestPayloadKey } from '../lib/queue/ingest';
import type { Redis } from '../lib/redis';
import { fanoutMarkKey, type WebhookFanout } from '../lib/webhooks/fanout';

export interface IngestWriterOptions {
  clickhouse: ClickHouseClient;
  pool: Pool;
  /** The queue's Redis: job payloads and void marks are read from it; payloads deleted once their jobs are completed. */
  queueRedis: Redis;
  logger: Logger;
  /** Flush when this many rows are buffered. */
  maxRows?: number;
  /** Flush at the latest this long after the first job was buffered. */
  maxWaitMs?: number;
  /** The BullMQ worker's concurrency: when every slot waits in the buffer, flush at once. */
  concurrency: number;
  onFlush?: (stats: FlushStats) => void;
  /**
   * Queues the webhook events of what each flush stored, before its jobs are acknowledged: a job whose
   * fan-out failed is retried (its rows are not written twice) and fans out then.
   */
  webhooks?: WebhookFanout;
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
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxRows: number;
  private readonly maxWaitMs: number;
  /** Flushes that may run at once: the next one is prepared while ClickHouse stores the last. */
  private readonly maxInFlight = 2;
  /** Payload keys of completed jobs, deleted together. */
  private finished: string[] = [];
  private finishedTimer: NodeJS.Timeout | undefined;
  /** Jobs that may have a webhook fan-out mark, deleted with their payload once they complete. */
  private readonly marked = new Set<string>();

  constructor(private readonly opts: IngestWriterOptions) {
    this.maxRows = opts.maxRows ?? 50_000;
    // About one insert a second, as ClickHouse advises: the store's CPU per row falls as inserts grow
    // (measured); freshness stays well inside its 5 s target.
    this.maxWaitMs = opts.maxWaitMs ?? 1000;
  }

  readonly process = async (job: Job): Promise<void> => {
    const parsed = ingestJobSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`malformed ingest job: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    await new Promise<void>((resolve, reject) => {
      this.buffer.push({ job, data: parsed.data, resolve, reject });
      this.bufferedRows += parsed.data.rows + parsed.data.replays.length;
      if (this.bufferedRows >= this.maxRows || this.buffer.length >= this.opts.concurrency) this.schedule(0);
      else this.schedule(this.maxWaitMs);
    });
  };

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.startFlush();
    }, delayMs);
  }

  private startFlush(): void {
    if (this.buffer.length === 0) return;
    if (this.inFlight.size >= this.maxInFlight) {
      // Try again when a running flush ends; jobs keep gathering meanwhile.
      Promise.race(this.inFlight).finally(() => this.schedule(0));
      return;
    }
    const batch = this.buffer;
    this.buffer = [];
    this.bufferedRows = 0;
    const running: Promise<void> = this.flush(batch).finally(() => this.inFlight.delete(running));
    this.inFlight.add(running);
  }

  /** Writes everything buffered now and waits for every flush (also used at shutdown). */
  async drain(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0 || this.inFlight.size > 0) {
      if (this.buffer.length > 0 && this.inFlight.size < this.maxInFlight) this.startFlush();
      else await Promise.race(this.inFlight);
    }
    await this.deleteFinished();
  }

  /**
   * Deletes the payloads of the worker's jobs once BullMQ has completed them: before that, a crash would
   * hand a job back to the queue, and its retry needs the payload.
   */
  attach(worker: Worker): void {
    worker.on('completed', (job) => {
      if (!job.id) return;
      this.finished.push(ingestPayloadKey(job.queueQualifiedName, job.id));
      if (this.marked.delete(job.id)) this.finished.push(fanoutMarkKey(job.queueQualifiedName, job.id));
      this.finishedTimer ??= setTimeout(() => void this.deleteFinished(), 200);
    });
    // A failed job keeps its mark for its retry, wherever that runs.
    worker.on('failed', (job) => {
      if (job?.id) this.marked.delete(job.id);
    });
  }

  private async deleteFinished(): Promise<void> {
    if (this.finishedTimer) clearTimeout(this.finishedTimer);
    this.finishedTimer = undefined;
    const keys = this.finished;
    this.finished = [];
    if (keys.length === 0) return;
    // A payload left behind (Redis away now) is deleted by the sweep-ingest-payloads job.
    await this.opts.queueRedis.unlink(...keys).catch((err: Error) => {
      this.opts.logger.warn(
        { err: err.message, keys: keys.length },
        'could not delete ingest payloads; the sweep job will',
      );
    });
  }

  /** The webhook fan-out of a flush's stored jobs; its error fails them (retried, never stored twice). */
  private async fanOut(stored: StoredJob[]): Promise<Error | undefined> {
    if (!this.opts.webhooks || stored.length === 0) return undefined;
    try {
      await this.opts.webhooks.fanOut(stored, (ids) => {
        for (const id of ids) this.marked.add(id);
      });
      return undefined;
    } catch (err) {
      this.opts.logger.error(
        { err: (err as Error).message, jobs: stored.length },
        'webhook fan-out failed; its jobs will be retried',
      );
      return err as Error;
    }
  }

  private async flush(batch: Pending[]): Promise<void> {
    const started = Date.now();
    try {
      const jobs = batch.map(({ job, data }) => ({
        id: job.id ?? '',
        queue: job.queueQualifiedName,
        data,
        retried: job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0,
      }));
      const result = await storeFlush(this.opts, jobs);
      const fanoutError = await this.fanOut(result.stored);
      const unsent = new Set(fanoutError ? result.stored.map((s) => s.job.id) : []);
      result.outcomes.forEach((o, i) => {
        if (!o.stored) batch[i].reject(o.final ? new UnrecoverableError(o.error.message) : o.error);
        else if (fanoutError && unsent.has(jobs[i].id)) batch[i].reject(fanoutError);
        else batch[i].resolve();
      });
      if (result.isolated || result.jobs === 0) return;
      this.opts.onFlush?.({
        jobs: result.jobs,
        rows: result.rows,
        dropped: result.dropped,
        ms: Date.now() - started,
        oldestEnqueuedAt: Math.min(...batch.map((p) => p.job.timestamp)),
      });
    } catch (err) {
      this.opts.logger.error(
        { err: (err as Error).message, jobs: batch.length },
        'ingest flush failed; jobs will be retried',
      );
      for (const p of batch)
        p.reject(isBadRowError(err) ? new UnrecoverableError((err as Error).message) : (err as Error));
    }
  }
}
