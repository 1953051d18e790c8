// The embedded store's refusal matrix, against a real store process: who may run SQL at all, from where, what
// GET may do, and that no statement reaches a file or a URL outside the store's own insert files.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ClickHouseError } from '@clickhouse/client';
import { createClickHouse } from '../../../../lib/clickhouse/client';
import { PROJECT_ROOT } from '../../../../lib/paths';
import { type StoreProcess, spawnStore, startStoreProcess } from '../../../helpers/store-process';
import { fatalLine } from '../../../helpers/web-process';

jest.setTimeout(120_000);

let dataDir: string;
let store: StoreProcess;
let secrets: { credential: string; jwt: string };

interface Reply {
  status: number;
  code: string | undefined;
  text: string;
}

/** One raw HTTP request (not fetch(): Node's fetch sends Sec-Fetch-Mode itself). */
function send(opts: {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  auth?: string | null;
}): Promise<Reply> {
  const auth = opts.auth === undefined ? `default:${store.password}` : opts.auth;
  const headers: Record<string, string> = {
    ...(auth === null ? {} : { Authorization: `Basic ${Buffer.from(auth).toString('base64')}` }),
    ...(opts.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(opts.body)) }),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request(`${store.url}${opts.path ?? '/'}`, { method: opts.method ?? 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          code: res.headers['x-clickhouse-exception-code'] as string | undefined,
          text,
        }),
      );
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const post = (sql: string, headers: Record<string, string> = {}) => send({ body: sql, headers });
const get = (sql: string) => send({ method: 'GET', path: `/?query=${encodeURIComponent(sql)}` });

async function tableExists(name: string): Promise<boolean> {
  const r = await post(`EXISTS TABLE sec.${name}`);
  expect(r.status).toBe(200);
  return r.text.trim() === '1';
}

/** Refused with `code`, and nothing of either secret or /etc/passwd in the answer. */
function expectRefused(r: Reply, code: number): void {
  expect({ status: r.status, code: r.code }).toEqual({ status: 403, code: String(code) });
  expect(r.text).toMatch(new RegExp(`^Code: ${code}\\. DB::Exception: `));
  expect(r.text).not.toContain(secrets.credential);
  expect(r.text).not.toContain(secrets.jwt);
  expect(r.text).not.toContain('root:x:0:0');
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-store-security-'));
  store = await startStoreProcess({ dataDir });
  secrets = {
    credential: fs.readFileSync(path.join(dataDir, 'store-credential'), 'utf8').trim(),
    // The store role loads the configuration like every role, so its DATA_DIR holds the JWT secret too.
    jwt: fs.readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim(),
  };
  expect((await post('CREATE DATABASE IF NOT EXISTS sec')).status).toBe(200);
  expect((await post('CREATE TABLE IF NOT EXISTS sec.t (s String) ENGINE = MergeTree ORDER BY s')).status).toBe(200);
});

