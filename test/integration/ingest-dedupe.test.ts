// The idempotency claim script against a real Redis: fresh keys are claimed with SET NX, and only a key that
// exists is read — a live claim makes a duplicate, a tombstone ("x:" + token) is claimed over.
import { randomUUID } from 'node:crypto';
import { DEDUPE_TTL_SECONDS, IdempotencyKeys } from '../../lib/ingest/dedupe';
import { createRedis, waitReady, type Redis } from '../../lib/redis';
import { REDIS_URL, uniqueName } from '../helpers/context';

let redis: Redis;
let prefix: string;
let keys: IdempotencyKeys;
const site = randomUUID();

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'request', 'tidemark-test');
  await waitReady(redis);
  prefix = uniqueName('tmtest');
});
afterAll(async () => {
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.unlink(...found);
  await redis.quit();
});
beforeEach(() => {
  keys = new IdempotencyKeys(redis, prefix);
});

const fresh = () => keys.key(site, randomUUID());

it('claims fresh keys with the token and a 24 h expiry; a repeat, in the batch or later, is a duplicate', async () => {
  const [a, b] = [fresh(), fresh()];
  const first = randomUUID();
  expect(await keys.claim([a, b, a], first)).toEqual([true, true, false]);
  expect(await redis.get(a)).toBe(first);
  const ttl = await redis.ttl(a);
  expect(ttl).toBeGreaterThan(DEDUPE_TTL_SECONDS - 10);
  expect(ttl).toBeLessThanOrEqual(DEDUPE_TTL_SECONDS);
  const second = randomUUID();
  expect(await keys.claim([b, fresh()], second)).toEqual([false, true]);
  // A duplicate leaves the first claim as it was.
  expect(await redis.get(b)).toBe(first);
});

it('a released claim becomes a tombstone that the next request claims over, once', async () => {
  const [a, b] = [fresh(), fresh()];
  const released = randomUUID();
  expect(await keys.claim([a, b], released)).toEqual([true, true]);
  // Another request's token frees nothing.
  expect(await keys.release([a], randomUUID())).toBe(0);
  expect(await keys.release([a], released)).toBe(1);
  expect(await redis.get(a)).toBe(`x:${released}`);
  expect(await redis.ttl(a)).toBeGreaterThan(DEDUPE_TTL_SECONDS - 10);
  // The worker sees the released claim as void, the other one as still held.
  expect(await keys.claimStillHeld([a, b], released)).toEqual([false, true]);

  const retry = randomUUID();
  // The tombstone is claimed by its first occurrence in the batch only; the live claim stays a duplicate.
  expect(await keys.claim([a, a, b], retry)).toEqual([true, false, false]);
  expect(await redis.get(a)).toBe(retry);
  expect(await redis.ttl(a)).toBeGreaterThan(DEDUPE_TTL_SECONDS - 10);
  expect(await keys.claimStillHeld([a], retry)).toEqual([true]);
  expect(await keys.claim([a], randomUUID())).toEqual([false]);
});

it('keys() names the same keys as key()', () => {
  expect(keys.keys(site, ['a', 'b:c'])).toEqual([keys.key(site, 'a'), keys.key(site, 'b:c')]);
});

it('a value that merely starts like a token is no tombstone', async () => {
  const a = fresh();
  await redis.set(a, 'y:not-a-tombstone', 'EX', 60);
  expect(await keys.claim([a], randomUUID())).toEqual([false]);
  expect(await redis.get(a)).toBe('y:not-a-tombstone');
});
