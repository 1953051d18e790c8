// In-memory stand-ins for running the server ingest pipeline in one process (bench/ingest-pipeline.ts,
// bench/store-insert.ts): a website lookup that always finds `website`, a fixed salt, no goals, every
// idempotency key fresh, and `enqueue` as the caller wants it. Only the methods the path calls exist, hence
// the casts.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ApiKeyPrincipal } from '../lib/accounts/apiKeys';
import type { IdempotencyKeys } from '../lib/ingest/accept/dedupe';
import type { ActiveGoalsCache } from '../lib/ingest/accept/goalsCache';
import type { IngestDeps } from '../lib/ingest/accept/pipeline';
import type { DailySalts } from '../lib/ingest/accept/salt';
import type { QueuedIngest } from '../lib/ingest/job/rows';
import { createLogger } from '../lib/log';

export interface StandInWebsite {
  id: string;
  team_id: string;
  domain: string;
  tracking_code: string;
}

export function standInDeps(
  website: StandInWebsite,
  enrichers: IngestDeps['enrichers'],
  enqueue: (jobId: string, job: QueuedIngest) => Promise<void>,
): IngestDeps {
  return {
    // The website lookup is the only query on this path; the row is read with its time zone.
    pool: { query: async () => ({ rows: [{ timezone: 'UTC', ...website }] }) } as unknown as Pool,
    salts: { forTime: async () => 'f'.repeat(64) } as unknown as DailySalts,
    goals: { get: async () => new Set<string>() } as unknown as ActiveGoalsCache,
    idempotency: {
      claim: async (_websiteId: string, keys: readonly string[]) => keys.map(() => ({ kind: 'claimed' as const })),
    } satisfies Pick<IdempotencyKeys, 'claim'> as unknown as IdempotencyKeys,
    enqueue: async (jobId, job) => {
      await enqueue(jobId, job);
      return 'queued';
    },
    voidUnlessQueued: async (tokens) => tokens.map(() => false),
    queued: async (tokens) => tokens.map(() => false),
    enrichers,
    logger: createLogger('warn', 'bench'),
  };
}

/** A full_access key of the website's team on the enterprise plan. */
export function standInPrincipal(website: StandInWebsite): ApiKeyPrincipal {
  return {
    keyId: randomUUID(),
    keyName: 'bench',
    teamId: website.team_id,
    permission: 'full_access',
    websiteId: null,
    plan: 'enterprise',
    planLabel: 'Enterprise',
    limitOverrides: {},
  } as ApiKeyPrincipal;
}
