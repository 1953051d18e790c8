// Redis connections. Every key this project writes goes through redisKey() and every BullMQ queue uses
// bullPrefix(), so two installs with different REDIS_PREFIX never see each other's data.
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './log';

export type { Redis };

export type RedisUse =
  /** Request path (API): fail fast when Redis is down instead of queueing commands in memory. */
  | 'request'
  /** BullMQ workers: block and reconnect forever (BullMQ requires maxRetriesPerRequest null). */
  | 'worker';

export function createRedis(url: string, use: RedisUse, name = 'tidemark'): Redis {
  const common: RedisOptions = { connectionName: name, lazyConnect: false };
  const options: RedisOptions =
    use === 'request'
      ? { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 5_000 }
      : { ...common, maxRetriesPerRequest: null, enableReadyCheck: true };
  const client = new Redis(url, options);
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash the process.
  client.on('error', () => undefined);
  return client;
}

export function redisKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(':');
}

/** BullMQ's own key prefix for this install's queues. */
export function bullPrefix(prefix: string): string {
  return `${prefix}:bull`;
}

/** Waits until a fail-fast client is connected (ioredis connects in the background). */
export async function waitReady(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const timer = setTimeout(() => {
      cleanup();
      const why = lastError ? ((lastError as NodeJS.ErrnoException).code ?? lastError.message) : client.status;
      reject(new Error(`redis not reachable within ${timeoutMs} ms (${why})`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      lastError = err;
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/** BullMQ loses jobs if Redis may evict keys; say so loudly at start-up. */
export async function warnUnlessNoEviction(client: Redis, logger: Logger): Promise<string | undefined> {
  try {
    const reply = (await client.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy !== 'noeviction') {
      logger.warn({ policy }, "Redis maxmemory-policy is not 'noeviction': queued jobs and dedupe keys can be evicted");
    }
    return policy;
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not read Redis maxmemory-policy (CONFIG GET refused?)');
    return undefined;
  }
}

/** The lowest Redis this project runs on: its scripts declare flags (`#!lua flags=…`), which Redis 7 added. */
export const MIN_REDIS_VERSION = [7, 0] as const;

/** Whether `redis_version` in an INFO server reply is at least MIN_REDIS_VERSION (false when it is missing). */
export function redisVersionSupported(infoServer: string): boolean {
  const m = /^redis_version:(\d+)\.(\d+)/m.exec(infoServer);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > MIN_REDIS_VERSION[0] || (major === MIN_REDIS_VERSION[0] && minor >= MIN_REDIS_VERSION[1]);
}

/**
 * Stops start-up on an older Redis: the idempotency release script would not even compile there, and a 503's
 * claims would then stay held, so the client's retry would be taken for a duplicate.
 */
export async function requireRedisVersion(client: Redis, what: string): Promise<void> {
  const info = await client.info('server');
  if (!redisVersionSupported(info)) {
    const found = /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown';
    throw new Error(`${what} is Redis ${found}; Tidemark needs Redis ${MIN_REDIS_VERSION.join('.')} or later`);
  }
}

/** What the queue's Redis does to keep what it holds across a crash (CONFIG GET, else INFO persistence). */
export interface RedisPersistence {
  appendonly: boolean;
  /** always | everysec | no; undefined when unknown. */
  appendfsync?: string;
  /** RDB snapshot rules, '' when none. */
  save?: string;
}

export async function readPersistence(client: Redis): Promise<RedisPersistence> {
  try {
    const reply = (await client.config('GET', 'appendonly')) as string[];
    const more = (await client.config('GET', 'appendfsync')) as string[];
    const save = (await client.config('GET', 'save')) as string[];
    return { appendonly: reply[1] === 'yes', appendfsync: more[1], save: save[1] ?? '' };
  } catch {
    // CONFIG refused (a managed Redis, an ACL): INFO still tells whether the AOF is on.
    const info = await client.info('persistence');
    return { appendonly: /^aof_enabled:1/m.test(info) };
  }
}

/**
 * A 200 from ingestion means "durably queued", which only an append-only file makes true: without it a Redis
 * restart loses every queued event (RDB snapshots lose minutes of them). In production the web role refuses
 * to start on such a Redis unless ALLOW_VOLATILE_QUEUE=true; elsewhere, and when allowed, it warns. Answers
 * the one-line reason to refuse, or undefined.
 */
export async function checkQueueDurability(
  client: Redis,
  opts: { production: boolean; allowVolatile: boolean },
  logger: Logger,
  variable: 'REDIS_URL' | 'DEDUPE_REDIS_URL' = 'REDIS_URL',
): Promise<string | undefined> {
  const p = await readPersistence(client);
  if (p.appendonly) {
    if (p.appendfsync === 'no') {
      logger.warn(
        { appendfsync: p.appendfsync },
        "the queue Redis's appendfsync is 'no': events answered 200 can be lost if the machine fails; use everysec or always",
      );
    }
    return undefined;
  }
  const loss =
    variable === 'REDIS_URL'
      ? 'events answered 200 are lost'
      : 'idempotency claims are forgotten (retries stored twice)';
  const why = `${variable} has no append-only file (appendonly no${p.save ? `, RDB snapshots only: save "${p.save}"` : ''}): ${loss} when Redis restarts`;
  if (opts.production && !opts.allowVolatile) {
    return `${why}; run Redis with --appendonly yes (README: Redis for durability) or set ALLOW_VOLATILE_QUEUE=true to accept the loss`;
  }
  logger.warn({ appendonly: false, save: p.save }, `${why} (set appendonly yes for production)`);
  return undefined;
}
