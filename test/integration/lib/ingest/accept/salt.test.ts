import { DailySalts } from '../../../../../lib/ingest/accept/salt';
import { createRedis } from '../../../../../lib/redis';
import { REDIS_URL, uniqueName } from '../../../../helpers/context';

const redis = createRedis(REDIS_URL, 'worker', 'salt-test');
const prefix = uniqueName('tmsalt');
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

it('one salt per UTC day, shared by every process, deleted 48 h after its day ends', async () => {
  const day = new Date().toISOString().slice(0, 10);
  const start = Date.parse(`${day}T00:00:00Z`);
  const noon = start + 12 * 3600_000;
  const a = new DailySalts(redis, prefix);
  const b = new DailySalts(redis, prefix);
  const salt = await a.forTime(noon);
  expect(salt).toMatch(/^[0-9a-f]{64}$/);
  expect(await b.forTime(start + 86_400_000 - 1)).toBe(salt);
  expect(await b.forTime(start + 86_400_000)).not.toBe(salt);
  const expireAt = await redis.call('EXPIRETIME', `${prefix}:salt:${day}`);
  expect(Number(expireAt)).toBe((start + 3 * 86_400_000) / 1000);
});
