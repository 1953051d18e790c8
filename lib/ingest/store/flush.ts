// Storing a flush of ingest jobs, the worker side of the job contract (lib/ingest/job/rows.ts ingestJobSchema,
// lib/ingest/job/rowBinary.ts): which rows of each job may be written (void jobs none, retried jobs those not
// stored yet), PostgreSQL records and browser tables, then one ClickHouse insert of every job's rows. A store
// that refuses a job's data makes the flush write job by job, so that one poison job fails alone. The
// worker (workers/ingestWriter.ts) keeps buffering, timers and BullMQ, and settles each job by its outcome.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../../clickhouse/client';
import { ingestPayloadKey } from '../../queue/ingest';
import { voidedJobs } from '../../queue/ingestMarks';
import type { Redis } from '../../redis';
import { eventRowSpans, keptRows } from '../job/rowBinary';
import type { IngestJob } from '../job/rows';
import { insertBrowserRows, upsertErrorGroups } from './browserWriter';
import { dedupToken, existingEventIds, insertEventRows, isBadDataError } from './chWriter';
import { writeIdentities, writePayments } from './pgWriter';

export interface FlushDeps {
  clickhouse: ClickHouseClient;
  pool: Pool;
  /** The queue's Redis: job payloads and void marks are read from it. */
  queueRedis: Redis;
}

/** One job of a flush, as the worker took it from its queue. */
export interface FlushJob {
  id: string;
  /** The queue's qualified name (where the job's payload and marks live). */
  queue: string;
  data: IngestJob;
  /** Failed or stalled before: an earlier attempt may have stored some of its rows. */
  retried: boolean;
}

/**
 * What became of a job: stored (its rows written, or none to write), or failed; a `final` failure is the
 * job's own data, which no retry can fix.
 */
export type FlushOutcome = { stored: true } | { stored: false; error: Error; final: boolean };

export interface FlushResult {
  /** One per job, in order. */
  outcomes: FlushOutcome[];
  /** Jobs written together (not website-less, not failed for a missing payload, not written one by one). */
  jobs: number;
  rows: number;
  dropped: number;
  /** The store refused data and the jobs were written one by one. */
  isolated: boolean;
  /**
   * The jobs whose events are all stored now (by this flush or an earlier attempt), with their payloads:
   * not void, of a live website, not failed. What happened in them is fanned out to webhooks from here.
   */
  stored: StoredJob[];
}

export interface StoredJob {
  job: FlushJob;
  /** The job's whole payload, every event of it (absent when it has no event rows). */
  payload?: Buffer;
}

/** Data a store refused (ClickHouse parse errors, PostgreSQL class 22 "data exception"): retrying cannot help. */
export function isBadRowError(err: unknown): boolean {
  const pgCode = (err as { code?: unknown } | null)?.code;
  return isBadDataError(err) || (typeof pgCode === 'string' && pgCode.startsWith('22'));
}

/** A job of the flush while it is prepared and written. */
interface Entry {
  job: FlushJob;
  at: number;
  payload?: Buffer;
  /** The job is void (its request was answered 503): nothing of it is written. */
  void?: boolean;
}

/** What one job contributes to the insert once void or already-stored events are taken out. */
interface Prepared {
  /** The rows to write: the job's payload, or the part of it not stored yet. */
  lines: Buffer;
  /** What names the rows for the insert's dedup token (see dedupToken). */
  rowNames: string[];
  rows: number;
  dropped: number;
}

const EMPTY = Buffer.alloc(0);

/**
 * Stores the jobs of one flush. Throws when the flush as a whole failed (a store away): no job was
 * acknowledged, and the worker fails them all (for good when isBadRowError).
 */
export async function storeFlush(deps: FlushDeps, jobs: readonly FlushJob[]): Promise<FlushResult> {
  const outcomes: FlushOutcome[] = jobs.map(() => ({ stored: true }));
  const result: FlushResult = { outcomes, jobs: 0, rows: 0, dropped: 0, isolated: false, stored: [] };
  if (jobs.length === 0) return result;
  // A website deleted after its events were queued takes them with it (its analytics were purged).
  const live = await liveWebsites(deps.pool, [...new Set(jobs.map((j) => j.data.websiteId))]);
  let batch: Entry[] = jobs.map((job, at) => ({ job, at })).filter((e) => live.has(e.job.data.websiteId));
  batch = await loadPayloads(deps, batch, outcomes);
  if (batch.length === 0) return result;
  const voided = await voidedJobs(
    deps.queueRedis,
    batch[0].job.queue,
    batch.map((e) => e.job.id),
  );
  const prepared = await Promise.all(batch.map((e) => prepare(deps, e, voided)));
  try {
    await writeSideRecords(deps, batch);
    await insertEvents(deps, prepared);
  } catch (err) {
    if (!isBadRowError(err) || batch.length === 1) throw err;
    // A store refused some job's data and stored nothing of it: job by job, one bad job cannot block the others.
    await isolate(deps, batch, prepared, outcomes);
    return { ...result, isolated: true, stored: storedJobs(batch, outcomes) };
  }
  return {
    ...result,
    stored: storedJobs(batch, outcomes),
    jobs: batch.length,
    rows: prepared.reduce((n, p) => n + p.rows, 0),
    dropped: prepared.reduce((n, p) => n + p.dropped, 0),
  };
}

