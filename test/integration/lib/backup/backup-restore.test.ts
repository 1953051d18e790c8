// `tidemark backup` → `tidemark restore` onto an empty instance: every table's row count and a stats answer
// come back the same, the restored instance takes the backup's identity, and the commands refuse what would
// lose data (a non-empty target, a non-empty backup directory).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../../../cli/main';
import { CLICKHOUSE_DERIVED_TABLES, CLICKHOUSE_SOURCE_TABLES } from '../../../../lib/backup/tables';
import { selectRows } from '../../../../lib/clickhouse/client';
import { captureIo, cliEnv } from '../../../helpers/cli';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { client } from '../../../helpers/http';
import { type IngestFixture, ingestFixture, pageview, startTestWorker, waitForEvents } from '../../../helpers/ingest';

jest.setTimeout(120_000);

let source: TestContext;
let target: TestContext;
let fixture: IngestFixture;
let dir: string;

beforeAll(async () => {
  source = await createTestContext();
  target = await createTestContext();
  fixture = await ingestFixture(source);
  dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-backup-')), 'backup');
});
afterAll(async () => {
  await source.close();
  await target.close();
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

async function tableCounts(ctx: TestContext) {
  const { rows } = await ctx.pool.query<{ relname: string }>(
    `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' WHERE relkind = 'r' AND relname <> 'schema_migrations' ORDER BY relname`,
  );
  const pg: Record<string, number> = {};
  for (const { relname } of rows)
    pg[relname] = Number((await ctx.pool.query(`SELECT count(*) AS n FROM "${relname}"`)).rows[0].n);
  const ch: Record<string, number> = {};
  for (const table of CLICKHOUSE_SOURCE_TABLES) {
    ch[table] = Number((await selectRows<{ n: string }>(ctx.clickhouse, `SELECT count() AS n FROM ${table}`, {}))[0].n);
  }
  return { pg, ch };
}

async function statsAnswer(ctx: TestContext) {
  const call = client(ctx.baseUrl);
  const q = `site_id=${fixture.website.id}&period=30d`;
  const aggregate = await call(
    'GET',
    `/api/external/v1/stats/aggregate?${q}&metrics=visitors,pageviews,bounce_rate,visit_duration`,
    { apiKey: fixture.key },
  );
  const breakdown = await call(
    'GET',
    `/api/external/v1/stats/breakdown?${q}&property=event:page&metrics=visitors,pageviews`,
    { apiKey: fixture.key },
  );
  expect([aggregate.status, breakdown.status]).toEqual([200, 200]);
  return {
    aggregate: aggregate.body.results ?? aggregate.body.data,
    breakdown: breakdown.body.results ?? breakdown.body.data,
  };
}

it('every ClickHouse table is either backed up or rebuilt', async () => {
  const tables = await selectRows<{ name: string }>(
    source.clickhouse,
    "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine != 'MaterializedView'",
    {},
  );
  const known = new Set<string>([...CLICKHOUSE_SOURCE_TABLES, ...CLICKHOUSE_DERIVED_TABLES]);
  expect(tables.map((t) => t.name).filter((n) => !known.has(n))).toEqual([]);
});

it('round-trips every table and the same stats answer onto an empty instance', async () => {
  const worker = await startTestWorker(source);
  try {
    const events = Array.from({ length: 60 }, (_, i) =>
      pageview(
        { ts: Date.now() - i * 5 * 60_000 },
        {
          url: `https://shop.example.com/${['', 'pricing', 'docs', 'blog'][i % 4]}?utm_source=${i % 3 ? 'news' : 'ads'}`,
        },
      ),
    );
    expect((await fixture.post(events.slice(0, 30))).status).toBe(200);
    expect((await fixture.post(events.slice(30))).status).toBe(200);
    await waitForEvents(source, 60);
  } finally {
    await worker.stop();
  }
  expect(await main(['rollup'], captureIo(), cliEnv(source))).toBe(0);
  const before = await tableCounts(source);
  const answer = await statsAnswer(source);
  expect(before.ch.events).toBe(60);

  const out = captureIo();
  expect(await main(['backup', '--to', dir], out, cliEnv(source))).toBe(0);
  expect(out.stdout).toContain('clickhouse events: 60 rows');
  expect(out.stdout.at(-1)).toMatch(/^backup of instance [0-9a-f-]{36} written to /);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  expect(Object.fromEntries(manifest.postgres.map((t: { table: string; rows: number }) => [t.table, t.rows]))).toEqual(
    before.pg,
  );
  expect(fs.statSync(path.join(dir, 'manifest.json')).mode & 0o077).toBe(0);

  const restored = captureIo();
  const code = await main(['restore', '--from', dir], restored, cliEnv(target));
  expect(restored.stderr).toEqual([]);
  expect(code).toBe(0);
  expect(await tableCounts(target)).toEqual(before);
  expect(await statsAnswer(target)).toEqual(answer);
  const ids = async (ctx: TestContext) => (await ctx.pool.query('SELECT id FROM instance')).rows[0].id;
  expect(await ids(target)).toBe(await ids(source));
  expect(await selectRows(target.clickhouse, 'SELECT DISTINCT toString(id) AS id FROM tidemark_instance', {})).toEqual([
    { id: await ids(source) },
  ]);
});

it('refuses a target that is not empty and a backup directory that is not empty', async () => {
  const again = captureIo();
  expect(await main(['restore', '--from', dir], again, cliEnv(target))).toBe(1);
  expect(again.stderr[0]).toMatch(/^tidemark restore: this instance is not empty \(\d+ users, \d+ teams\)/);
  const into = captureIo();
  expect(await main(['backup', '--to', dir], into, cliEnv(source))).toBe(1);
  expect(into.stderr[0]).toMatch(/is not empty: back up into a new directory$/);
});
