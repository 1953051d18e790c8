// Server-side ingestion as a named pipeline (DESIGN §2 rule 4, §3 "Ingestion decisions"). The HTTP steps
// before it (authenticate, plan, limits, body) live in api/; from the website lookup on, every step is here.
// Exactly one outcome per event, in input order; a 200 means every accepted event is durably queued.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ApiKeyPrincipal } from '../accounts/apiKeys';
import { getWebsiteByTrackingCode } from '../accounts/websites';
import { forbidden, HttpError, notFound, orUnavailable, serviceUnavailable } from '../errors';
import type { Logger } from '../log';
import { PLANS } from '../plans';
import type { PresenceHit, PresenceSink } from '../realtime/presence';
import type { IdempotencyKeys } from './dedupe';
import { buildEventRow, hashIp, identityRecord, normalizeIp, paymentRecord, primaryLanguage, requestMemo, type RequestContext } from './enrich';
import type { ActiveGoalsCache } from './goalsCache';
import { chSeconds, chTime, type EventRow, type IdentityRecord, type PaymentRecord, type QueuedIngest } from './rows';
import { keepRows, packJob } from './rowBinary';
import type { DailySalts } from './salt';
import type { IngestBatch, IngestError, IngestResult, RejectionReason } from './schemas';
import { validateServerEvent, type ValidEvent } from './validate';

export interface Enrichers {
  geo?: { lookup(ip: string): { country_code: string; region: string; city: string } | undefined };
  ua?: (userAgent: string | undefined) => { device_type: string; browser: string; browser_version: string; os: string; os_version: string };
}

export interface IngestDeps {
  pool: Pool;
  salts: DailySalts;
  goals: ActiveGoalsCache;
  idempotency: IdempotencyKeys;
  enqueue: (jobId: string, job: QueuedIngest) => Promise<void>;
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

type Outcome = { kind: 'accepted' } | { kind: 'deduped' } | { kind: 'rejected'; reason: RejectionReason; message: string };
// Shared: nothing mutates an outcome, and a batch holds a thousand of them.
const ACCEPTED: Outcome = { kind: 'accepted' };
const DEDUPED: Outcome = { kind: 'deduped' };

export async function ingestServerBatch(deps: IngestDeps, req: IngestRequest): Promise<IngestResult> {
  const now = deps.now?.() ?? Date.now();
  const website = await resolveWebsite(deps.pool, req.principal, req.batch.trackingCode);
  const events = req.batch.events;
  if (req.gpc) {
    return summarize(events.map(() => ({ kind: 'rejected', reason: 'gpc_opted_out', message: 'Sec-GPC: 1 opts the whole batch out' })));
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
      outcomes[index] = { kind: 'rejected', reason: 'internal_error', message: 'Unexpected failure; retrying with the same idempotencyKey is safe' };
    }
  });
  const packed = packJob(website.id, rows, { identities, payments, interactions: [], errors: [], replays: [] });
  rows.length = 0; // the closure above keeps `rows` itself reachable across the awaits below

  // A queue that cannot take the batch refuses it before any key is claimed.
  if (built.length > 0) await deps.ensureQueueRoom?.();

  // Dedupe: one atomic claim for every keyed event of the batch.
  const token = randomUUID();
  const keyed = built.filter((b) => b.idempotencyKey !== undefined);
  const keys = keyed.map((b) => b.idempotencyKey!);
  const claimed = await orUnavailable(deps.idempotency.claim(website.id, keys, token));
  for (const b of built) outcomes[b.index] = ACCEPTED;
  keyed.forEach((b, i) => {
    if (!claimed[i]) outcomes[b.index] = DEDUPED;
  });
  const accepted = built.map((b) => outcomes[b.index] === ACCEPTED);

  if (accepted.includes(true)) {
    // Duplicates (rare: a retry's are usually all duplicates, and then there is no job) leave the payload.
    const job = accepted.includes(false) ? keepRows(packed, accepted) : packed;
    try {
      await deps.enqueue(token, job);
    } catch (err) {
      // Nothing of this request is accepted: void its job in case it landed after all, and free its keys so
      // the client's retry is not taken for a repeat.
      await deps.idempotency.release(website.id, keys.filter((_, i) => claimed[i]), token).catch(() => undefined);
      if (err instanceof HttpError) throw err; // a refusal by design (queue Redis full), already the answer
      deps.logger.error({ err: (err as Error).message }, 'enqueue failed; batch refused with 503');
      throw serviceUnavailable('Events could not be queued; retry with the same idempotency keys');
    }
    if (deps.presence) deps.presence(built.flatMap((b, i) => (accepted[i] && b.hit ? [b.hit] : [])));
  }
  return summarize(outcomes);
}

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
    websiteId: website.id,
    websiteDomain: website.domain,
    apiKeyId: req.principal.keyId,
    receivedAtText: chTime(now),
    expireAtText: chSeconds(now + PLANS[req.principal.plan].dataRetentionDays * 86_400_000),
    // The raw address is used here, during the request, and never leaves this function except hashed.
    ipHash: hashIp(await orUnavailable(deps.salts.forTime(now)), website.id, ip),
    geo: ip ? deps.enrichers.geo?.lookup(ip) : undefined,
    ua: server.userAgent ? deps.enrichers.ua?.(server.userAgent) : undefined,
    language: primaryLanguage(server.acceptLanguage),
    memo: requestMemo(),
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