function storedJobs(batch: Entry[], outcomes: FlushOutcome[]): StoredJob[] {
  return batch.filter((e) => !e.void && outcomes[e.at].stored).map((e) => ({ job: e.job, payload: e.payload }));
}

async function liveWebsites(pool: Pool, ids: string[]): Promise<Set<string>> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM websites WHERE id = ANY($1::uuid[])', [ids]);
  return new Set(rows.map((r) => r.id));
}

/**
 * Reads the payloads of the jobs that have rows in one round trip. A job whose payload is gone cannot be
 * written by any attempt: it fails for good (an operator sees it among failed jobs).
 */
async function loadPayloads(deps: FlushDeps, batch: Entry[], outcomes: FlushOutcome[]): Promise<Entry[]> {
  const needing = batch.filter((e) => e.job.data.rows > 0);
  if (needing.length === 0) return batch;
  const payloads = await deps.queueRedis.mgetBuffer(...needing.map((e) => ingestPayloadKey(e.job.queue, e.job.id)));
  const missing = new Set<Entry>();
  needing.forEach((e, i) => {
    const payload = payloads[i];
    if (payload) e.payload = payload;
    else missing.add(e);
  });
  for (const e of missing)
    outcomes[e.at] = { stored: false, error: new Error('ingest job payload is missing'), final: true };
  return batch.filter((e) => !missing.has(e));
}

/** The rows of a job that may be written: none of a void job; for a retried job, those not stored yet. */
async function prepare(deps: FlushDeps, e: Entry, voidJobs: ReadonlySet<string>): Promise<Prepared> {
  const { job, payload } = e;
  const { data } = job;
  const all = data.rows;
  // The request was answered 503: none of its events was accepted.
  if (voidJobs.has(job.id)) {
    e.void = true;
    return { lines: EMPTY, rowNames: [], rows: 0, dropped: all };
  }
  if (!job.retried || !payload || !data.tsRange)
    return { lines: payload ?? EMPTY, rowNames: [`job:${job.id}`], rows: all, dropped: 0 };
  // A retried job: the rows an earlier attempt stored are taken out, each row cut from the payload.
  const spans = eventRowSpans(payload);
  const ids = spans.map((s) => s.eventId);
  const stored = await existingEventIds(deps.clickhouse, data.websiteId, ids, data.tsRange);
  if (stored.size === 0) return { lines: payload, rowNames: [`job:${job.id}`], rows: all, dropped: 0 };
  const keep = ids.map((id) => !stored.has(id));
  const kept = ids.filter((_, i) => keep[i]);
  return { lines: keptRows(payload, spans, keep), rowNames: kept, rows: kept.length, dropped: all - kept.length };
}

/** One insert of every job's rows: RowBinary rows delimit themselves, so the payloads go as they are. */
async function insertEvents(deps: FlushDeps, prepared: Prepared[]): Promise<void> {
  const parts = prepared.filter((p) => p.rows > 0);
  if (parts.length === 0) return;
  await insertEventRows(
    deps.clickhouse,
    parts.map((p) => p.lines),
    dedupToken(parts.flatMap((p) => p.rowNames)),
  );
}

/** Writes each job on its own (side records, then events); a job whose data is refused fails for good. */
async function isolate(deps: FlushDeps, batch: Entry[], prepared: Prepared[], outcomes: FlushOutcome[]): Promise<void> {
  for (let i = 0; i < batch.length; i++) {
    try {
      await writeSideRecords(deps, [batch[i]]);
      await insertEvents(deps, [prepared[i]]);
    } catch (err) {
      outcomes[batch[i].at] = { stored: false, error: err as Error, final: isBadRowError(err) };
    }
  }
}

/** PostgreSQL records and browser-only tables; all idempotent, so they go before the events. */
async function writeSideRecords(deps: FlushDeps, batch: Entry[]): Promise<void> {
  const jobs = batch.filter((e) => !e.void).map((e) => e.job.data);
  const identities = jobs.flatMap((d) => d.identities);
  const payments = jobs.flatMap((d) => d.payments);
  const browser = {
    interactions: jobs.flatMap((d) => d.interactions),
    errors: jobs.flatMap((d) => d.errors),
    replays: jobs.flatMap((d) => d.replays),
  };
  await writeIdentities(deps.pool, identities);
  await writePayments(deps.pool, payments);
  await upsertErrorGroups(deps.pool, browser.errors);
  await insertBrowserRows(deps.clickhouse, browser);
}
