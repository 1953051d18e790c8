// The idempotency claim script against a real Redis: claims are fields of per-(website, day, shard) hashes
// holding "<token> <claim time>"; a live claim (under 24 h old) of another request is answered with its
// holder, and is taken over only when that holder is named void.
import { randomUUID } from 'node:crypto';
import {
  type ClaimResult,
  DEDUPE_TTL_SECONDS,
  IdempotencyKeys,
  shardOf,
} from '../../../../../lib/ingest/accept/dedupe';
import { createRedis, type Redis, waitReady } from '../../../../../lib/redis';
import { REDIS_URL, uniqueName } from '../../../../helpers/context';

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
const bucket = (day: number, key: string, p = prefix, website = site) =>
  `${p}:idem2:{${website}}:${day}:${shardOf(key)}`;

const C: ClaimResult = { kind: 'claimed' };
const R: ClaimResult = { kind: 'repeat' };
const held = (holder: string, ageSeconds = expect.any(Number) as number): ClaimResult => ({
  kind: 'held',
  holder,
  ageSeconds,
});

it('claims fresh keys in today’s hash with the token and time; a repeat in the batch is a repeat, a later one names its holder', async () => {
  const [a, b] = [fresh(), fresh()];
  const first = randomUUID();
  expect(await keys.claim(site, [a, b, a], first)).toEqual([C, C, R]);
  const now = await redisNow();
  const day = Math.floor(now / 86400);
  const [token, at] = (await redis.hget(bucket(day, a), a))!.split(' ');
  expect(token).toBe(first);
  expect(now - Number(at)).toBeLessThanOrEqual(1);
  // The hash lives until the end of tomorrow (UTC), when its claims are all older than 24 h.
  expect(await redis.expiretime(bucket(day, a))).toBe((day + 2) * 86400 + 60);
  const second = randomUUID();
  expect(await keys.claim(site, [b, fresh()], second)).toEqual([held(first), C]);
  // A held key leaves the first claim as it was; another website's same key is its own.
  expect((await redis.hget(bucket(day, b), b))!.split(' ')[0]).toBe(first);
  expect(await keys.claim(randomUUID(), [b], second)).toEqual([C]);
});

it('the window is exactly 24 h: a claim in yesterday’s hash counts while under 24 h old', async () => {
  const now = await redisNow();
  const day = Math.floor(now / 86400);
  const [young, old, edge] = [fresh(), fresh(), fresh()];
  await redis.hset(bucket(day - 1, young), young, `t1 ${now - DEDUPE_TTL_SECONDS + 30}`);
  await redis.hset(bucket(day - 1, old), old, `t2 ${now - DEDUPE_TTL_SECONDS - 1}`);
  await redis.hset(bucket(day - 2, edge), edge, `t3 ${now - 60}`); // never read: two days back
  const answer = await keys.claim(site, [young, old, edge], randomUUID());
  expect(answer).toEqual([held('t1'), C, C]);
  // The holder's age comes with it (Redis's clock may have ticked once since `now`).
  expect((answer[0] as { ageSeconds: number }).ageSeconds - (DEDUPE_TTL_SECONDS - 30)).toBeGreaterThanOrEqual(0);
  expect((answer[0] as { ageSeconds: number }).ageSeconds - (DEDUPE_TTL_SECONDS - 30)).toBeLessThanOrEqual(1);
});

it('a claim held by a request named void is taken over, by the first occurrence in the batch only; others stay held', async () => {
  const [a, b, c] = [fresh(), fresh(), fresh()];
  const dead = randomUUID();
  const alive = randomUUID();
  expect(await keys.claim(site, [a, b], dead)).toEqual([C, C]);
  expect(await keys.claim(site, [c], alive)).toEqual([C]);
  const retry = randomUUID();
  expect(await keys.claim(site, [a, a, b, c], retry, [dead])).toEqual([C, R, C, held(alive)]);
  const day = Math.floor((await redisNow()) / 86400);
  expect((await redis.hget(bucket(day, a), a))!.split(' ')[0]).toBe(retry);
  // Taken over: the next request meets the new holder, not the void one.
  expect(await keys.claim(site, [a], randomUUID(), [dead])).toEqual([held(retry)]);
  // A void holder's claim in yesterday's hash is taken over into today's.
  const y = fresh();
  await redis.hset(bucket(day - 1, y), y, `${dead} ${(await redisNow()) - 60}`);
  expect(await keys.claim(site, [y], retry, [dead])).toEqual([C]);
  expect((await redis.hget(bucket(day, y), y))!.split(' ')[0]).toBe(retry);
});

it('a malformed value is no live claim', async () => {
  const a = fresh();
  const day = Math.floor((await redisNow()) / 86400);
  await redis.hset(bucket(day, a), a, 'garbage');
  expect(await keys.claim(site, [a], randomUUID())).toEqual([C]);
});

it('a thousand keys across every shard: all claimed once, all held after, answers in input order', async () => {
  const batch = Array.from({ length: 1000 }, (_, i) => (i % 2 ? fresh() : `order-${i}`));
  expect(new Set(batch.map(shardOf)).size).toBe(16);
  const first = randomUUID();
  expect(await keys.claim(site, batch, first)).toEqual(batch.map(() => C));
  expect(await keys.claim(site, batch, randomUUID())).toEqual(batch.map(() => held(first)));
  // Old and new keys interleaved, over every shard, with a repeat of a new key: answers stay in input order.
  const mixed = batch
    .slice(0, 300)
    .flatMap((old, i) => (i % 3 === 0 ? [old, `new-${i}`, `new-${i}`] : [`new-${i}`, old]));
  const expected = batch.slice(0, 300).flatMap((_, i) => (i % 3 === 0 ? [held(first), C, R] : [C, held(first)]));
  expect(await keys.claim(site, mixed, randomUUID())).toEqual(expected);
});
