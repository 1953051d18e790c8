// The embedded store role, driven only through @clickhouse/client (createClickHouse), for every feature the
// project uses. A regression here means some role would behave differently on the embedded store than on a
// real ClickHouse server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ClickHouseError, TupleParam } from '@clickhouse/client';
import { type ClickHouseClient, createClickHouse } from '../../../../lib/clickhouse/client';
import { type StoreProcess, startStoreProcess } from '../../../helpers/store-process';

jest.setTimeout(120_000);

let dataDir: string;
let store: StoreProcess;
const clients: ClickHouseClient[] = [];

function client(database: string): ClickHouseClient {
  const c = createClickHouse({ url: store.url, database, password: store.password });
  clients.push(c);
  return c;
}

async function closeClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close()));
}

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

async function rejection(p: Promise<unknown>): Promise<ClickHouseError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ClickHouseError);
    return err as ClickHouseError;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-store-adapter-'));
  store = await startStoreProcess({ dataDir });
  const root = client('default');
  await root.command({ query: 'CREATE DATABASE IF NOT EXISTS adapter_a' });
  await root.command({ query: 'CREATE DATABASE IF NOT EXISTS adapter_b' });
});

afterAll(async () => {
  await closeClients();
  await store?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('store adapter', () => {
  test('ping', async () => {
    expect(await client('default').ping()).toEqual({ success: true });
  });

  test('command: CREATE TABLE with dedup window, ALTER, DROP', async () => {
    const db = client('adapter_a');
    await db.command({
      query: `CREATE TABLE ddl_t (id UInt64, name String) ENGINE = MergeTree ORDER BY id
              SETTINGS non_replicated_deduplication_window = 1000`,
    });
    await db.command({ query: 'ALTER TABLE ddl_t ADD COLUMN extra UInt8 DEFAULT 7' });
    const create = await db.query({ query: 'SHOW CREATE TABLE ddl_t', format: 'JSONEachRow' });
    const [row] = await create.json<{ statement: string }>();
    expect(row.statement).toContain('non_replicated_deduplication_window = 1000');
    expect(row.statement).toContain('`extra` UInt8 DEFAULT 7');
    await db.command({ query: 'DROP TABLE ddl_t' });
    const err = await rejection(db.query({ query: 'SELECT * FROM ddl_t' }));
    expect(err.code).toBe('60');
  });

  describe('formats', () => {
    const sql = 'SELECT number AS n, toString(number) AS s, toUInt64(number) * 1000000000000 AS big FROM numbers(3)';

    test('JSONEachRow .json(), 64-bit integers quoted as the client asks', async () => {
      const rs = await client('default').query({ query: sql, format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([
        { n: '0', s: '0', big: '0' },
        { n: '1', s: '1', big: '1000000000000' },
        { n: '2', s: '2', big: '2000000000000' },
      ]);
    });

    test('JSON: meta, data, rows, statistics', async () => {
      const rs = await client('default').query({ query: sql, format: 'JSON' });
      const body = await rs.json<{ n: string }>();
      expect(body.meta).toEqual([
        { name: 'n', type: 'UInt64' },
        { name: 's', type: 'String' },
        { name: 'big', type: 'UInt64' },
      ]);
      expect(body.data).toHaveLength(3);
      expect(body.rows).toBe(3);
      expect(body.statistics).toEqual(expect.objectContaining({ rows_read: 3 }));
    });

    test('JSONCompactEachRow', async () => {
      const rs = await client('default').query({ query: sql, format: 'JSONCompactEachRow' });
      expect(await rs.json()).toEqual([
        ['0', '0', '0'],
        ['1', '1', '1000000000000'],
        ['2', '2', '2000000000000'],
      ]);
    });

    test('TabSeparated and CSV .text()', async () => {
      const tsv = await client('default').query({ query: "SELECT 'a\tb' AS x, 1 AS y", format: 'TabSeparated' });
      expect(await tsv.text()).toBe('a\\tb\t1\n');
      const csv = await client('default').query({ query: "SELECT 'a,\"b' AS x, 1 AS y", format: 'CSV' });
      expect(await csv.text()).toBe('"a,""b",1\n');
    });

    test('.stream() of JSONEachRow rows', async () => {
      const rs = await client('default').query({
        query: 'SELECT number AS n FROM numbers(1000)',
        format: 'JSONEachRow',
      });
      let count = 0;
      let last = '';
      for await (const rows of rs.stream<{ n: string }>()) {
        for (const row of rows) {
          last = row.json().n;
          count++;
        }
      }
      expect(count).toBe(1000);
      expect(last).toBe('999');
    });

    test('X-ClickHouse-Format and summary headers', async () => {
      const rs = await client('default').query({ query: 'SELECT 1 AS x', format: 'JSONEachRow' });
      expect(rs.response_headers['x-clickhouse-format']).toBe('JSONEachRow');
      const summary = JSON.parse(String(rs.response_headers['x-clickhouse-summary'])) as Record<string, string>;
      expect(summary.read_rows).toBe('1');
      await rs.close();
    });
  });

  describe('bound query_params', () => {
    const nasty = [
      "it's",
      'back\\slash',
      'trailing\\',
      'new\nline\ttab\rcr',
      "'; DROP TABLE adapter_a.t; --",
      '{s:String}',
      "\\'",
      'ünïcödé ✓',
      '',
    ];

    test.each(nasty)('String %j comes back literally', async (value) => {
      const rs = await client('default').query({
        query: 'SELECT {v:String} AS v, length({v:String}) AS len',
        format: 'JSONEachRow',
        query_params: { v: value },
      });
      expect(await rs.json()).toEqual([{ v: value, len: String(Buffer.byteLength(value)) }]);
    });

    test('Array(String) with the same values comes back literally', async () => {
      const rs = await client('default').query({
        query: 'SELECT {a:Array(String)} AS a, length({a:Array(String)}) AS n',
        format: 'JSONEachRow',
        query_params: { a: nasty },
      });
      expect(await rs.json()).toEqual([{ a: nasty, n: String(nasty.length) }]);
    });

    test('Tuple and Map with escapes, Array(UInt64) beyond 2^53', async () => {
      const rs = await client('default').query({
        query:
          'SELECT {t:Tuple(String, UInt64)} AS t, {m:Map(String, String)} AS m, {u:Array(UInt64)} AS u, {q:Array(String)} AS q',
        format: 'JSONEachRow',
        query_params: {
          t: new TupleParam(["a'b\\", 5]),
          m: { "k'": 'v\\', x: '' },
          u: [BigInt('18446744073709551615'), 1],
          q: ['plain'],
        },
      });
      expect(await rs.json()).toEqual([
        { t: ["a'b\\", '5'], m: { "k'": 'v\\', x: '' }, u: ['18446744073709551615', '1'], q: ['plain'] },
      ]);
    });

    test('UInt64 beyond 2^53 and DateTime64(3) from a Date and a string', async () => {
      const rs = await client('default').query({
        query:
          "SELECT {u:UInt64} AS u, toString({d:DateTime64(3)}, 'UTC') AS d, toString({e:DateTime64(3, 'UTC')}) AS e",
        format: 'JSONEachRow',
        query_params: {
          u: '18446744073709551615',
          d: new Date('2024-05-06T07:08:09.123Z'),
          e: '2024-01-02 03:04:05.678',
        },
      });
      expect(await rs.json()).toEqual([
        { u: '18446744073709551615', d: '2024-05-06 07:08:09.123', e: '2024-01-02 03:04:05.678' },
      ]);
    });

    test('injection attempts in a WHERE stay values', async () => {
      const db = client('adapter_a');
      await db.command({ query: 'CREATE TABLE IF NOT EXISTS inj (s String) ENGINE = MergeTree ORDER BY s' });
      await db.insert({ table: 'inj', values: [{ s: 'safe' }], format: 'JSONEachRow' });
      const rs = await db.query({
        query: 'SELECT count() AS c FROM inj WHERE s = {s:String}',
        format: 'JSONEachRow',
        query_params: { s: "safe' OR '1'='1" },
      });
      expect(await rs.json()).toEqual([{ c: '0' }]);
    });
  });

  test('database option: two clients, concurrent, never see each other', async () => {
    const a = client('adapter_a');
    const b = client('adapter_b');
    await a.command({ query: 'CREATE TABLE iso (v String) ENGINE = MergeTree ORDER BY v' });
    await b.command({ query: 'CREATE TABLE iso (v String) ENGINE = MergeTree ORDER BY v' });
    await a.command({ query: 'CREATE TABLE only_a (v String) ENGINE = MergeTree ORDER BY v' });
    await a.insert({ table: 'iso', values: [{ v: 'A' }], format: 'JSONEachRow' });
    await b.insert({ table: 'iso', values: [{ v: 'B' }], format: 'JSONEachRow' });

    const reads = Array.from({ length: 60 }, async (_, i) => {
      const [c, expected] = i % 2 === 0 ? [a, 'A'] : [b, 'B'];
      const rs = await c.query({ query: 'SELECT v, currentDatabase() AS db FROM iso', format: 'JSONEachRow' });
      const rows = await rs.json<{ v: string; db: string }>();
      expect(rows).toEqual([{ v: expected, db: expected === 'A' ? 'adapter_a' : 'adapter_b' }]);
    });
    const writes = Array.from({ length: 10 }, (_, i) =>
      (i % 2 === 0 ? a : b).insert({ table: 'iso', values: [{ v: i % 2 === 0 ? 'A' : 'B' }], format: 'JSONEachRow' }),
    );
    await Promise.all([...reads, ...writes]);

    const countA = await (
      await a.query({ query: "SELECT countIf(v = 'A') AS a, countIf(v = 'B') AS b FROM iso", format: 'JSONEachRow' })
    ).json();
    expect(countA).toEqual([{ a: '6', b: '0' }]);
    const err = await rejection(b.query({ query: 'SELECT * FROM only_a' }));
    expect(err.code).toBe('60');
  });

  test('a missing database is UNKNOWN_DATABASE, like a real server', async () => {
    const err = await rejection(client('adapter_missing').query({ query: 'SELECT 1' }));
    expect(err.code).toBe('81');
  });

  describe('insert', () => {
    beforeAll(async () => {
      await client('adapter_a').command({
        query: `CREATE TABLE ins (id UInt64, name String, ts DateTime64(3, 'UTC'), tags Array(String), n Nullable(Int32))
                ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`,
      });
    });

    test('JSONEachRow with an explicit column list', async () => {
      const db = client('adapter_a');
      await db.insert({
        table: 'ins',
        values: [
          { id: 1, name: "o'brien\\x", ts: '2024-01-01 00:00:00.001', tags: ['a', "b'c"], n: null },
          { id: 2, name: 'two', ts: '2024-01-01 00:00:00.002', tags: [], n: -5 },
        ],
        columns: ['id', 'name', 'ts', 'tags', 'n'],
        format: 'JSONEachRow',
      });
      const rs = await db.query({ query: 'SELECT * FROM ins ORDER BY id', format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([
        { id: '1', name: "o'brien\\x", ts: '2024-01-01 00:00:00.001', tags: ['a', "b'c"], n: null },
        { id: '2', name: 'two', ts: '2024-01-01 00:00:00.002', tags: [], n: -5 },
      ]);
    });

    test('insert_deduplication_token: same token stored once, a new token stored again, no leak', async () => {
      const db = client('adapter_a');
      await db.command({
        query:
          'CREATE TABLE dedup (id UInt64) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000',
      });
      const rows = [{ id: 1 }, { id: 2 }];
      const count = async (): Promise<string> =>
        (
          await (
            await db.query({ query: 'SELECT count() AS c FROM dedup', format: 'JSONEachRow' })
          ).json<{ c: string }>()
        )[0].c;
      await db.insert({
        table: 'dedup',
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: 'x' },
      });
      await db.insert({
        table: 'dedup',
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: 'x' },
      });
      expect(await count()).toBe('2');
      await db.insert({
        table: 'dedup',
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: 'y' },
      });
      expect(await count()).toBe('4');
      // The token must not stick: different data without a token is stored.
      await db.insert({ table: 'dedup', values: [{ id: 3 }], format: 'JSONEachRow' });
      await db.insert({ table: 'dedup', values: [{ id: 4 }], format: 'JSONEachRow' });
      expect(await count()).toBe('6');
    });

    test('a bad row rejects with the engine error', async () => {
      const err = await rejection(
        client('adapter_a').insert({ table: 'ins', values: [{ id: 'not a number' }], format: 'JSONEachRow' }),
      );
      expect(err.code).toMatch(/^\d+$/);
      expect(err.type).toMatch(/^CANNOT_PARSE/);
    });

    test('exec with a raw body, a db-qualified table and a column list', async () => {
      const body = Readable.from([Buffer.from('{"id":20,"name":"raw"}\n{"id":21,"name":"raw"}\n')], {
        objectMode: false,
      });
      const res = await client('default').exec({
        query: 'INSERT INTO adapter_a.ins (id, name) FORMAT JSONEachRow',
        values: body,
      });
      await streamText(res.stream);
      expect(res.summary?.written_rows).toBe('2');
    });

    describe('binary formats (read by the engine from a file)', () => {
      // RowBinary of (id UInt64, name String): little-endian id, LEB128 length, UTF-8 bytes.
      const rowBinary = (rows: Array<[number, string]>) =>
        Buffer.concat(
          rows.flatMap(([id, name]) => {
            const idBytes = Buffer.alloc(8);
            idBytes.writeBigUInt64LE(BigInt(id));
            const text = Buffer.from(name);
            return [idBytes, Buffer.from([text.length]), text];
          }),
        );
      const execBody = (query: string, body: Buffer, settings: Record<string, string> = {}) =>
        client('default').exec({ query, values: Readable.from([body]), clickhouse_settings: settings });
      const names = async (from: number, to: number) =>
        await (
          await client('adapter_a').query({
            query: `SELECT id, name FROM ins WHERE id BETWEEN ${from} AND ${to} ORDER BY id`,
            format: 'JSONEachRow',
          })
        ).json<{ id: string; name: string }>();

      test('RowBinary with a column list takes the table’s types, and a token dedupes it', async () => {
        const body = rowBinary([
          [40, 'bin'],
          [41, 'ümlaut €'],
        ]);
        const res = await execBody('INSERT INTO adapter_a.ins (id, name) FORMAT RowBinary', body, {
          insert_deduplication_token: 'rb',
        });
        await streamText(res.stream);
        expect(res.summary?.written_bytes).toBe(String(body.length));
        await streamText(
          (
            await execBody('INSERT INTO adapter_a.ins (id, name) FORMAT RowBinary', body, {
              insert_deduplication_token: 'rb',
            })
          ).stream,
        );
        expect(await names(40, 49)).toEqual([
          { id: '40', name: 'bin' },
          { id: '41', name: 'ümlaut €' },
        ]);
        expect(fs.readdirSync(path.join(dataDir, 'clickhouse', 'insert-files'))).toEqual([]);
      });

      test('Native carries its own types', async () => {
        const native = await (
          await client('default').exec({ query: "SELECT toUInt64(50) AS id, 'native' AS name FORMAT Native" })
        ).stream;
        const chunks: Buffer[] = [];
        for await (const c of native) chunks.push(c as Buffer);
        await streamText(
          (await execBody('INSERT INTO adapter_a.ins (id, name) FORMAT Native', Buffer.concat(chunks))).stream,
        );
        expect(await names(50, 50)).toEqual([{ id: '50', name: 'native' }]);
      });

      test('a truncated body, an unknown table or column is refused with the engine’s error and stores nothing', async () => {
        const body = rowBinary([
          [60, 'whole'],
          [61, 'cut'],
        ]);
        const cut = await rejection(
          execBody('INSERT INTO adapter_a.ins (id, name) FORMAT RowBinary', body.subarray(0, body.length - 1)),
        );
        expect(cut.type).toMatch(/^CANNOT_READ_ALL_DATA/);
        expect(await names(60, 61)).toEqual([]);
        expect((await rejection(execBody('INSERT INTO adapter_a.nope (id) FORMAT RowBinary', body))).type).toBe(
          'UNKNOWN_TABLE',
        );
        expect((await rejection(execBody('INSERT INTO adapter_a.ins (id, nope) FORMAT RowBinary', body))).type).toBe(
          'NO_SUCH_COLUMN_IN_TABLE',
        );
      });

      test('a table altered after a RowBinary insert is read with its new types', async () => {
        const db = client('adapter_a');
        await db.command({ query: 'CREATE TABLE alt (id UInt64, name String) ENGINE = MergeTree ORDER BY id' });
        await streamText((await execBody('INSERT INTO adapter_a.alt FORMAT RowBinary', rowBinary([[1, 'a']]))).stream);
        await db.command({ query: 'ALTER TABLE alt ADD COLUMN n UInt8' });
        await streamText(
          (
            await execBody(
              'INSERT INTO adapter_a.alt FORMAT RowBinary',
              Buffer.concat([rowBinary([[2, 'b']]), Buffer.from([7])]),
            )
          ).stream,
        );
        const rs = await db.query({ query: 'SELECT id, name, n FROM alt ORDER BY id', format: 'JSONEachRow' });
        expect(await rs.json()).toEqual([
          { id: '1', name: 'a', n: 0 },
          { id: '2', name: 'b', n: 7 },
        ]);
      });
    });

    test('columns: { except } (not a plain column list) goes through SQL and still works', async () => {
      const db = client('adapter_a');
      await db.insert({
        table: 'ins',
        values: [[30, 'except', '2024-01-01 00:00:00.000', ['x']]],
        columns: { except: ['n'] },
        format: 'JSONCompactEachRow',
      });
      const rs = await db.query({
        query: "SELECT id, n FROM ins WHERE name IN ('raw', 'except') ORDER BY id",
        format: 'JSONEachRow',
      });
      expect(await rs.json()).toEqual([
        { id: '20', n: null },
        { id: '21', n: null },
        { id: '30', n: null },
      ]);
    });

    test('100k rows of ~20 columns', async () => {
      const db = client('adapter_a');
      const cols = Array.from({ length: 18 }, (_, i) => `c${i} String`).join(', ');
      await db.command({
        query: `CREATE TABLE big (id UInt64, ts DateTime64(3, 'UTC'), ${cols}) ENGINE = MergeTree ORDER BY id`,
      });
      const rows = Array.from({ length: 100_000 }, (_, i) => {
        const row: Record<string, unknown> = { id: i, ts: 1_700_000_000_000 + i };
        for (let c = 0; c < 18; c++) row[`c${c}`] = `value-${c}-${i % 97}`;
        return row;
      });
      const res = await db.insert({ table: 'big', values: rows, format: 'JSONEachRow' });
      expect(res.summary?.written_rows).toBe('100000');
      const rs = await db.query({ query: 'SELECT count() AS c, uniqExact(id) AS u FROM big', format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ c: '100000', u: '100000' }]);
    });
  });

  test('exec: raw stream of a statement with its own FORMAT', async () => {
    const res = await client('default').exec({ query: 'SELECT number FROM numbers(3) FORMAT TSV' });
    expect(await streamText(res.stream)).toBe('0\n1\n2\n');
  });

  test('per-query clickhouse_settings on a SELECT apply to that query only', async () => {
    const db = client('default');
    const err = await rejection(
      db.query({
        query: 'SELECT number FROM numbers(100)',
        format: 'JSONEachRow',
        clickhouse_settings: { max_result_rows: '10', result_overflow_mode: 'throw' },
      }),
    );
    expect(err.code).toBe('396');
    const rs = await db.query({ query: 'SELECT number FROM numbers(100)', format: 'JSONEachRow' });
    expect(await rs.json()).toHaveLength(100);
    const quoted = await db.query({
      query: 'SELECT toUInt64(1) AS x',
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    expect(await quoted.json()).toEqual([{ x: 1 }]);
  });

  test('settings on a non-SELECT statement apply and do not leak', async () => {
    const db = client('adapter_a');
    await db.command({ query: 'CREATE TABLE mut (id UInt64) ENGINE = MergeTree ORDER BY id' });
    const fill = 'INSERT INTO mut SELECT number FROM numbers(100)';
    const err = await rejection(db.command({ query: fill, clickhouse_settings: { max_rows_to_read: '5' } }));
    expect(err.type).toBe('TOO_MANY_ROWS');
    await db.command({ query: fill });
    await db.command({ query: 'ALTER TABLE mut DELETE WHERE id >= 1', clickhouse_settings: { mutations_sync: '2' } });
    const rs = await db.query({ query: 'SELECT id FROM mut', format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ id: '0' }]);
    const s = await db.query({ query: "SELECT toString(getSetting('max_rows_to_read')) AS v", format: 'JSONEachRow' });
    expect(await s.json()).toEqual([{ v: '0' }]);
  });

  test('USE, SET and multi-statements cannot change the shared connection', async () => {
    const a = client('adapter_a');
    await a.command({ query: 'USE adapter_b' });
    await a.command({ query: 'SET max_result_rows = 1' });
    const rs = await a.query({
      query: 'SELECT currentDatabase() AS db, count() AS n FROM (SELECT number FROM numbers(5))',
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([{ db: 'adapter_a', n: '5' }]);
    const rows = await (await a.query({ query: 'SELECT number FROM numbers(5)', format: 'JSONEachRow' })).json();
    expect(rows).toHaveLength(5);
    const err = await rejection(a.command({ query: 'SELECT 1; USE adapter_b' }));
    expect(err.code).toBe('62');
    const semi = await a.query({ query: "SELECT ';' AS x -- trailing; comment", format: 'JSONEachRow' });
    expect(await semi.json()).toEqual([{ x: ';' }]);
  });

  test('query_id is honoured and echoed', async () => {
    const rs = await client('default').query({
      query: 'SELECT 1',
      format: 'JSONEachRow',
      query_id: 'adapter-test-qid-1',
    });
    expect(rs.query_id).toBe('adapter-test-qid-1');
    expect(rs.response_headers['x-clickhouse-query-id']).toBe('adapter-test-qid-1');
    await rs.close();
  });

  describe('errors', () => {
    test('syntax error → ClickHouseError 62 SYNTAX_ERROR', async () => {
      const err = await rejection(client('default').query({ query: 'SELEC 1', format: 'JSONEachRow' }));
      expect(err.code).toBe('62');
      expect(err.type).toBe('SYNTAX_ERROR');
    });

    test('unknown table → ClickHouseError 60 UNKNOWN_TABLE', async () => {
      const err = await rejection(
        client('adapter_a').query({ query: 'SELECT * FROM no_such_table', format: 'JSONEachRow' }),
      );
      expect(err.code).toBe('60');
      expect(err.type).toBe('UNKNOWN_TABLE');
    });

    test('wire shape: non-2xx status, X-ClickHouse-Exception-Code, `Code: N. DB::Exception: … (TYPE)` body', async () => {
      const res = await client('default').exec({ query: 'SELECT * FROM no_such_table', ignore_error_response: true });
      expect(res.http_status_code).toBeGreaterThanOrEqual(400);
      expect(res.response_headers['x-clickhouse-exception-code']).toBe('60');
      expect(await streamText(res.stream)).toMatch(/^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\)/s);
    });

    test('a failed query leaves the store healthy', async () => {
      const rs = await client('default').query({ query: 'SELECT 42 AS x', format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ x: 42 }]);
    });
  });

  test('20 concurrent queries all succeed', async () => {
    const db = client('default');
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const rs = await db.query({
          query: 'SELECT {i:UInt32} AS i, sum(number) AS s FROM numbers(100000)',
          format: 'JSONEachRow',
          query_params: { i },
        });
        return rs.json<{ i: number; s: string }>();
      }),
    );
    for (const [i, rows] of results.entries()) expect(rows).toEqual([{ i, s: '4999950000' }]);
  });

  test('compressed requests and responses (client compression on) work', async () => {
    const { createClient } = await import('@clickhouse/client');
    const c = createClient({
      url: store.url,
      database: 'adapter_a',
      password: store.password,
      compression: { request: true, response: true },
    });
    try {
      await c.insert({ table: 'iso', values: [{ v: 'Z' }], format: 'JSONEachRow' });
      const rs = await c.query({ query: "SELECT count() AS n FROM iso WHERE v = 'Z'", format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ n: 1 }]);
    } finally {
      await c.close();
    }
  });

  test('data persists across a store restart on the same data dir', async () => {
    await closeClients();
    await store.stop();
    store = await startStoreProcess({ dataDir });
    const rs = await client('adapter_a').query({ query: 'SELECT count() AS c FROM big', format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ c: '100000' }]);
    const iso = await client('adapter_b').query({ query: 'SELECT DISTINCT v FROM iso', format: 'JSONEachRow' });
    expect(await iso.json()).toEqual([{ v: 'B' }]);
  });
});
