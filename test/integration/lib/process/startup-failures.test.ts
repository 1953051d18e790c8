// What an operator sees when a role cannot start: one JSON line on stderr naming the setting to check (with
// the address, password masked), after bounded retries for what may still be coming up; a role pointed at
// another instance's store refuses before writing into it; and the supervisor gives up on a child that keeps
// failing to start instead of crash-looping.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createClickHouse, selectRows } from '../../../../lib/clickhouse/client';
import { migrate } from '../../../../lib/db/migrate';
import { createPool, ensureDatabase } from '../../../../lib/db/pool';
import { createLogger } from '../../../../lib/log';
import { dropDatabase, PG_BASE, testConfig, uniqueName } from '../../../helpers/context';
import { freePort } from '../../../helpers/store-process';
import { allJsonLines, fatalLine, roleEnv, roleStartFailure, webStartFailure } from '../../../helpers/web-process';

const quickly = { STARTUP_WAIT_SECONDS: '1' };

describe('a role that cannot reach what it needs', () => {
  it('names DATABASE_URL, masks its password, retries with JSON lines, then exits non-zero', async () => {
    const closed = await freePort();
    const config = testConfig();
    const url = `postgres://tidemark:hunter2secret@127.0.0.1:${closed}/tidemark`;
    const { code, stderr, stdout } = await webStartFailure(config, await freePort(), { ...quickly, DATABASE_URL: url });
    expect(code).toBe(1);
    const fatal = fatalLine(stderr);
    expect(fatal).toMatchObject({ role: 'web', setting: 'DATABASE_URL', level: 60 });
    expect(fatal.msg).toContain(`PostgreSQL at postgres://tidemark:***@127.0.0.1:${closed}/tidemark not reachable`);
    expect(fatal.msg).toContain('ECONNREFUSED');
    expect(stderr + stdout).not.toContain('hunter2secret');
    // Retried before giving up, each try a JSON warn line.
    expect(stdout).toContain('"msg":"PostgreSQL not reachable yet"');
    expect(allJsonLines(stdout)).toBe(true);
  });

  it('names REDIS_URL (the worker and the clock too)', async () => {
    const closed = await freePort();
    const config = testConfig();
    try {
      const env = {
        ...roleEnv(config, await freePort()),
        ...quickly,
        REDIS_URL: `redis://:pw-not-shown@127.0.0.1:${closed}`,
      };
      for (const [role, entry] of [
        ['web', 'api/server.js'],
        ['worker', 'workers/main.js'],
        ['clock', 'jobs/clock.js'],
      ]) {
        const { code, stderr, stdout } = await roleStartFailure(entry, env);
        expect(code).toBe(1);
        const fatal = fatalLine(stderr);
        expect(fatal).toMatchObject({ role, setting: 'REDIS_URL' });
        expect(fatal.msg).toContain(`Redis at redis://:***@127.0.0.1:${closed} not reachable`);
        expect(stderr + stdout).not.toContain('pw-not-shown');
        expect(allJsonLines(stdout)).toBe(true);
      }
    } finally {
      await dropDatabase(config.DATABASE_URL);
    }
  });

  it('names CLICKHOUSE_PASSWORD when the store refuses the credential, at once and without retrying', async () => {
    const config = testConfig();
    try {
      const started = Date.now();
      const { code, stderr, stdout } = await webStartFailure(config, await freePort(), {
        STARTUP_WAIT_SECONDS: '20',
        CLICKHOUSE_PASSWORD: 'not-the-credential',
      });
      expect(code).toBe(1);
      expect(fatalLine(stderr)).toMatchObject({ role: 'web', setting: 'CLICKHOUSE_PASSWORD' });
      expect(stdout).not.toContain('not reachable yet');
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await dropDatabase(config.DATABASE_URL);
    }
  });

  it('names STORE_PORT when the embedded store on that port is another instance’s (its credential differs)', async () => {
    const config = testConfig();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-other-'));
    try {
      const { code, stderr } = await webStartFailure(config, await freePort(), {
        ...quickly,
        CLICKHOUSE_URL: '',
        CLICKHOUSE_PASSWORD: '',
        STORE_PORT: new URL(config.CLICKHOUSE_URL).port,
        DATA_DIR: dataDir,
      });
      expect(code).toBe(1);
      const fatal = fatalLine(stderr);
      expect(fatal.setting).toBe('STORE_PORT');
      expect(fatal.msg).toMatch(
        /STORE_PORT: the store at http:\/\/127\.0\.0\.1:\d+ refused this instance's credential/,
      );
    } finally {
      await dropDatabase(config.DATABASE_URL);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('one store per instance', () => {
  it('refuses a ClickHouse database another instance claimed, before creating anything in it', async () => {
    const first = testConfig();
    await ensureDatabase(first.DATABASE_URL);
    const pool = createPool(first.DATABASE_URL);
    const clickhouse = createClickHouse({
      url: first.CLICKHOUSE_URL,
      database: first.CLICKHOUSE_DATABASE,
      password: first.CLICKHOUSE_PASSWORD,
    });
    const second = testConfig({ CLICKHOUSE_DATABASE: first.CLICKHOUSE_DATABASE });
    try {
      await migrate({
        pool,
        clickhouse,
        clickhouseTarget: {
          url: first.CLICKHOUSE_URL,
          database: first.CLICKHOUSE_DATABASE,
          password: first.CLICKHOUSE_PASSWORD,
        },
        logger: createLogger('silent', 'test'),
      });
      const tablesBefore = await selectRows<{ name: string }>(
        clickhouse,
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
        {},
      );
      const firstId = (await pool.query<{ id: string }>('SELECT id FROM instance')).rows[0].id;

      const { code, stderr } = await webStartFailure(second, await freePort(), quickly);
      expect(code).toBe(1);
      const fatal = fatalLine(stderr);
      expect(fatal.setting).toBe('CLICKHOUSE_URL');
      expect(fatal.msg).toContain(`ClickHouse database "${first.CLICKHOUSE_DATABASE}"`);
      expect(fatal.msg).toContain(`belongs to another Tidemark instance (${firstId})`);

      const tablesAfter = await selectRows<{ name: string }>(
        clickhouse,
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
        {},
      );
      expect(tablesAfter).toEqual(tablesBefore);
      const owners = await selectRows<{ id: string }>(
        clickhouse,
        'SELECT DISTINCT toString(id) AS id FROM tidemark_instance',
        {},
      );
      expect(owners).toEqual([{ id: firstId }]);
    } finally {
      await pool.end();
      await clickhouse.close();
      const admin = createClickHouse({
        url: first.CLICKHOUSE_URL,
        database: 'default',
        password: first.CLICKHOUSE_PASSWORD,
      });
      await admin.command({ query: `DROP DATABASE IF EXISTS ${first.CLICKHOUSE_DATABASE}` });
      await admin.close();
      await dropDatabase(first.DATABASE_URL);
      await dropDatabase(second.DATABASE_URL);
    }
  });
});

describe('the supervisor', () => {
  it('gives up on a role that fails to start five times in a row, with its reason, and starts nothing after it', async () => {
    const taken = net.createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as net.AddressInfo).port)),
    );
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-sup-'));
    const database = uniqueName('tidemark_test');
    try {
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'test',
        DATA_DIR: dataDir,
        STORE_PORT: String(port),
        PORT: String(await freePort()),
        DATABASE_URL: `${PG_BASE}/${database}`,
        REDIS_PREFIX: uniqueName('tmtest'),
        BACKGROUND_PRIORITY: 'normal',
      };
      const { code, stdout, stderr } = await roleStartFailure(
        path.join('lib', 'process', 'supervisor.js'),
        env,
        60_000,
      );
      expect(code).toBe(1);
      const lines = `${stdout}\n${stderr}`.split('\n').filter((l) => l.trim());
      expect(allJsonLines(lines.join('\n'))).toBe(true);
      const parsed = lines.map((l) => JSON.parse(l) as { role: string; msg: string; child?: string; reason?: string });
      const giveUp = parsed.find((l) => l.role === 'supervisor' && /giving up/.test(l.msg));
      expect(giveUp).toMatchObject({ child: 'store', reason: `failed to start: STORE_PORT ${port} is already in use` });
      expect(giveUp?.msg).toBe('store failed to start 5 times in a row; giving up');
      expect(parsed.filter((l) => l.role === 'store' && l.msg.startsWith('failed to start'))).toHaveLength(5);
      expect(parsed.some((l) => l.child === 'web')).toBe(false);
    } finally {
      taken.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase(`${PG_BASE}/${database}`);
    }
  }, 90_000);
});
