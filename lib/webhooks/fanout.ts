// The ingest writer's webhook fan-out (issue 26): after a flush's events are stored, one `webhook-events`
// job per webhook event they made happen (lib/webhooks/events.ts), for websites with active webhooks only.
//
// Exactly once per stored event, retries and regrouped jobs included. The unit is the ingest job (a flush
// regroups jobs, never splits one), and each job has a mark beside it in the ingest queue's Redis:
//   absent         nothing of its fan-out happened;
//   'A' + crossings its visit counts were added to the visit scores (visitScore.ts), atomically with the mark;
//   'B'            its webhook events are queued: written in the same MULTI as those jobs.
// A job is acknowledged only after its fan-out, so a worker killed after the write and before (or during)
// the fan-out hands the job back; its retry stores nothing new (the rows are there) and fans out what its
// mark says is left. Only retried jobs can have a mark, so a first attempt reads none. Webhook event job
// ids are the happenings' keys besides, so even two workers racing on one job add each happening once
// while its job waits. The mark is deleted once the ingest job completes (IngestWriter.attach).
import { Job, type JobsOptions, type Queue } from 'bullmq';
import type { Pool } from 'pg';
import { decodeEventRows } from '../ingest/job/rowBinary';
import type { EventRow } from '../ingest/job/rows';
import type { StoredJob } from '../ingest/store/flush';
import type { Redis } from '../redis';
import type { WebhookEventJob } from './events';
import { convertedHappenings, highValueKey, identifiedHappenings, rowHappenings } from './happenings';
import type { SiteSubscriptions, WebhookSubscriptions } from './subscriptions';
import { applyVisitDeltas, crossingsOfMark, type ScoreJob, visitDeltas } from './visitScore';

/**
 * Options of every webhook event job. Completed ones are dropped at once (the marks make retries safe, and
 * one job per event at 10,000 events/s must not stay in Redis); failed ones stay a week for the operator.
 */
export const WEBHOOK_EVENT_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

/**
 * A mark outlives its job's retries: a job failed for good stays until an operator retries it, and a mark
 * older than this no longer keeps that retry from fanning out again (as the ingest void mark).
 */
export const FANOUT_MARK_TTL_SECONDS = 30 * 24 * 3600;

/** Where a job's fan-out mark is kept: beside the job's own keys (one slot under a hash-tagged prefix). */
export const fanoutMarkKey = (queueQualifiedName: string, jobId: string) => `${queueQualifiedName}:webhooks:${jobId}`;

/** Webhook event adds per MULTI: Redis runs a MULTI whole, so a huge one would stall every other client. */
const ADDS_PER_TRANSACTION = 500;

export interface FanoutDeps {
  /** The ingest queue's Redis (marks, visit scores); the webhook-events queue lives there too. */
  redis: Redis;
  /** REDIS_PREFIX: visit scores and high-value days are kept under it. */
  redisPrefix: string;
  pool: Pool;
  /** The webhook-events queue (QUEUE_NAMES.webhookEvents). */
  queue: Queue;
  subscriptions: WebhookSubscriptions;
}

interface Candidate {
  stored: StoredJob;
  subs: SiteSubscriptions;
  mark: string;
  rows?: EventRow[];
  state?: string | null;
}

export class WebhookFanout {
  constructor(private readonly deps: FanoutDeps) {}

  /**
   * Queues the webhook events of stored jobs, each once; throws when that could not be done (the jobs are
   * then retried). `marking` hears, before any mark is written, the ids of the jobs that may get one.
   */
  async fanOut(jobs: readonly StoredJob[], marking: (jobIds: string[]) => void = () => undefined): Promise<void> {
    if (jobs.length === 0) return;
    const sites = await this.deps.subscriptions.forWebsites([...new Set(jobs.map((j) => j.job.data.websiteId))]);
    let candidates: Candidate[] = [];
    for (const stored of jobs) {
      const subs = sites.get(stored.job.data.websiteId);
      if (subs && subs.events.size > 0)
        candidates.push({ stored, subs, mark: fanoutMarkKey(stored.job.queue, stored.job.id) });
    }
    if (candidates.length === 0) return;
    marking(candidates.map((c) => c.stored.job.id));

    // Marks exist only for jobs tried before.
    const retried = candidates.filter((c) => c.stored.job.retried);
    if (retried.length > 0) {
      const marks = await this.deps.redis.mget(...retried.map((c) => c.mark));
      retried.forEach((c, i) => {
        c.state = marks[i];
      });
      candidates = candidates.filter((c) => c.state !== 'B');
    }

    for (const c of candidates) {
      const needsRows =
        c.subs.events.has('event.tracked') ||
        c.subs.events.has('goal.completed') ||
        c.subs.events.has('visitor.high_value');
      if (needsRows && c.stored.payload) c.rows = decodeEventRows(c.stored.payload);
    }
    await this.scoreVisits(candidates);
    const firsts = await this.firstPurchases(candidates);

    const groups: { adds: WebhookEventJob[]; marks: string[] }[] = [];
    let group: { adds: WebhookEventJob[]; marks: string[] } = { adds: [], marks: [] };
    for (const c of candidates) {
      const happenings = this.happenings(c, firsts);
      if (group.adds.length > 0 && group.adds.length + happenings.length > ADDS_PER_TRANSACTION) {
        groups.push(group);
        group = { adds: [], marks: [] };
      }
      group.adds.push(...happenings);
      group.marks.push(c.mark);
    }
    groups.push(group);
    await Promise.all(groups.map((g) => this.queueEvents(g.adds, g.marks)));
  }

