// The ingest queue's memory limit against a Redis of this file's own (its maxmemory and ACLs are changed
// here); the clock is the test's.
import pino from 'pino';
import { parseInfoMemory, QueueMemoryHeadroom, warnUnlessMemoryBounded } from '../../../../lib/queue/memoryHeadroom';
import { createRedis, type Redis, waitReady } from '../../../../lib/redis';
import { type PrivateRedis, startPrivateRedis } from '../../../helpers/privateRedis';

let own: PrivateRedis;
beforeAll(async () => {
  own = await startPrivateRedis();
});
afterAll(() => own.stop());

/** A logger whose lines the test reads. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (l: string) => lines.push(JSON.parse(l) as { level: number; msg: string }) },
  );
  return { logger, warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg) };
}

const infoCalls = async () => {
  const m = /^cmdstat_info:calls=(\d+).*rejected_calls=(\d+)/m.exec(await own.admin.info('commandstats'));
  return m ? Number(m[1]) + Number(m[2]) : 0;
};

it('reads used memory as Redis weighs it against maxmemory', async () => {
  await own.admin.config('SET', 'maxmemory', '123456789');
  try {
    const info = await own.admin.info('memory');
    const sample = parseInfoMemory(info);
    expect(sample.max).toBe(123456789);
    const used = Number(/^used_memory:(\d+)/m.exec(info)![1]);
    const notCounted = Number(/^mem_not_counted_for_evict:(\d+)/m.exec(info)![1]);
    expect(sample.used).toBe(used - notCounted);
    expect(sample.used).toBeGreaterThan(0);
  } finally {
    await own.admin.config('SET', 'maxmemory', '0');
  }
  expect(parseInfoMemory('used_memory:500\r\nmem_not_counted_for_evict:100\r\nmaxmemory:1000\r\n')).toEqual({
    used: 400,
    max: 1000,
  });
});

it('refuses at the limit, asks INFO at most once a second, and lets requests through once there is room', async () => {
  let now = 1_000_000;
  const { logger, warnings } = capture();
  const headroom = new QueueMemoryHeadroom(own.admin, 90, logger, () => now);
  await headroom.ensure();
  const used = parseInfoMemory(await own.admin.info('memory')).used;
  await own.admin.config('SET', 'maxmemory', String(Math.ceil(used / 0.95)));
  try {
    const before = await infoCalls();
    await Promise.all(Array.from({ length: 20 }, () => headroom.ensure())); // same second: the old sample
    expect((await infoCalls()) - before).toBe(1); // the probe of infoCalls itself
    now += 1_000;
    await expect(headroom.ensure()).rejects.toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      headers: { 'Retry-After': '10' },
    });
    await expect(headroom.ensure()).rejects.toMatchObject({ status: 503 });
    expect(warnings()).toEqual(['queue Redis nearly full: ingestion answers 503 until the writers drain it']);
  } finally {
    await own.admin.config('SET', 'maxmemory', '0');
  }
  now += 1_000;
  await headroom.ensure();
});

describe('a Redis that refuses INFO (ACL)', () => {
  let limited: Redis;
  beforeAll(async () => {
    await own.admin.acl('SETUSER', 'limited', 'on', 'nopass', '~*', '&*', '+@all');
    limited = createRedis(own.url.replace('redis://', 'redis://limited@'), 'request', 'tidemark-test');
    await waitReady(limited);
  });
  afterAll(() => limited.quit());

  it('tries INFO at most once a second, warns once, and stops trusting a full sample after 10 s', async () => {
    let now = 2_000_000;
    const { logger, warnings } = capture();
    const headroom = new QueueMemoryHeadroom(limited, 90, logger, () => now);
    await own.admin.acl('SETUSER', 'limited', '+info');
    const used = parseInfoMemory(await own.admin.info('memory')).used;
    await own.admin.config('SET', 'maxmemory', String(Math.ceil(used / 0.95)));
    try {
      await expect(headroom.ensure()).rejects.toMatchObject({ status: 503 }); // a full sample
      await own.admin.acl('SETUSER', 'limited', '-info');
      const before = await infoCalls();
      for (let i = 0; i < 10; i++) {
        now += 500; // two tries a second at most would be 5 in these 5 s
        await expect(headroom.ensure()).rejects.toMatchObject({ status: 503 });
      }
      expect((await infoCalls()) - before - 1).toBe(5);
      expect(warnings().filter((w) => w.includes('refuses INFO'))).toHaveLength(1);
      now += 5_001; // the full sample is over 10 s old: no longer trusted, the enqueue decides
      await headroom.ensure();
    } finally {
      await own.admin.config('SET', 'maxmemory', '0');
    }
  });
});

it('warns at start when the queue Redis has no maxmemory', async () => {
  const { logger, warnings } = capture();
  await warnUnlessMemoryBounded(own.admin, 90, logger);
  expect(warnings()).toEqual([expect.stringContaining('has no maxmemory')]);
  await own.admin.config('SET', 'maxmemory', '1gb');
  try {
    const quiet = capture();
    await warnUnlessMemoryBounded(own.admin, 90, quiet.logger);
    await warnUnlessMemoryBounded(own.admin, 100, quiet.logger);
    expect(quiet.warnings()).toEqual([]);
  } finally {
    await own.admin.config('SET', 'maxmemory', '0');
  }
});
