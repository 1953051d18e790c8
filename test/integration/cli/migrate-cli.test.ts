import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { main } from '../../../cli/main';
import { getTeam } from '../../../lib/accounts/teams';
import { authenticateUser } from '../../../lib/accounts/users';
import { clickHouseTarget, createClickHouse } from '../../../lib/clickhouse/client';
import { createPool } from '../../../lib/db/pool';
import { PROJECT_ROOT } from '../../../lib/paths';
import { captureIo } from '../../helpers/cli';
import { dropDatabase, testConfig } from '../../helpers/context';

const run = promisify(execFile);
const BIN = path.join(PROJECT_ROOT, 'bin', 'tidemark.js');

const config = testConfig();
const env: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  DATABASE_URL: config.DATABASE_URL,
  CLICKHOUSE_URL: config.CLICKHOUSE_URL,
  CLICKHOUSE_PASSWORD: config.CLICKHOUSE_PASSWORD,
  CLICKHOUSE_DATABASE: config.CLICKHOUSE_DATABASE,
  REDIS_PREFIX: config.REDIS_PREFIX,
  DATA_DIR: config.DATA_DIR,
  JWT_SECRET: config.JWT_SECRET,
  LOG_LEVEL: 'silent',
};
const pool = createPool(config.DATABASE_URL, 2);
const clickhouse = createClickHouse(clickHouseTarget(config));

async function schemaSnapshot() {
  const pg = await pool.query(
    `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`,
  );
  const ch = await (
    await clickhouse.query({
      query: 'SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      format: 'JSONEachRow',
    })
  ).json();
  const applied = await pool.query('SELECT version, name FROM schema_migrations ORDER BY version');
  const chApplied = await (
    await clickhouse.query({
      query: 'SELECT version, name FROM schema_migrations ORDER BY version',
      format: 'JSONEachRow',
    })
  ).json();
  return { pg: pg.rows, ch, applied: applied.rows, chApplied };
}

afterAll(async () => {
  await pool.end();
  await clickhouse.command({ query: `DROP DATABASE IF EXISTS ${config.CLICKHOUSE_DATABASE}` });
  await clickhouse.close();
  await dropDatabase(config.DATABASE_URL);
});

describe('tidemark migrate', () => {
  it('two processes migrating a database that does not exist yet both succeed, applying each file once', async () => {
    const [a, b] = await Promise.all([
      run(process.execPath, [BIN, 'migrate'], { env }),
      run(process.execPath, [BIN, 'migrate'], { env }),
    ]);
    const outputs = [a.stdout, b.stdout];
    expect(outputs.filter((o) => o.includes('applied:'))).toHaveLength(1);
    expect(outputs.filter((o) => o.includes('up to date'))).toHaveLength(1);
    const snap = await schemaSnapshot();
    expect(snap.applied.map((r) => r.name)).toContain('001_accounts.sql');
    expect((snap.chApplied as { name: string }[]).map((r) => r.name)).toContain('001_events.sql');
    expect((snap.ch as { name: string }[]).map((t) => t.name)).toEqual(
      expect.arrayContaining(['events', 'schema_migrations']),
    );
  });

  it('running again changes nothing', async () => {
    const before = await schemaSnapshot();
    const { stdout } = await run(process.execPath, [BIN, 'migrate'], { env });
    expect(stdout.trim()).toBe('up to date');
    expect(await schemaSnapshot()).toEqual(before);
  });

  it('the events table carries partitioning, ordering, TTL and the dedup window', async () => {
    const [row] = (await (
      await clickhouse.query({
        query:
          "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
        format: 'JSONEachRow',
      })
    ).json()) as { q: string }[];
    expect(row.q).toMatch(/PARTITION BY toYYYYMM\(ts\)/);
    expect(row.q).toMatch(/ORDER BY \(website_id, toDate\(ts\)/);
    expect(row.q).toMatch(/TTL expire_at/);
    expect(row.q).toMatch(/non_replicated_deduplication_window = 10000/);
    expect(row.q).toMatch(/`country_code` LowCardinality\(String\)/);
  });

  it('the rollup tables keep visitor sketches in small granules, and the tables they replaced are gone', async () => {
    const names = (
      (await (
        await clickhouse.query({
          query: 'SELECT name FROM system.tables WHERE database = currentDatabase()',
          format: 'JSONEachRow',
        })
      ).json()) as { name: string }[]
    ).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['daily_rollups_v2', 'window_rollups_v2']));
    expect(names).not.toContain('daily_rollups');
    expect(names).not.toContain('window_rollups');
    // 1,000 rows of ~4 KB sketches: one default granule would hold them all; 8 KiB granules hold one or two.
    const w = '00000000-0000-4000-8000-00000000beef';
    await clickhouse.command({
      query: `INSERT INTO window_rollups_v2 (website_id, tz, first, last, dim, value, visitors, made_at)
        SELECT {w:UUID}, 'UTC', today() - 29, today(), 'page', toString(number % 1000), uniqState(toString(number)), now()
        FROM numbers(1000000) GROUP BY number % 1000`,
      query_params: { w },
    });
    const [parts] = (await (
      await clickhouse.query({
        query:
          "SELECT sum(rows) AS n, sum(marks) AS marks FROM system.parts WHERE database = currentDatabase() AND table = 'window_rollups_v2' AND active",
        format: 'JSONEachRow',
      })
    ).json()) as { n: string; marks: string }[];
    expect(Number(parts.n)).toBe(1000);
    expect(Number(parts.marks)).toBeGreaterThan(300);
    await clickhouse.command({ query: 'TRUNCATE TABLE window_rollups_v2' });
  });
});

