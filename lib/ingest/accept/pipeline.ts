// Server-side ingestion as a named pipeline (DESIGN §2 rule 4, §3 "Ingestion decisions"). The HTTP steps
// before it (authenticate, plan, limits, body) live in api/; from the website lookup on, every step is here.
// Exactly one outcome per event, in input order; a 200 means every accepted event is durably queued.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ApiKeyPrincipal } from '../../accounts/apiKeys';
import { getWebsiteByTrackingCode } from '../../accounts/websites';
import { forbidden, HttpError, notFound, orUnavailable, serviceUnavailable } from '../../errors';
import type { Logger } from '../../log';
import { PLANS } from '../../plans';
import type { PresenceHit, PresenceSink } from '../../realtime/presence';
import { keepRows, packJob } from '../job/rowBinary';
import {
  chSeconds,
  chTime,
  type EventRow,
  type IdentityRecord,
  type PaymentRecord,
  type QueuedIngest,
} from '../job/rows';
import type { IdempotencyKeys } from './dedupe';
import {
  buildEventRow,
  hashIp,
  identityRecord,
  normalizeIp,
  paymentRecord,
  primaryLanguage,
  type RequestContext,
  serverClient,
} from './enrich';
import type { Enrichers } from './enrichers';
import type { ActiveGoalsCache } from './goalsCache';
import { pageMemo } from './page';
import type { DailySalts } from './salt';
import type { IngestBatch, IngestError, IngestResult, RejectionReason } from './serverSchemas';
import { type ValidEvent, validateServerEvent } from './validate';

export interface IngestDeps {
  pool: Pool;
  salts: DailySalts;
  goals: ActiveGoalsCache;
  idempotency: IdempotencyKeys;
  /** Enqueues a job (id = the request's token); with `mark`, writes its queued mark (lib/queue/ingestMarks.ts). */
  enqueue: (jobId: string, job: QueuedIngest, opts: { mark: boolean }) => Promise<'queued' | 'voided'>;
  /** Per request token: true when its job is queued, else voids it (lib/queue/ingestMarks.ts). */
  voidUnlessQueued: (tokens: readonly string[]) => Promise<boolean[]>;
  /** Per request token: whether its job is queued (read-only). */
  queued: (tokens: readonly string[]) => Promise<boolean[]>;
  /** Throws a 503 while the queue cannot take more (its Redis nearly full); checked before the claim. */
  ensureQueueRoom?: () => Promise<void>;
  enrichers: Enrichers;
  logger: Logger;
  /** Realtime presence; called after a successful enqueue and must never throw or block. */
  presence?: PresenceSink;
  now?: () => number;
}

export interface IngestRequest {
  principal: ApiKeyPrincipal;
  batch: IngestBatch;
  gpc: boolean;
}

type Outcome =
  | { kind: 'accepted' }
  | { kind: 'deduped' }
  | { kind: 'rejected'; reason: RejectionReason; message: string };
// Shared: nothing mutates an outcome, and a batch holds a thousand of them.
const ACCEPTED: Outcome = { kind: 'accepted' };
const DEDUPED: Outcome = { kind: 'deduped' };

