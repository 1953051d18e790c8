// The idempotency claim scripts against a real Redis: claims are fields of per-(website, day, shard) hashes
// holding "<token> <claim time>"; a live claim (under 24 h old, not a tombstone) makes a duplicate.
import { randomUUID } from 'node:crypto';
import { DEDUPE_TTL_SECONDS, IdempotencyKeys, shardOf } from '../../lib/ingest/dedupe';
import { createRedis, waitReady, type Redis } from '../../lib/redis';
import { REDIS_URL, uniqueName } from '../helpers/context';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis';

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
  const found = await redis.keys(`${prefix}*`);
  if (found.length > 0) await redis.unlink(...found);
  await redis.quit();
});
beforeEach(() => {
  keys = new IdempotencyKeys(redis, prefix);
});

const fresh = () => randomUUID();
const redisNow = async () => Number((await redis.time())[0]);
const bucket = (day: number, key: string, p = prefix, website = site) => `${p}:idem2:{${website}}:${day}:${shardOf(key)}`;

it('claims fresh keys in today’s hash with the token and time; a repeat, in the batch or later, is a duplicate', async () => {
  const [a, b] = [fresh(), fresh()];
  const first = randomUUID();
  expect(await keys.claim(site, [a, b, a], first)).toEqual([true, true, false]);
  const now = await redisNow();
  const day = Math.floor(now / 86400);
  const [token, at] = (await redis.hget(bucket(day, a), a))!.split(' ');
  expect(token).toBe(first);
  expect(now - Number(at)).toBeLessThanOrEqual(1);
  // The hash lives until the end of tomorrow (UTC), when its claims are all older than 24 h.
  expect(await redis.expiretime(bucket(day, a))).toBe((day + 2) * 86400 + 60);
  const second = randomUUID();
  expect(await keys.claim(site, [b, fresh()], second)).toEqual([false, true]);
  // A duplicate leaves the first claim as it was; another website's same key is its own.
  expect((await redis.hget(bucket(day, b), b))!.split(' ')[0]).toBe(first);
  expect(await keys.claim(randomUUID(), [b], second)).toEqual([true]);
});

it('the window is exactly 24 h: a claim in yesterday’s hash counts while under 24 h old', async () => {
  const now = await redisNow();
  const day = Math.floor(now / 86400);
  const [young, old, edge] = [fresh(), fresh(), fresh()];
  await redis.hset(bucket(day - 1, young), young, `t1 ${now - DEDUPE_TTL_SECONDS + 30}`);
  await redis.hset(bucket(day - 1, old), old, `t2 ${now - DEDUPE_TTL_SECONDS - 1}`);
  await redis.hset(bucket(day - 2, edge), edge, `t3 ${now - 60}`); // never read: two days back
  expect(await keys.claim(site, [young, old, edge], randomUUID())).toEqual([false, true, true]);
});

it('a released claim becomes a tombstone that the next request claims over, once', async () => {
  const [a, b] = [fresh(), fresh()];
  const released = randomUUID();
  expect(await keys.claim(site, [a, b], released)).toEqual([true, true]);
  // Another request's token frees nothing.
  expect(await keys.release(site, [a], randomUUID())).toBe(0);
  expect(await keys.release(site, [a], released)).toBe(1);
  const day = Math.floor((await redisNow()) / 86400);
  expect(await redis.hget(bucket(day, a), a)).toMatch(new RegExp(`^x:${released} \\d+$`));
  // The request's job is marked void for the worker.
  expect(await keys.voided([released, randomUUID()])).toEqual(new Set([released]));

  const retry = randomUUID();
  // The tombstone is claimed by its first occurrence in the batch only; the live claim stays a duplicate.
  expect(await keys.claim(site, [a, a, b], retry)).toEqual([true, false, false]);
  expect((await redis.hget(bucket(day, a), a))!.split(' ')[0]).toBe(retry);
  expect(await keys.claim(site, [a], randomUUID())).toEqual([false]);
});