describe('tidemark admin', () => {
  let teamId: string;

  it('--help works on every command', async () => {
    for (const argv of [
      ['--help'],
      ['migrate', '--help'],
      ['admin', 'plan', '--help'],
      ['admin', 'limits', '--help'],
      ['admin', 'create-user', '--help'],
      ['admin', 'reset-password', '--help'],
    ]) {
      const io = captureIo();
      expect(await main(argv, io, env)).toBe(0);
      expect(io.stdout.join('\n')).toMatch(/tidemark/);
    }
    const io = captureIo();
    expect(await main(['bogus'], io, env)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/unknown command/);
  });

  it('create-user makes a user with a team and prints a generated password that works', async () => {
    const io = captureIo();
    expect(await main(['admin', 'create-user', '--email', 'ops@example.com', '--name', 'Ops'], io, env)).toBe(0);
    const out = io.stdout.join('\n');
    teamId = /with team ([0-9a-f-]{36})/.exec(out)![1];
    const password = /password: (\S+)/.exec(out)![1];
    await expect(authenticateUser(pool, 'ops@example.com', password)).resolves.toMatchObject({
      email: 'ops@example.com',
    });
    const dup = captureIo();
    expect(await main(['admin', 'create-user', '--email', 'ops@example.com'], dup, env)).toBe(1);
    expect(dup.stderr.join('')).toMatch(/already exists/);
  });

  it('reset-password takes a password from stdin', async () => {
    const io = captureIo('brand-new-password\n');
    expect(await main(['admin', 'reset-password', '--email', 'ops@example.com', '--password-stdin'], io, env)).toBe(0);
    expect(io.stdout.join('')).not.toContain('brand-new-password');
    await expect(authenticateUser(pool, 'ops@example.com', 'brand-new-password')).resolves.toBeDefined();
    expect(await main(['admin', 'reset-password', '--email', 'nobody@example.com'], captureIo(), env)).toBe(2);
  });

  it('plan sets the plan, legacy names included', async () => {
    expect(await main(['admin', 'plan', '--team', teamId, '--plan', 'starter'], captureIo(), env)).toBe(0);
    expect(await getTeam(pool, teamId)).toMatchObject({ plan: 'pro', plan_label: 'starter' });
    expect(await main(['admin', 'plan', '--team', teamId, '--plan', 'scale'], captureIo(), env)).toBe(0);
    expect(await getTeam(pool, teamId)).toMatchObject({ plan: 'scale' });
    const bad = captureIo();
    expect(await main(['admin', 'plan', '--team', teamId, '--plan', 'platinum'], bad, env)).toBe(2);
    expect(bad.stderr.join('')).toMatch(/--plan/);
    expect(
      await main(
        ['admin', 'plan', '--team', '00000000-0000-4000-8000-000000000000', '--plan', 'pro'],
        captureIo(),
        env,
      ),
    ).toBe(1);
  });

  it('limits overrides per-minute, monthly and event limits, with unlimited and plan', async () => {
    expect(
      await main(['admin', 'limits', '--team', teamId, '--rpm', '500', '--monthly', 'unlimited'], captureIo(), env),
    ).toBe(0);
    expect((await getTeam(pool, teamId))!.limit_overrides).toEqual({ rpm: 500, monthly: null });
    expect(
      await main(['admin', 'limits', '--team', teamId, '--rpm', 'plan', '--events', '123'], captureIo(), env),
    ).toBe(0);
    expect((await getTeam(pool, teamId))!.limit_overrides).toEqual({ monthly: null, events: 123 });
    expect(await main(['admin', 'limits', '--team', teamId, '--rpm', '-5'], captureIo(), env)).toBe(2);
    expect(await main(['admin', 'limits', '--team', teamId], captureIo(), env)).toBe(2);
  });
});