export async function ingestServerBatch(deps: IngestDeps, req: IngestRequest): Promise<IngestResult> {
  const now = deps.now?.() ?? Date.now();
  const website = await resolveWebsite(deps.pool, req.principal, req.batch.trackingCode);
  const events = req.batch.events;
  if (req.gpc) {
    return summarize(
      events.map(() => ({ kind: 'rejected', reason: 'gpc_opted_out', message: 'Sec-GPC: 1 opts the whole batch out' })),
    );
  }

  const activeGoals = events.some((e) => (e as { type?: unknown } | null)?.type === 'goal')
    ? await orUnavailable(deps.goals.get(website.id))
    : new Set<string>();
  const ctx = await requestContext(deps, req, website, now);

  // Validate and build every event; per-event surprises become internal_error for that event only. The
  // rows are encoded into the job here, before any await: a thousand row objects then die young instead
  // of being copied by the garbage collector while Redis answers (GC was a fifth of the web role's CPU).
  const outcomes: Outcome[] = [];
  const built: Built[] = [];
  const rows: EventRow[] = [];
  const identities: IdentityRecord[] = [];
  const payments: PaymentRecord[] = [];
  events.forEach((raw, index) => {
    try {
      const verdict = validateServerEvent(raw, { now, activeGoals });
      if (!verdict.ok) {
        outcomes[index] = { kind: 'rejected', reason: verdict.reason, message: verdict.message };
        return;
      }
      const event = verdict.event;
      const row = buildEventRow(event, ctx);
      if (event.type === 'identify') identities.push(identityRecord(event, row));
      if (event.type === 'purchase') payments.push(paymentRecord(event, row));
      rows.push(row);
      built.push({ index, idempotencyKey: event.idempotencyKey, hit: presenceHit(website.id, event, row) });
    } catch (err) {
      deps.logger.error({ err: (err as Error).message, index }, 'event failed unexpectedly');
      outcomes[index] = {
        kind: 'rejected',
        reason: 'internal_error',
        message: 'Unexpected failure; retrying with the same idempotencyKey is safe',
      };
    }
  });
  const packed = packJob(website.id, rows, { identities, payments, interactions: [], errors: [], replays: [] });
  rows.length = 0; // the closure above keeps `rows` itself reachable across the awaits below

  // A queue that cannot take the batch refuses it before any key is claimed.
  if (built.length > 0) await deps.ensureQueueRoom?.();

  // Dedupe: one atomic claim for every keyed event of the batch (more round trips only for keys held by others).
  const token = randomUUID();
  const keyed = built.filter((b) => b.idempotencyKey !== undefined);
  const keys = keyed.map((b) => b.idempotencyKey!);
  const claimed = await orUnavailable(claimKeys(deps, website.id, keys, token));
  for (const b of built) outcomes[b.index] = ACCEPTED;
  keyed.forEach((b, i) => {
    if (!claimed[i]) outcomes[b.index] = DEDUPED;
  });
  const accepted = built.map((b) => outcomes[b.index] === ACCEPTED);

  if (accepted.includes(true)) {
    // Duplicates (rare: a retry's are usually all duplicates, and then there is no job) leave the payload.
    const job = accepted.includes(false) ? keepRows(packed, accepted) : packed;
    const queued = await enqueueOrVoid(deps, token, job);
    if (!queued) {
      // Claims this request still holds are taken over by the retry: its holder (this token) is void.
      throw serviceUnavailable('Events could not be queued; retry with the same idempotency keys');
    }
    if (deps.presence) deps.presence(built.flatMap((b, i) => (accepted[i] && b.hit ? [b.hit] : [])));
  }
  return summarize(outcomes);
}

/** Rounds of taking over claims held by requests that never queued their job, before answering 503. */
const MAX_TAKEOVER_ROUNDS = 3;

/**
 * Per key, true when this request claimed it and false when it is a duplicate: a repeat within the batch, or
 * held by a request whose job is queued. A key held by a request whose job is not queued (it died, timed out,
 * or is still on its way) is taken over after voiding that request, so its job, should it arrive, is dropped.
 */
async function claimKeys(
  deps: IngestDeps,
  websiteId: string,
  keys: readonly string[],
  token: string,
): Promise<boolean[]> {
  const claimed: boolean[] = new Array<boolean>(keys.length).fill(false);
  let pending = keys.map((_, i) => i);
  const voided: string[] = [];
  for (let round = 0; pending.length > 0; round++) {
    const results = await deps.idempotency.claim(
      websiteId,
      pending.map((i) => keys[i]),
      token,
      voided,
    );
    const held = new Map<string, number[]>();
    const youngest = new Map<string, number>();
    results.forEach((r, j) => {
      if (r.kind === 'claimed') claimed[pending[j]] = true;
      else if (r.kind === 'held') {
        held.set(r.holder, [...(held.get(r.holder) ?? []), pending[j]]);
        youngest.set(r.holder, Math.min(r.ageSeconds, youngest.get(r.holder) ?? Infinity));
      }
    });
    if (held.size === 0) break;
    if (round === MAX_TAKEOVER_ROUNDS)
      throw serviceUnavailable('Concurrent requests hold these idempotency keys; retry shortly');
    const holders = [...held.keys()];
    await awaitYoungHolders(
      deps,
      holders.filter((h) => youngest.get(h)! < YOUNG_CLAIM_SECONDS),
    );
    const queued = await deps.voidUnlessQueued(holders);
    pending = [];
    holders.forEach((holder, k) => {
      if (queued[k]) return; // a duplicate of events durably queued
      voided.push(holder);
      pending.push(...held.get(holder)!);
    });
    pending.sort((a, b) => a - b); // the first occurrence of a key repeated in the batch claims it
  }
  return claimed;
}

/** A claim this young may belong to a request still between its claim and its enqueue. */
const YOUNG_CLAIM_SECONDS = 2;
/** How long a request waits for such holders to queue their jobs before voiding them. */
const YOUNG_HOLDER_WAIT_MS = 1_000;

