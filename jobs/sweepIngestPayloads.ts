// Deletes ingest job payloads whose job is gone (see sweepOrphanPayloads): a worker deletes a payload
// right after completing its job, so this only finds what a crash or a hand-removed job left behind.
import { sweepOrphanPayloads } from '../lib/queue/ingest';
import { QUEUE_NAMES } from '../lib/queue/queues';
import { bullPrefix, type Redis } from '../lib/redis';

export function sweepIngestPayloads(redis: Redis, redisPrefix: string): Promise<{ scanned: number; deleted: number }> {
  return sweepOrphanPayloads(redis, `${bullPrefix(redisPrefix)}:${QUEUE_NAMES.ingest}`);
}