  /** Adds visit counts for the subscribers of visitor.high_value; each job's mark records its crossings. */
  private async scoreVisits(candidates: Candidate[]): Promise<void> {
    const scoring = candidates.filter((c) => c.subs.events.has('visitor.high_value') && c.rows);
    const jobs: ScoreJob[] = scoring.map((c) => ({
      mark: c.mark,
      websiteId: c.stored.job.data.websiteId,
      deltas: c.state ? [] : visitDeltas(c.rows ?? []),
    }));
    const marks = await applyVisitDeltas(this.deps.redis, this.deps.redisPrefix, jobs, FANOUT_MARK_TTL_SECONDS);
    scoring.forEach((c, i) => {
      c.state = marks[i];
    });
  }

  /** The event ids of purchases that are their visitor's first, among subscribers of visitor.converted. */
  private async firstPurchases(candidates: Candidate[]): Promise<Set<string>> {
    const ids = candidates
      .filter((c) => c.subs.events.has('visitor.converted'))
      .flatMap((c) => c.stored.job.data.payments.filter((p) => p.status === 'succeeded' && p.visitor_id))
      .map((p) => p.event_id);
    if (ids.length === 0) return new Set();
    const { rows } = await this.deps.pool.query<{ id: string }>(
      'SELECT payment_event_id::text AS id FROM visitor_conversions WHERE payment_event_id = ANY($1::uuid[])',
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  private happenings(c: Candidate, firsts: ReadonlySet<string>): WebhookEventJob[] {
    const { websiteId, identities, payments } = c.stored.job.data;
    const events = c.subs.events;
    const out: WebhookEventJob[] = [];
    if (c.rows) out.push(...rowHappenings(websiteId, c.rows, c.subs));
    if (events.has('visitor.identified')) out.push(...identifiedHappenings(websiteId, identities));
    if (events.has('visitor.converted')) out.push(...convertedHappenings(websiteId, payments, firsts));
    if (events.has('visitor.high_value') && c.state) {
      for (const h of crossingsOfMark(c.state)) {
        out.push({
          websiteId,
          event: 'visitor.high_value',
          key: highValueKey(websiteId, h.visitorId, h.day),
          timestamp: new Date(h.at).toISOString(),
          data: {
            visitor_id: h.visitorId,
            score: h.score,
            current_page: h.currentPage,
            time_on_site: h.timeOnSite,
          },
        });
      }
    }
    return out;
  }

  /** One MULTI: the webhook event jobs and the marks of the ingest jobs they came from. */
  private async queueEvents(adds: readonly WebhookEventJob[], marks: readonly string[]): Promise<void> {
    if (marks.length === 0) return;
    const { queue } = this.deps;
    const client = await queue.getBackend().client;
    const multi = client.multi() as ReturnType<Redis['multi']> & Parameters<Job['addJob']>[0];
    const added = adds.map((data) =>
      new Job(queue, data.event, data, { ...WEBHOOK_EVENT_JOB_OPTIONS, jobId: data.key }, data.key)
        .addJob(multi)
        // A key already queued answers an error code: the happening is queued, which is all that matters.
        .catch(() => undefined),
    );
    for (const mark of marks) multi.set(mark, 'B', 'EX', FANOUT_MARK_TTL_SECONDS);
    const replies = await multi.exec();
    await Promise.all(added);
    const failed = replies?.find(([err]) => err);
    if (!replies || failed) throw failed?.[0] ?? new Error('webhook events transaction aborted');
  }
}