/**
 * Waits, up to YOUNG_HOLDER_WAIT_MS, for requests that claimed moments ago to queue their jobs: concurrent
 * identical requests then see the first one's events queued and answer "deduped", instead of voiding it.
 */
async function awaitYoungHolders(deps: IngestDeps, holders: string[]): Promise<void> {
  const deadline = Date.now() + YOUNG_HOLDER_WAIT_MS;
  let waiting = holders;
  for (let pause = 10; waiting.length > 0 && Date.now() < deadline; pause = Math.min(pause * 2, 100)) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const queued = await deps.queued(waiting);
    waiting = waiting.filter((_, i) => !queued[i]);
  }
}

/**
 * Enqueues the job; true when it is queued. An enqueue that failed may still have landed (a reply lost to a
 * timeout): the job is then voided unless its queued mark shows it got in, so the answer is never a 503
 * for events that will be written, nor a 200 for events that will not.
 */
async function enqueueOrVoid(deps: IngestDeps, token: string, job: QueuedIngest): Promise<boolean> {
  try {
    // Every server job carries its queued mark, keyed events or not: "answered 503" then always means void.
    return (await deps.enqueue(token, job, { mark: true })) === 'queued';
  } catch (err) {
    if (err instanceof HttpError) throw err; // a refusal by design (queue Redis full): nothing was written
    deps.logger.error({ err: (err as Error).message }, 'enqueue failed; settling whether the job got in');
    for (let attempt = 1; ; attempt++) {
      try {
        return (await deps.voidUnlessQueued([token]))[0];
      } catch (settleErr) {
        // Unsettled, the job may still land: keyed events are then answered deduped on retry, keyless ones
        // may be stored twice (docs/ingestion.md: at least once while the queue's Redis is unreachable).
        if (attempt === SETTLE_ATTEMPTS) {
          deps.logger.error({ err: (settleErr as Error).message }, 'could not settle a failed enqueue');
          return false;
        }
        await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
      }
    }
  }
}

/** Tries at settling a failed enqueue (each bounded by the client's command timeout), and the pause between them. */
const SETTLE_ATTEMPTS = 3;
const SETTLE_PAUSE_MS = 500;

/** What a built event leaves for after the claim: its place in the batch, its key, its presence hit. */
interface Built {
  index: number;
  idempotencyKey: string | undefined;
  hit: PresenceHit | undefined;
}

async function resolveWebsite(pool: Pool, principal: ApiKeyPrincipal, trackingCode: string) {
  const website = await getWebsiteByTrackingCode(pool, trackingCode);
  // Another team's website is as unknown as a missing one: nothing leaks about it.
  if (!website || website.team_id !== principal.teamId) throw notFound('No website with this tracking code');
  if (principal.permission === 'site_access' && principal.websiteId !== website.id) {
    throw forbidden('This API key is bound to another website');
  }
  return website;
}

async function requestContext(
  deps: IngestDeps,
  req: IngestRequest,
  website: { id: string; domain: string },
  now: number,
): Promise<RequestContext> {
  const server = req.batch.serverContext ?? {};
  const ip = normalizeIp(server.clientIp);
  return {
    head: {
      website_id: website.id,
      source: 'server',
      received_at: chTime(now),
      // The raw address is used here, during the request, and never leaves this function except hashed.
      ip_hash: hashIp(await orUnavailable(deps.salts.forTime(now)), website.id, ip),
      api_key_id: req.principal.keyId,
      expire_at: chSeconds(now + PLANS[req.principal.plan].dataRetentionDays * 86_400_000),
    },
    site: { domain: website.domain, memo: pageMemo() },
    client: serverClient(
      server.userAgent ? deps.enrichers.ua?.(server.userAgent) : undefined,
      ip ? deps.enrichers.geo?.lookup(ip) : undefined,
      primaryLanguage(server.acceptLanguage),
    ),
  };
}

// Built from the row in hand: enrichment already settled the path and country, so nothing is recomputed.
function presenceHit(websiteId: string, event: ValidEvent, row: EventRow): PresenceHit | undefined {
  if (event.type !== 'pageview' || !event.visitorId) return undefined;
  return { websiteId, visitorId: event.visitorId, pathname: row.pathname, countryCode: row.country_code, ts: event.ts };
}

function summarize(outcomes: Outcome[]): IngestResult {
  const errors: IngestError[] = [];
  let acceptedCount = 0;
  let dedupedCount = 0;
  outcomes.forEach((o, index) => {
    if (o.kind === 'accepted') acceptedCount++;
    else if (o.kind === 'deduped') dedupedCount++;
    else errors.push({ index, reason: o.reason, message: o.message });
  });
  return { acceptedCount, dedupedCount, rejectedCount: errors.length, errors };
}
