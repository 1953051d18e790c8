// "200 = durably queued" needs the queue's Redis to keep an append-only file: the web role reads its
// persistence at start, refuses a volatile one in production (unless ALLOW_VOLATILE_QUEUE=true) and warns
// elsewhere. And a web role whose PORT is taken exits with one line naming PORT.
import net from 'node:net';
import pino from 'pino';
import { checkQueueDurability, readPersistence } from '../../../../lib/redis';
import { dropDatabase, testConfig } from '../../../helpers/context';
import { type PrivateRedis, startPrivateRedis } from '../../../helpers/privateRedis';
import { freePort } from '../../../helpers/store-process';
import { fatalLine, webStartFailure } from '../../../helpers/web-process';

let redis: PrivateRedis;
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(() => redis.stop());

/** A logger whose warnings are collected. */
function collecting() {
  const warnings: string[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) },
  );
  return { logger, warnings };
}

it('reads appendonly, appendfsync and save', async () => {
  await redis.admin.config('SET', 'appendonly', 'no');
  await redis.admin.config('SET', 'save', '3600 1');
  expect(await readPersistence(redis.admin)).toEqual({ appendonly: false, appendfsync: 'everysec', save: '3600 1' });
  await redis.admin.config('SET', 'save', '');
});

it('without an AOF: refused in production, allowed with ALLOW_VOLATILE_QUEUE, warned about in development', async () => {
  await redis.admin.config('SET', 'appendonly', 'no');
  const { logger, warnings } = collecting();
  const refused = await checkQueueDurability(redis.admin, { production: true, allowVolatile: false }, logger);
  expect(refused).toMatch(/REDIS_URL has no append-only file.*appendonly yes.*ALLOW_VOLATILE_QUEUE=true/);
  expect(warnings).toEqual([]);
  expect(await checkQueueDurability(redis.admin, { production: true, allowVolatile: true }, logger)).toBeUndefined();
  expect(await checkQueueDurability(redis.admin, { production: false, allowVolatile: false }, logger)).toBeUndefined();
  expect(warnings).toHaveLength(2);
  expect(warnings[0]).toMatch(/no append-only file/);
});

it('a separate dedupe Redis without an AOF is named in the warning, with what it costs', async () => {
  await redis.admin.config('SET', 'appendonly', 'no');
  const { logger, warnings } = collecting();
  expect(
    await checkQueueDurability(redis.admin, { production: false, allowVolatile: true }, logger, 'DEDUPE_REDIS_URL'),
  ).toBeUndefined();
  expect(warnings[0]).toMatch(/^DEDUPE_REDIS_URL has no append-only file.*idempotency claims are forgotten/);
});

it('with an AOF: accepted in production; appendfsync no is warned about', async () => {
  await redis.admin.config('SET', 'appendonly', 'yes');
  try {
    const { logger, warnings } = collecting();
    expect(await checkQueueDurability(redis.admin, { production: true, allowVolatile: false }, logger)).toBeUndefined();
    expect(warnings).toEqual([]);
    await redis.admin.config('SET', 'appendfsync', 'no');
    expect(await checkQueueDurability(redis.admin, { production: true, allowVolatile: false }, logger)).toBeUndefined();
    expect(warnings[0]).toMatch(/appendfsync is 'no'/);
  } finally {
    await redis.admin.config('SET', 'appendfsync', 'everysec');
    await redis.admin.config('SET', 'appendonly', 'no');
  }
});

describe('the web role process', () => {
  it('refuses to start in production on a Redis without an AOF, with one line', async () => {
    const config = testConfig({ REDIS_URL: redis.url });
    const { code, stderr } = await webStartFailure(config, await freePort(), { NODE_ENV: 'production' });
    await dropDatabase(config.DATABASE_URL);
    expect(code).not.toBe(0);
    const fatal = fatalLine(stderr);
    expect(fatal.role).toBe('web');
    expect(fatal.msg).toMatch(/^failed to start: REDIS_URL has no append-only file.*ALLOW_VOLATILE_QUEUE/);
  });

  it('exits with one line naming PORT when its port is taken', async () => {
    const taken = net.createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as net.AddressInfo).port)),
    );
    try {
      const config = testConfig({ REDIS_URL: redis.url });
      const { code, stderr } = await webStartFailure(config, port);
      await dropDatabase(config.DATABASE_URL);
      expect(code).not.toBe(0);
      expect(fatalLine(stderr)).toMatchObject({ role: 'web', msg: `failed to start: PORT ${port} is already in use` });
    } finally {
      taken.close();
    }
  });
});
