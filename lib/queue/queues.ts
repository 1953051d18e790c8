// Queue names and factories. Producers (the API) get fail-fast connections so a Redis outage turns into a
// 503 instead of a request that hangs; workers get blocking ones.
import { Queue, type ConnectionOptions } from 'bullmq';
import { bullPrefix, createRedis } from '../redis';

export const QUEUE_NAMES = {
  ingest: 'ingest',
  jobs: 'jobs',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export function createProducerQueue(name: QueueName, redisUrl: string, redisPrefix: string): Queue {
  const connection = createRedis(redisUrl, 'request', `tidemark-producer-${name}`);
  return new Queue(name, { connection: connection as unknown as ConnectionOptions, prefix: bullPrefix(redisPrefix) });
}