afterAll(async () => {
  await store?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('credential', () => {
  test('is generated once under DATA_DIR, readable by its owner only, and kept across restarts', async () => {
    const file = path.join(dataDir, 'store-credential');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(secrets.credential).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await store.stop();
    store = await startStoreProcess({ dataDir });
    expect(store.password).toBe(secrets.credential);
  });

  test('/ping answers without it and says nothing else', async () => {
    const r = await send({ method: 'GET', path: '/ping', auth: null });
    expect({ status: r.status, text: r.text }).toEqual({ status: 200, text: 'Ok.\n' });
  });

  test('no credential, a wrong one, or the right one for another user: 516 AUTHENTICATION_FAILED, nothing runs', async () => {
    for (const auth of [null, 'default:', `default:${secrets.credential}x`, `admin:${secrets.credential}`, 'default']) {
      const r = await send({ auth, body: 'CREATE TABLE sec.by_stranger (s String) ENGINE = MergeTree ORDER BY s' });
      expectRefused(r, 516);
      expect(r.text).toMatch(/\(AUTHENTICATION_FAILED\)\n$/);
    }
    expectRefused(await send({ auth: null, method: 'GET', path: '/?query=SELECT%201' }), 516);
    expectRefused(await send({ auth: null, path: '/replicas_status' }), 516);
    expect(await tableExists('by_stranger')).toBe(false);
  });

  test('@clickhouse/client without it gets ClickHouseError 516; with it (Basic auth or X-ClickHouse-Key) runs', async () => {
    const stranger = createClickHouse({ url: store.url, database: 'default' });
    try {
      const err = await stranger.query({ query: 'SELECT 1' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ClickHouseError);
      expect((err as ClickHouseError).code).toBe('516');
      expect((await stranger.ping()).success).toBe(true);
    } finally {
      await stranger.close();
    }
    const member = createClickHouse({ url: store.url, database: 'default', password: store.password });
    try {
      expect(await (await member.query({ query: 'SELECT 1 AS x', format: 'JSONEachRow' })).json()).toEqual([{ x: 1 }]);
    } finally {
      await member.close();
    }
    const keyed = await send({
      auth: null,
      headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': store.password },
      body: 'SELECT 1',
    });
    expect({ status: keyed.status, text: keyed.text }).toEqual({ status: 200, text: '1\n' });
  });
});

describe('web browsers', () => {
  test.each([
    ['Origin', 'https://evil.example'],
    ['Origin', 'null'],
    ['Sec-Fetch-Site', 'cross-site'],
    ['Sec-Fetch-Mode', 'no-cors'],
    ['Sec-Fetch-Dest', 'empty'],
    ['Sec-Fetch-User', '?1'],
  ])('a request with %s: %s is refused before anything runs, even with the credential', async (header, value) => {
    const table = `from_browser_${header.replace(/-/g, '_').toLowerCase()}`;
    expectRefused(
      await post(`CREATE TABLE sec.${table} (s String) ENGINE = MergeTree ORDER BY s`, { [header]: value }),
      497,
    );
    expect(await tableExists(table)).toBe(false);
    expectRefused(await send({ method: 'GET', path: '/ping', auth: null, headers: { [header]: value } }), 497);
  });
});

describe('GET is read-only', () => {
  test('reads run on a connection the engine holds read-only; POST is not', async () => {
    expect((await get("SELECT getSetting('readonly')")).text).toBe('2\n');
    expect((await post("SELECT getSetting('readonly')")).text).toBe('0\n');
    expect((await get('SELECT count() FROM sec.t')).status).toBe(200);
  });

  test.each([
    'CREATE TABLE sec.by_get (s String) ENGINE = MergeTree ORDER BY s',
    "INSERT INTO sec.t VALUES ('by_get')",
    'DROP TABLE sec.t',
    'ALTER TABLE sec.t DELETE WHERE 1',
    'TRUNCATE TABLE sec.t',
    "INSERT INTO FUNCTION null('s String') SELECT 'x'",
  ])('%s over GET → 164 READONLY', async (sql) => {
    expectRefused(await get(sql), 164);
  });

  test('a multi-statement over GET is refused whole', async () => {
    for (const sql of [
      "SELECT 1; INSERT INTO sec.t VALUES ('by_get_multi')",
      "INSERT INTO sec.t VALUES ('by_get_values'); SELECT 1",
    ]) {
      const r = await get(sql);
      expect({ status: r.status, code: r.code }).toEqual({ status: 400, code: '62' });
    }
  });

  test('an insert with a body over GET → 164, and nothing was written by any of them', async () => {
    const r = await send({
      method: 'GET',
      path: `/?query=${encodeURIComponent('INSERT INTO sec.t FORMAT JSONEachRow')}`,
      body: '{"s":"by_get_body"}\n',
    });
    expectRefused(r, 164);
    expect(await tableExists('by_get')).toBe(false);
    expect((await post("SELECT count() FROM sec.t WHERE s LIKE 'by_get%'")).text).toBe('0\n');
    expect((await post("SELECT count() FROM system.tables WHERE database = 'sec' AND name = 't'")).text).toBe('1\n');
  });
});

describe('setting values from the URL', () => {
  const jwtPath = () => path.join(dataDir, 'jwt-secret');
  const withSetting = (method: 'GET' | 'POST', sql: string, value: string) => {
    const setting = `log_comment=${encodeURIComponent(value)}`;
    return method === 'GET'
      ? send({ method: 'GET', path: `/?query=${encodeURIComponent(sql)}&${setting}` })
      : send({ path: `/?${setting}`, body: sql });
  };

  test.each([
    ['POST', "SELECT 'x", (): string => ` AS a, file($$${jwtPath()}$$) AS s --`],
    ['GET', "SELECT 'x", (): string => ` AS a, file($$${jwtPath()}$$) AS s --`],
    ['POST', 'SELECT 1 AS "x', (): string => `", file($$${jwtPath()}$$) AS s --`],
    ['POST', 'SELECT 1 AS `x', (): string => `\`, file($$${jwtPath()}$$) AS s --`],
    ['POST', 'SELECT $h$x', (): string => `$h$ AS a, file($$${jwtPath()}$$) AS s --`],
    ['POST', 'SELECT 1 /* x', (): string => `*/, file($$${jwtPath()}$$) AS s --`],
    ['POST', "SELECT 'x", (): string => '; SELECT 42 --'],
  ] as const)('%s %s with a value that would close it is refused, and reads nothing', async (method, sql, value) => {
    const r = await withSetting(method, sql, value());
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.text).not.toContain(secrets.jwt);
    expect(r.text).not.toContain('42');
  });

  test('a value that would write a file over an unterminated string writes nothing', async () => {
    const before = fs.readFileSync(jwtPath(), 'utf8');
    const r = await withSetting(
      'POST',
      "SELECT 'x",
      ` AS a, $$attacker$$ AS b INTO OUTFILE $$${jwtPath()}$$ TRUNCATE FORMAT TSVRaw --`,
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(fs.readFileSync(jwtPath(), 'utf8')).toBe(before);
  });

  test('ordinary setting values, quotes included, still apply', async () => {
    const r = await withSetting('POST', "SELECT getSetting('log_comment') FORMAT TSVRaw", "it's $$ -- /* fine");
    expect(r.status).toBe(200);
    expect(r.text).toBe("it's $$ -- /* fine\n");
  });
});

describe('files', () => {
  const paths = () => ({
    passwd: '/etc/passwd',
    credential: path.join(dataDir, 'store-credential'),
    jwt: path.join(dataDir, 'jwt-secret'),
  });
  const lit = (p: string) => `'${p}'`;

  test.each([
    ['file() table function', (p: string) => `SELECT * FROM file(${lit(p)}, 'LineAsString')`],
    ['file() scalar function', (p: string) => `SELECT file(${lit(p)})`],
    ['file() with a comment before the parenthesis', (p: string) => `SELECT file/* x */(${lit(p)})`],
    ['file() as an escaped quoted identifier', (p: string) => `SELECT \`\\x66ile\`(${lit(p)})`],
    [
      'file() inside a Values payload of format()',
      (p: string) => `SELECT * FROM format(Values, 's String', '(file(''${p}''))')`,
    ],
    [
      'file() in a DEFAULT of a structure argument',
      (p: string) => `SELECT * FROM format(JSONEachRow, 's String DEFAULT file(''${p}''), n UInt8', '{"n":1}')`,
    ],
    ['file() in INSERT … VALUES', (p: string) => `INSERT INTO sec.t VALUES (file(${lit(p)}))`],
    ['file() in INSERT … FORMAT Values data', (p: string) => `INSERT INTO sec.t FORMAT Values (file(${lit(p)}))`],
    ['a path as a table name', (p: string) => `SELECT * FROM ${lit(p)}`],
    ['FROM INFILE', (p: string) => `INSERT INTO sec.t FROM INFILE ${lit(p)} FORMAT LineAsString`],
    ['a File engine', (p: string) => `CREATE TABLE sec.f (s String) ENGINE = File(LineAsString, ${lit(p)})`],
    ['a Filesystem database', (p: string) => `CREATE DATABASE fsdb ENGINE = Filesystem(${lit(path.dirname(p))})`],
    [
      'a file dictionary',
      (p: string) =>
        `CREATE DICTIONARY sec.d (s String) PRIMARY KEY s SOURCE(FILE(path ${lit(p)} format 'LineAsString')) LAYOUT(FLAT()) LIFETIME(0)`,
    ],
    ['executable()', (p: string) => `SELECT * FROM executable(${lit(p)}, 'LineAsString', 's String')`],
  ])('%s is refused for /etc/passwd, the credential and the JWT secret', async (_what, statement) => {
    for (const p of Object.values(paths())) expectRefused(await post(statement(p)), 497);
    expect((await post('SELECT count() FROM sec.t')).text).toBe('0\n');
  });

  test('SET ROLE cannot give a client connection the store’s file access back', async () => {
    for (const role of ['ALL', 'store_insert_files', 'DEFAULT']) {
      expect((await post(`SET ROLE ${role}`)).status).toBe(200);
      expectRefused(await post(`SELECT * FROM '${paths().credential}'`), 497);
    }
    expect((await post('SELECT currentRoles()')).text).toBe('[]\n');
  });

  test('writing a file: INTO OUTFILE, INSERT INTO FUNCTION file(), ATTACH … FROM a directory', async () => {
    const target = path.join(dataDir, 'written-by-sql');
    expectRefused(await post(`SELECT 'x' INTO OUTFILE '${target}'`), 497);
    expectRefused(await post(`INSERT INTO FUNCTION file('${target}', 'LineAsString') SELECT 'x'`), 497);
    const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-store-victim-'));
    fs.writeFileSync(path.join(victim, 'keep'), 'keep');
    expectRefused(await post(`ATTACH TABLE sec.victim FROM '${victim}' (s String) ENGINE = MergeTree ORDER BY s`), 497);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readFileSync(path.join(victim, 'keep'), 'utf8')).toBe('keep');
    fs.rmSync(victim, { recursive: true, force: true });
  });

  test('settings that name files or carry SQL cannot be changed (the engine refuses: 452)', async () => {
    for (const setting of [
      "format_template_resultset = '/etc/passwd'",
      "input_format_record_errors_file_path = '/tmp/x'",
      "additional_result_filter = '1'",
      "dialect = 'prql'",
    ]) {
      expectRefused(await post(`SELECT 1 SETTINGS ${setting}`), 452);
    }
    const viaUrl = await send({
      path: `/?additional_table_filters=${encodeURIComponent("{'t':'1'}")}`,
      body: 'SELECT count() FROM sec.t',
    });
    expectRefused(viaUrl, 452);
  });
});

describe('network', () => {
  let listener: net.Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  test('url(), INSERT INTO FUNCTION url() (POST and GET), remote(), s3(), a URL table, an S3 disk: refused, and the listener hears nothing', async () => {
    const at = `127.0.0.1:${port}`;
    const statements = [
      `SELECT * FROM url('http://${at}/x', 'LineAsString')`,
      `INSERT INTO FUNCTION url('http://${at}/x', 'LineAsString') SELECT 'leak'`,
      `SELECT * FROM remote('${at}', system.one)`,
      `SELECT * FROM remoteSecure('${at}', system.one)`,
      `SELECT * FROM s3('http://${at}/bucket/x', 'LineAsString')`,
      `INSERT INTO FUNCTION s3('http://${at}/bucket/x', 'LineAsString') SELECT 'leak'`,
      `SELECT * FROM mysql('${at}', 'd', 't', 'u', 'p')`,
      `SELECT * FROM postgresql('${at}', 'd', 't', 'u', 'p')`,
      `CREATE TABLE sec.u (s String) ENGINE = URL('http://${at}/x', 'LineAsString')`,
      `CREATE TABLE sec.s3disk (s String) ENGINE = MergeTree ORDER BY s SETTINGS disk = disk(type = 's3', endpoint = 'http://${at}/bucket/x/', access_key_id = 'a', secret_access_key = 'b')`,
    ];
    for (const sql of statements) expectRefused(await post(sql), 497);
    expectRefused(await get(`INSERT INTO FUNCTION url('http://${at}/x', 'LineAsString') SELECT 'leak'`), 497);
    await new Promise((r) => setTimeout(r, 500));
    expect(connections).toBe(0);
  });
});

describe('the engine walls, without the adapter in front', () => {
  // The statements the adapter refuses by name, run straight on the store's engine connections (a child
  // process: chDB holds one data directory per process): the grants refuse them on their own.
  test('a client connection may not read files or reach servers; the store’s own connection reads its insert files', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-store-engine-'));
    const dist = path.join(PROJECT_ROOT, 'dist', 'lib', 'clickhouse');
    const script = `
      const fs = require('fs'), path = require('path');
      const { Session } = require('chdb');
      const engine = require(${JSON.stringify(path.join(dist, 'store-engine.js'))});
      (async () => {
        const dir = ${JSON.stringify(dir)};
        const args = ['--config-file=' + engine.writeEngineConfig(path.join(dir, 'engine-config'))];
        const own = new Session(path.join(dir, 'db'), { connectionArgs: args });
        const client = await engine.openClientConnection(path.join(dir, 'db'), args);
        fs.writeFileSync(path.join(dir, 'insert.txt'), 'own\\n');
        const run = async (s, sql) => { try { return (await s.queryAsync(sql, { format: 'TSV' })).text(); } catch (e) { return 'ERR ' + e.message; } };
        const out = {
          own: await run(own, "SELECT * FROM file('" + path.join(dir, 'insert.txt') + "', 'LineAsString')"),
          file: await run(client, "SELECT * FROM file('/etc/passwd', 'LineAsString')"),
          pathTable: await run(client, "SELECT * FROM '/etc/passwd'"),
          writeFile: await run(client, "INSERT INTO FUNCTION file('" + path.join(dir, 'w.txt') + "', 'LineAsString') SELECT 'x'"),
          url: await run(client, "SELECT * FROM url('http://127.0.0.1:9/x', 'LineAsString')"),
          remote: await run(client, "SELECT * FROM remote('127.0.0.1:9', system.one)"),
          fileEngine: await run(client, "CREATE TABLE f (s String) ENGINE = File(LineAsString, '/etc/passwd')"),
          dictionary: await run(client, "CREATE DICTIONARY d (s String) PRIMARY KEY s SOURCE(FILE(path '/etc/passwd' format 'LineAsString')) LAYOUT(FLAT()) LIFETIME(0)"),
          withSettings: await run(client, "SELECT * FROM file('/etc/passwd', 'LineAsString') SETTINGS readonly = 0"),
          filter: await run(client, "SELECT 1 SETTINGS additional_result_filter = '1'"),
        };
        process.stdout.write(JSON.stringify(out));
        client.close(); own.close();
      })().catch((e) => { process.stderr.write(String(e.stack)); process.exit(1); });
    `;
    const child = spawn(process.execPath, ['-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    fs.rmSync(dir, { recursive: true, force: true });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const out = JSON.parse(stdout) as Record<string, string>;
    expect(out.own).toBe('own\n');
    for (const key of ['file', 'pathTable', 'writeFile', 'url', 'remote', 'fileEngine', 'dictionary', 'withSettings']) {
      expect([key, out[key]]).toEqual([key, expect.stringMatching(/^ERR Code: 497\..*\(ACCESS_DENIED\)/s)]);
    }
    expect(out.filter).toMatch(/^ERR Code: 452\./);
  });
});

describe('the port', () => {
  test('stays on loopback', () => {
    expect(new URL(store.url).hostname).toBe('127.0.0.1');
  });

  test('a second store on the same DATA_DIR and STORE_PORT exits non-zero with one line naming it, and leaves the first alone', async () => {
    const marker = path.join(dataDir, 'clickhouse', 'insert-files', 'in-flight.bin');
    fs.writeFileSync(marker, 'an insert the running store is reading');
    const child = spawnStore(dataDir, store.port);
    let stderr = '';
    let stdout = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(fatalLine(stderr)).toMatchObject({
      role: 'store',
      msg: `failed to start: STORE_PORT ${store.port} is already in use`,
    });
    expect(stdout).not.toContain('store listening');
    expect(fs.existsSync(marker)).toBe(true);
    fs.rmSync(marker);
    expect((await post('SELECT 42')).text).toBe('42\n');
  });
});
