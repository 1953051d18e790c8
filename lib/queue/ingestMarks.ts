// Marks beside an ingest job, in the queue's Redis, that make "was this request's job queued?" a question
// with one answer (lib/ingest/accept/dedupe.ts relies on it):
// - queued:<token> is written in the same MULTI as the job, unless void:<token> already exists;
// - void:<token> is written only while queued:<token> does not exist (one script), and the worker drops the
//   events of a job whose void mark exists.
// So a job's events are stored exactly when its queued mark exists, whichever of the two happens first, and
// a request whose claims were taken over can never have its job written as well.
import type { Redis } from '../redis';

/** The queued mark outlives every claim that may point at it (claims live 24 h). */
export const QUEUED_MARK_TTL_SECONDS = 2 * 24 * 3600;
/**
 * How long a void mark outlives its request. A job waits at most minutes in a running queue, but a failed
 * job stays until an operator retries it; a mark older than this no longer stops such a retry.
 */
export const VOID_MARK_TTL_SECONDS = 30 * 24 * 3600;

// Beside the job's own keys, so that under a hash-tagged prefix on Redis Cluster they share its slot.
export const queuedMarkKey = (queueQualifiedName: string, token: string) => `${queueQualifiedName}:queued:${token}`;
export const voidMarkKey = (queueQualifiedName: string, token: string) => `${queueQualifiedName}:void:${token}`;

/**
 * Run inside the job's MULTI, after the job's add. KEYS: queued mark, void mark, the job's hash; ARGV: ttl.
 * Answers 1 when marked queued, 0 when void, -1 when the job is not there.
 */
export const MARK_QUEUED_UNLESS_VOID = `
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return 1`;

// KEYS: queued and void mark of each token, in pairs; ARGV: void ttl. Per token 'q' (its job is queued) or
// 'v' (void from now on). allow-oom: it runs after an enqueue failed, perhaps because Redis is at maxmemory,
// and adds at most one small key per token.
const VOID_UNLESS_QUEUED = `#!lua flags=allow-oom
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    out[#out + 1] = 'q'
  else
    redis.call('SET', KEYS[i + 1], '1', 'EX', ARGV[1])
    out[#out + 1] = 'v'
  end
end
return table.concat(out)`;

/**
 * For each request token: whether its job is queued (true), or it is voided now (false), so that a job of
 * it arriving later is dropped and its request answered 503.
 */
export async function voidUnlessQueued(
  redis: Redis,
  queueQualifiedName: string,
  tokens: readonly string[],
): Promise<boolean[]> {
  if (tokens.length === 0) return [];
  const keys = tokens.flatMap((t) => [queuedMarkKey(queueQualifiedName, t), voidMarkKey(queueQualifiedName, t)]);
  const reply = (await redis.eval(VOID_UNLESS_QUEUED, keys.length, ...keys, String(VOID_MARK_TTL_SECONDS))) as string;
  return tokens.map((_, i) => reply[i] === 'q');
}

/** Whether each request's job is queued (its queued mark exists); read-only. */
export async function queuedMarks(
  redis: Redis,
  queueQualifiedName: string,
  tokens: readonly string[],
): Promise<boolean[]> {
  if (tokens.length === 0) return [];
  const marks = await redis.mget(...tokens.map((t) => queuedMarkKey(queueQualifiedName, t)));
  return marks.map((m) => m !== null);
}

/** For the worker: which of these jobs (ids = request tokens) are void. */
export async function voidedJobs(
  redis: Redis,
  queueQualifiedName: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const marks = await redis.mget(...ids.map((id) => voidMarkKey(queueQualifiedName, id)));
  return new Set(ids.filter((_, i) => marks[i] !== null));
}
