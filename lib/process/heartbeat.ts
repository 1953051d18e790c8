// Each running role keeps a short-lived Redis key saying what it is (role, version, host, pid, since when), so
// `tidemark status` can list the roles that are up without a registry to keep in sync.
import os from 'node:os';
import { type Redis, redisKey } from '../redis';
import { VERSION } from '../version';
import { z } from '../zod';

const BEAT_EVERY_MS = 10_000;
const FORGET_AFTER_SECONDS = 30;

export const roleBeatSchema = z.object({
  role: z.string(),
  version: z.string(),
  host: z.string(),
  pid: z.number(),
  started_at: z.string(),
  seen_at: z.string(),
});
export type RoleBeat = z.infer<typeof roleBeatSchema>;

/** Starts beating for `role`; the returned function stops and removes the key. */
export function startHeartbeat(redis: Redis, prefix: string, role: string): () => Promise<void> {
  const key = redisKey(prefix, 'roles', role, os.hostname(), String(process.pid));
  const started = new Date().toISOString();
  const beat = () => {
    const value: RoleBeat = {
      role,
      version: VERSION,
      host: os.hostname(),
      pid: process.pid,
      started_at: started,
      seen_at: new Date().toISOString(),
    };
    redis.set(key, JSON.stringify(value), 'EX', FORGET_AFTER_SECONDS).catch(() => undefined);
  };
  beat();
  const timer = setInterval(beat, BEAT_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.del(key).catch(() => undefined);
  };
}

/** The roles that beat within the last FORGET_AFTER_SECONDS. */
export async function liveRoles(redis: Redis, prefix: string): Promise<RoleBeat[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', redisKey(prefix, 'roles', '*'), 'COUNT', 200);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  return values
    .flatMap((v) => {
      const parsed = v ? roleBeatSchema.safeParse(JSON.parse(v)) : undefined;
      return parsed?.success ? [parsed.data] : [];
    })
    .sort((a, b) => a.role.localeCompare(b.role) || a.host.localeCompare(b.host) || a.pid - b.pid);
}