it('a value that merely starts like a token is no tombstone', async () => {
  const a = fresh();
  const day = Math.floor((await redisNow()) / 86400);
  await redis.hset(bucket(day, a), a, `y:not-a-tombstone ${await redisNow()}`);
  expect(await keys.claim(site, [a], randomUUID())).toEqual([false]);
  expect(await redis.hget(bucket(day, a), a)).toMatch(/^y:not-a-tombstone /);
});

it('a thousand keys across every shard: all claimed once, all duplicates after', async () => {
  const batch = Array.from({ length: 1000 }, (_, i) => (i % 2 ? fresh() : `order-${i}`));
  expect(new Set(batch.map(shardOf)).size).toBe(16);
  expect(await keys.claim(site, batch, randomUUID())).toEqual(batch.map(() => true));
  expect(await keys.claim(site, batch, randomUUID())).toEqual(batch.map(() => false));
  // Old and new keys interleaved, over every shard, with a repeat of a new key: answers stay in input order.
  const mixed = batch.slice(0, 300).flatMap((old, i) => (i % 3 === 0 ? [old, `new-${i}`, `new-${i}`] : [`new-${i}`, old]));
  const expected = batch.slice(0, 300).flatMap((_, i) => (i % 3 === 0 ? [false, true, false] : [true, false]));
  expect(await keys.claim(site, mixed, randomUUID())).toEqual(expected);
});

describe('claims of the previous layout (a key per claim)', () => {
  it('are honoured for 24 h after the first start on a Redis that holds them; tombstones are free', async () => {
    const p = uniqueName('tmlegacy');
    const held = fresh();
    const released = fresh();
    const legacy = new IdempotencyKeys(redis, p);
    const [heldKey, releasedKey] = legacy.legacyKeys(site, [held, released]);
    await redis.set(heldKey, randomUUID(), 'EX', 600);
    await redis.set(releasedKey, `x:${randomUUID()}`, 'EX', 600);
    expect(await legacy.claim(site, [held, released, fresh()], randomUUID())).toEqual([false, true, true]);
    const until = Number(await redis.get(`${p}:idem2-legacy-until`));
    expect(until).toBeGreaterThan(Date.now() + DEDUPE_TTL_SECONDS * 1000 - 60_000);
    // Another process reads the decision instead of scanning again.
    expect(await new IdempotencyKeys(redis, p).claim(site, [held], randomUUID())).toEqual([false]);
    const found = await redis.keys(`${p}*`);
    await redis.unlink(...found);
  });

  it('are not looked for on a Redis that holds none', async () => {
    expect(await keys.claim(site, [fresh()], randomUUID())).toEqual([true]);
    expect(await redis.get(`${prefix}:idem2-legacy-until`)).toBe('0');
  });
});

describe('a Redis at maxmemory (noeviction)', () => {
  let own: PrivateRedis;
  let full: Redis;
  beforeAll(async () => {
    own = await startPrivateRedis();
    full = own.admin;
  });
  afterAll(() => own.stop());

  it('refuses new claims but still releases claimed keys, so the retry after a refused enqueue is accepted', async () => {
    const onFull = new IdempotencyKeys(full, prefix);
    const batch = [fresh(), fresh(), fresh()];
    const token = randomUUID();
    expect(await onFull.claim(site, batch, token)).toEqual([true, true, true]);
    // Full: what an enqueue meets when the queue's backlog has filled Redis.
    await full.config('SET', 'maxmemory', '1');
    try {
      await expect(onFull.claim(site, [fresh()], randomUUID())).rejects.toThrow(/OOM/);
      expect(await onFull.release(site, batch, token)).toBe(3);
    } finally {
      await full.config('SET', 'maxmemory', '0');
    }
    expect(await onFull.claim(site, batch, randomUUID())).toEqual([true, true, true]);
  });
});
