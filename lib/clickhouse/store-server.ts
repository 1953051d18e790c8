// The embedded store (DESIGN §1): one process owns chDB on one data directory and serves, on loopback only,
// the subset of ClickHouse's HTTP interface that @clickhouse/client 1.23 uses, so every role talks to the
// embedded engine exactly as to a real server. A thin adapter, not a database.
//
// Measured facts this is built on (chdb 3.4.0, ClickHouse 26.7):
// - Every call on one Session runs one at a time; `USE db` and `SET k = v` are state of that one connection.
//   So the current database is switched only while nothing else runs (ContextGate), and settings are never
//   left set: SETTINGS clauses for SELECT-like statements and inserts, SET … / SET … = DEFAULT under an
//   exclusive gate for everything else.
// - A trailing `FORMAT X` in the SQL overrides the format option; a SETTINGS clause may follow FORMAT.
// - queryBindAsync TSV-escapes a string value before the engine parses it as the declared type, while the
//   client sends every param_* already in ClickHouse's escaped text form (see toBindValue).
// - Connections to one data directory run side by side, each with its own current database, settings given at
//   connect (`--readonly=2`) and active roles; grants and settings constraints come from the config file.
//
// Security (docs/security.md): every request but /ping carries the install's credential (Basic auth or
// X-ClickHouse-User/Key), compared in constant time; a request from a web browser (Origin or Sec-Fetch-*) is
// refused before anything runs; GET runs on a read-only connection, as a server sets readonly for GET; client
// statements run on connections without file access (store-engine.ts) after store-guard.ts has read them.

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { TupleParam } from '@clickhouse/client';
import { type ChdbResult, type RawInsertFormat, Session } from 'chdb';
import type { Logger } from '../log';
import { guardPolicy, INSERT_FILES_ROLE, openClientConnection, writeEngineConfig } from './store-engine';
import { type GuardPolicy, inspectStatement } from './store-guard';

export interface StoreServerOptions {
  dataDir: string;
  port: number;
  host?: string;
  logger: Logger;
  /** What every request but /ping must present (CLICKHOUSE_USER and the store credential). */
  credential: { user: string; password: string };
}

export interface StoreServer {
  port: number;
  close(): Promise<void>;
}

/** An error carrying a ClickHouse exception code, rendered like the server's `Code: N. DB::Exception: …`. */
class StoreError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
    formatted = false,
  ) {
    super(formatted ? message : `Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

// URL parameters of the HTTP interface that are not settings.
const NON_SETTINGS = new Set([
  'query',
  'query_id',
  'database',
  'default_format',
  'user',
  'password',
  'quota_key',
  'role',
  'session_id',
  'session_timeout',
  'session_check',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'client_protocol_version',
]);
// Settings that only steer the HTTP transport; the adapter always answers buffered and uncompressed.
const TRANSPORT_SETTINGS = new Set([
  'enable_http_compression',
  'send_progress_in_http_headers',
  'cancel_http_readonly_queries_on_client_close',
  'add_http_cors_header',
]);
// Formats Session.insert accepts as raw bytes (handed to the engine zero-copy).
const RAW_INSERT_FORMATS = new Set<string>([
  'JSONEachRow',
  'JSONCompactEachRow',
  'CSV',
  'CSVWithNames',
  'TSV',
  'TabSeparated',
  'TSVWithNames',
  'TabSeparatedWithNames',
]);
function isRawInsertFormat(format: string): format is RawInsertFormat {
  return RAW_INSERT_FORMATS.has(format);
}
// Binary formats the binding cannot take raw: the body goes to a file the engine reads with file(), which
// costs a write to the page cache and parses far cheaper than text (RowBinary 5.4 against JSONCompactEachRow
// 11.6 µs of engine CPU per events row, bench/store-insert.ts).
const FILE_INSERT_FORMATS = new Set(['RowBinary', 'Native']);
const OUTPUT_STATEMENTS = new Set(['SELECT', 'WITH', 'SHOW', 'DESC', 'DESCRIBE', 'EXISTS', 'EXPLAIN']);

type Settings = Record<string, string>;

interface ParsedRequest {
  database: string;
  format: string;
  settings: Settings;
  params: Map<string, string>;
  insert?: { table: string; columns?: string[]; format: RawInsertFormat; body: Buffer };
  fileInsert?: { table: string; columns?: string[]; format: string; body: Buffer };
  sql?: string;
}

interface Outcome {
  body: Uint8Array;
  format: string;
  summary: Record<string, string>;
}

export async function startStoreServer(opts: StoreServerOptions): Promise<StoreServer> {
  const { logger } = opts;
  const host = opts.host ?? '127.0.0.1';
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host)) throw new Error(`store: refusing non-loopback host ${host}`);
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const expected = credentialDigest(opts.credential.user, opts.credential.password);
  const insertFiles = path.resolve(opts.dataDir, 'insert-files');
  // Set by openEngine() once the port is bound; every request first waits for `opened`.
  let own!: Connection;
  let writer!: Connection;
  let reader!: Connection;
  let policy!: GuardPolicy;
  const connections: Connection[] = [];
  let engineOpened!: () => void;
  let engineFailed!: (err: unknown) => void;
  const opened = new Promise<void>((resolve, reject) => {
    engineOpened = resolve;
    engineFailed = reject;
  });
  opened.catch(() => undefined); // a failed start is thrown by startStoreServer itself
  // Column types of tables that took RowBinary (the format carries none); forgotten after any DDL.
  const columnTypes = new Map<string, Map<string, string>>();
  const inFlight = new Set<Promise<void>>();

  const server = http.createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
    const done = handle(req, res).catch((err: unknown) => {
      logger.error({ err }, 'store request failed outside the engine');
      if (!res.headersSent) res.writeHead(500).end();
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    await opened;
    const url = new URL(req.url ?? '/', 'http://store');
    // A page in a browser can send requests to loopback; no client of this store is a browser.
    if (BROWSER_HEADERS.some((h) => req.headers[h] !== undefined)) {
      logger.warn({ origin: req.headers.origin }, 'store refused a request from a web browser');
      return refuse(
        req,
        res,
        new StoreError(
          497,
          'ACCESS_DENIED',
          'Requests from web browsers (Origin or Sec-Fetch-* headers) are not accepted',
        ),
      );
    }
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    if (!authenticated(req, expected)) {
      logger.warn({ method: req.method, path: url.pathname }, 'store refused a request without the credential');
      return refuse(
        req,
        res,
        new StoreError(
          516,
          'AUTHENTICATION_FAILED',
          'Authentication failed: password is incorrect, or there is no user with such name',
        ),
      );
    }
    if (url.pathname !== '/') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' }).end(`There is no handle ${url.pathname}\n`);
      return;
    }
    const started = process.hrtime.bigint();
    const queryId = url.searchParams.get('query_id') || randomUUID();
    try {
      const parsed = parseRequest(url.searchParams, await readBody(req));
      // As a server sets readonly for GET: only POST may change anything.
      const outcome = await execute(parsed, req.method !== 'POST');
      res.writeHead(200, {
        'Content-Type': contentType(outcome.format),
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Format': outcome.format,
        'X-ClickHouse-Summary': JSON.stringify({
          ...outcome.summary,
          elapsed_ns: String(process.hrtime.bigint() - started),
        }),
        'Content-Length': outcome.body.byteLength,
      });
      res.end(outcome.body);
      logger.debug({ queryId, ms: msSince(started) }, 'store query');
    } catch (err) {
      const e = asStoreError(err);
      logger.warn({ queryId, code: e.code, type: e.type }, 'store query failed');
      res.writeHead(httpStatus(e.code), {
        'Content-Type': 'text/plain; charset=UTF-8',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Exception-Code': String(e.code),
      });
      res.end(`${e.message}\n`);
    }
  }

  async function execute(p: ParsedRequest, readOnly: boolean): Promise<Outcome> {
    if (readOnly && (p.insert || p.fileInsert)) throw readOnlyError();
    if (p.insert) return insert(p, p.insert);
    if (p.fileInsert) return fileInsert(p, p.fileInsert);
    return statement(p, p.sql ?? '', readOnly);
  }

  /** A binary insert: the body as a file, read by `INSERT … SELECT * FROM file()` with the table's types. */
  async function fileInsert(p: ParsedRequest, ins: NonNullable<ParsedRequest['fileInsert']>): Promise<Outcome> {
    const target = ins.table.includes('.') ? ins.table : `${p.database}.${ins.table}`;
    const structure = ins.format === 'Native' ? undefined : await insertStructure(target, ins.columns);
    const file = path.join(insertFiles, `${randomUUID()}.bin`);
    await fs.promises.writeFile(file, ins.body);
    try {
      const columns = ins.columns ? ` (${ins.columns.map(quoteIdentifier).join(', ')})` : '';
      const source = `file(${quoteString(file)}, ${quoteString(ins.format)}${structure ? `, ${quoteString(structure)}` : ''})`;
      const table = ins.table.split('.').map(quoteIdentifier).join('.');
      const sql = withSettingsClause(`INSERT INTO ${table}${columns} SELECT * FROM ${source}`, p.settings);
      await own.gate.run(p.database, false, () => own.session.queryAsync(sql));
      // The engine reports no row count for INSERT … SELECT; only the bytes are known here.
      const summary = { ...emptySummary(), written_bytes: String(ins.body.length) };
      return { body: new Uint8Array(0), format: p.format, summary };
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  /** The file() structure of an insert's columns (all insertable columns in table order when none are named). */
  async function insertStructure(target: string, columns: string[] | undefined): Promise<string> {
    let types = columnTypes.get(target);
    if (!types) {
      const [database, table] = target.split('.');
      const result = await own.session.queryBindAsync(
        `SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String}
           AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL') ORDER BY position`,
        { db: database, t: table },
        { format: 'JSONCompactEachRow' },
      );
      const rows = result
        .text()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as [string, string]);
      if (rows.length === 0) throw new StoreError(60, 'UNKNOWN_TABLE', `Table ${target} does not exist`);
      types = new Map(rows);
      columnTypes.set(target, types);
    }
    const known = types;
    return (columns ?? [...known.keys()])
      .map((c) => {
        const type = known.get(c);
        if (!type) throw new StoreError(16, 'NO_SUCH_COLUMN_IN_TABLE', `No such column ${c} in table ${target}`);
        return `${quoteIdentifier(c)} ${type}`;
      })
      .join(', ');
  }

  async function insert(p: ParsedRequest, ins: NonNullable<ParsedRequest['insert']>): Promise<Outcome> {
    // Per-insert settings (insert_deduplication_token, input_format_*) become the INSERT's own SETTINGS clause.
    const written = await writer.gate.run(p.database, false, () =>
      writer.session.insert({
        table: ins.table,
        columns: ins.columns,
        format: ins.format,
        values: ins.body,
        settings: p.settings,
      }),
    );
    const summary = {
      ...emptySummary(),
      written_rows: String(written.rowsWritten),
      written_bytes: String(written.bytesWritten),
    };
    return { body: new Uint8Array(0), format: p.format, summary };
  }

  async function statement(p: ParsedRequest, sql: string, readOnly: boolean): Promise<Outcome> {
    // chDB would run every statement of a multi-statement (refused here, as a server does) and keep USE/SET on
    // the shared connection (a server without a session forgets them after the request).
    const { keyword, refusal } = inspectStatement(sql, policy);
    if (refusal) throw new StoreError(refusal.code, refusal.type, refusal.message);
    if (keyword === 'USE' || keyword === 'SET')
      return { body: new Uint8Array(0), format: p.format, summary: emptySummary() };
    if (readOnly && !OUTPUT_STATEMENTS.has(keyword)) throw readOnlyError();
    const { session, gate } = readOnly ? reader : writer;
    const run = (text: string): Promise<ChdbResult> =>
      p.params.size > 0
        ? session.queryBindAsync(text, bindValues(p.params, text), { format: p.format })
        : session.queryAsync(text, { format: p.format });
    let result: ChdbResult;
    if (OUTPUT_STATEMENTS.has(keyword)) {
      // The statement that runs is checked whole: setting values from the URL become part of its text.
      const text = withSettingsClause(sql, p.settings);
      const appended = text === sql ? undefined : inspectStatement(text, policy).refusal;
      if (appended) throw new StoreError(appended.code, appended.type, appended.message);
      result = await gate.run(p.database, false, () => run(text));
    } else {
      // DDL, ALTER, INSERT … SELECT/VALUES: a trailing SETTINGS could mean table settings, so apply them with
      // SET while nothing else runs, and reset them before anything else can. Output settings have no use here.
      const applied = Object.entries(p.settings).filter(([k]) => !k.startsWith('output_format_'));
      if (keyword !== 'INSERT') columnTypes.clear();
      result = await gate.run(p.database, applied.length > 0, () => withSetSettings(session, applied, () => run(sql)));
    }
    const summary = { ...emptySummary(), read_rows: String(result.rowsRead), read_bytes: String(result.bytesRead) };
    return { body: result.bytes(), format: trailingFormat(sql) ?? p.format, summary };
  }

  async function withSetSettings<T>(
    session: Session,
    settings: Array<[string, string]>,
    fn: () => Promise<T>,
  ): Promise<T> {
    const set: string[] = [];
    try {
      for (const [k, v] of settings) {
        await session.queryAsync(`SET ${k} = ${quoteString(v)}`);
        set.push(k);
      }
      return await fn();
    } finally {
      for (const k of set) await session.queryAsync(`SET ${k} = DEFAULT`);
    }
  }

  // The port first: a store that cannot bind it (another one running on this DATA_DIR, say) must stop before it
  // touches the data directory.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  try {
    await openEngine();
    engineOpened();
  } catch (err) {
    engineFailed(err);
    for (const c of connections) c.session.close();
    await new Promise((resolve) => server.close(resolve));
    throw err;
  }

  async function openEngine(): Promise<void> {
    // Bodies of binary inserts, each read once by the engine and deleted; leftovers of a crash are removed here.
    fs.rmSync(insertFiles, { recursive: true, force: true });
    fs.mkdirSync(insertFiles, { recursive: true, mode: 0o700 });
    const engineArgs = [`--config-file=${writeEngineConfig(path.join(opts.dataDir, 'engine-config'))}`];
    // The store's own statements (file() inserts, column types): the only connection with the insert-files role.
    own = new Connection(new Session(opts.dataDir, { connectionArgs: engineArgs }));
    connections.push(own);
    if (
      !(await own.session.queryAsync('SELECT currentRoles()', { format: 'TSV' })).text().includes(INSERT_FILES_ROLE)
    ) {
      throw new Error(`store: the engine did not take its users file (no role ${INSERT_FILES_ROLE})`);
    }
    // Clients' statements: POST on one connection, GET on one whose engine refuses any write.
    writer = new Connection(await openClientConnection(opts.dataDir, engineArgs));
    connections.push(writer);
    reader = new Connection(await openClientConnection(opts.dataDir, [...engineArgs, '--readonly=2']));
    connections.push(reader);
    policy = await guardPolicy(own.session);
  }

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    server.closeAllConnections();
    await stopped;
    for (const c of connections) c.session.close();
    logger.info('store closed');
  }
  return { port, close: () => (closing ??= close()) };
}

/** Turns URL + body into one of: a raw insert (body handed to the engine as is) or a SQL statement. */
function parseRequest(q: URLSearchParams, body: Buffer): ParsedRequest {
  const settings: Settings = {};
  const params = new Map<string, string>();
  for (const [key, value] of q) {
    if (key.startsWith('param_')) params.set(key.slice('param_'.length), value);
    else if (!NON_SETTINGS.has(key) && !TRANSPORT_SETTINGS.has(key) && !key.startsWith('http_')) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
        throw new StoreError(115, 'UNKNOWN_SETTING', `Unknown setting '${key}'`);
      settings[key] = value;
    }
  }
  const base = {
    database: q.get('database') || 'default',
    format: q.get('default_format') || 'TabSeparated',
    settings,
    params,
  };
  const urlQuery = q.get('query');
  if (urlQuery !== null && body.length > 0) {
    const insert = parseInsertPrefix(urlQuery);
    if (insert && isRawInsertFormat(insert.format))
      return { ...base, insert: { ...insert, format: insert.format, body } };
    if (insert && FILE_INSERT_FORMATS.has(insert.format)) return { ...base, fileInsert: { ...insert, body } };
  }
  // ClickHouse concatenates the `query` parameter and the body into one statement.
  const sql = [urlQuery, body.length > 0 ? body.toString('utf8') : null].filter((s) => s !== null).join('\n');
  if (sql.trim() === '') throw new StoreError(62, 'SYNTAX_ERROR', 'Empty query');
  return { ...base, sql };
}

const IDENT = String.raw`(?:[A-Za-z_][A-Za-z0-9_]*|\x60[A-Za-z_][A-Za-z0-9_]*\x60)`;
const INSERT_RE = new RegExp(
  String.raw`^\s*INSERT\s+INTO\s+(?:TABLE\s+)?(${IDENT}(?:\.${IDENT})?)\s*(?:\(([^()]*)\))?\s*FORMAT\s+([A-Za-z]+)\s*$`,
  'i',
);

/** `INSERT INTO [db.]t [(a, b)] FORMAT F` as the client sends it; anything fancier goes through SQL. */
function parseInsertPrefix(query: string): { table: string; columns?: string[]; format: string } | undefined {
  const m = INSERT_RE.exec(query);
  if (!m) return undefined;
  const unquote = (s: string): string => s.trim().replace(/^`(.*)`$/, '$1');
  const columns = m[2]?.split(',').map(unquote);
  if (columns && !columns.every((c) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(c))) return undefined;
  return { table: m[1].split('.').map(unquote).join('.'), columns, format: m[3] };
}

function trailingFormat(sql: string): string | undefined {
  return /\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$/i.exec(sql)?.[1];
}

/** Query-level settings for a SELECT-like statement: a SETTINGS clause may follow FORMAT (and repeat). */
function withSettingsClause(sql: string, settings: Settings): string {
  const entries = Object.entries(settings);
  if (entries.length === 0) return sql;
  const body = sql.replace(/[\s;]+$/, '');
  // New line first: the statement may end in a `--` comment.
  return `${body}\nSETTINGS ${entries.map(([k, v]) => `${k} = ${quoteString(v)}`).join(', ')}`;
}

function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

// ---- bound parameters ----------------------------------------------------------------------------------

/**
 * The client sends each param in ClickHouse's escaped text form and queryBindAsync escapes strings once more
 * (tsvEscape: \ NUL BS FF LF CR TAB). So: text without those characters passes through verbatim; a scalar
 * is unescaped once (the engine's re-escape/unescape is then the identity); a composite value (Array, Tuple,
 * Map) with escapes is decoded into JS values that chdb serializes back into an equivalent literal.
 */
function bindValues(params: Map<string, string>, sql: string): Record<string, unknown> {
  const types = declaredTypes(sql);
  const out: Record<string, unknown> = {};
  for (const [name, text] of params) out[name] = toBindValue(name, text, types.get(name) ?? '');
  return out;
}

function toBindValue(name: string, text: string, type: string): unknown {
  if (text === '\\N') return null;
  if (!/[\\\0\b\f\n\r\t]/.test(text)) return text;
  if (!/^(?:(?:Nullable|LowCardinality)\()*(?:Array|Tuple|Map|Nested)\(/i.test(type.trim())) return unescapeText(text);
  try {
    return new CompositeReader(text).readAll();
  } catch (err) {
    throw new StoreError(
      457,
      'BAD_QUERY_PARAMETER',
      `Value of query parameter '${name}' cannot be parsed as ${type}: ${(err as Error).message}`,
    );
  }
}

/** `{name:Type}` placeholders in the SQL; the type runs to the `}` that closes the placeholder. */
function declaredTypes(sql: string): Map<string, string> {
  const types = new Map<string, string>();
  const re = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/g;
  for (let m = re.exec(sql); m; m = re.exec(sql)) {
    let depth = 0;
    let i = re.lastIndex;
    for (; i < sql.length && !(sql[i] === '}' && depth === 0); i++) {
      if (sql[i] === '(') depth++;
      else if (sql[i] === ')') depth--;
    }
    if (!types.has(m[1])) types.set(m[1], sql.slice(re.lastIndex, i));
  }
  return types;
}

const ESCAPES: Record<string, number> = { b: 8, f: 12, n: 10, r: 13, t: 9, '0': 0, a: 7, v: 11, e: 27 };

/** ClickHouse's escaped-text unescaping, on bytes so that `\xHH` sequences can form UTF-8. */
function unescapeText(text: string): string {
  const src = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    if (src[i] !== 0x5c || i + 1 === src.length) {
      out[n++] = src[i];
      continue;
    }
    const c = String.fromCharCode(src[++i]);
    const hex = c === 'x' ? /^[0-9A-Fa-f]{2}/.exec(src.subarray(i + 1, i + 3).toString('latin1')) : null;
    if (hex) {
      out[n++] = parseInt(hex[0], 16);
      i += 2;
    } else out[n++] = ESCAPES[c] ?? src[i];
  }
  return out.subarray(0, n).toString('utf8');
}

/** Reads the literal forms @clickhouse/client produces: [..], (..), {k:v}, '…', NULL, TRUE/FALSE, numbers. */
class CompositeReader {
  private i = 0;
  constructor(private readonly s: string) {}

  readAll(): unknown {
    const value = this.value();
    this.skipSpace();
    if (this.i !== this.s.length) throw new Error(`unexpected '${this.s[this.i]}' at ${this.i}`);
    return value;
  }

  private value(): unknown {
    this.skipSpace();
    const c = this.s[this.i];
    if (c === '[') return this.list(']');
    if (c === '(') return new TupleParam(this.list(')'));
    if (c === '{') {
      const entries = this.list('}', true) as Array<[unknown, unknown]>;
      return new Map(entries);
    }
    if (c === "'") return this.quoted();
    return this.bare();
  }

  private list(close: string, pairs = false): unknown[] {
    const items: unknown[] = [];
    this.i++;
    this.skipSpace();
    if (this.s[this.i] === close) {
      this.i++;
      return items;
    }
    for (;;) {
      const v = this.value();
      if (pairs) {
        this.expect(':');
        items.push([v, this.value()]);
      } else items.push(v);
      this.skipSpace();
      if (this.s[this.i] === close) {
        this.i++;
        return items;
      }
      this.expect(',');
    }
  }

  private quoted(): string {
    let raw = '';
    for (this.i++; this.i < this.s.length; this.i++) {
      const c = this.s[this.i];
      if (c === '\\') raw += c + (this.s[++this.i] ?? '');
      else if (c === "'" && this.s[this.i + 1] === "'") raw += this.s[this.i++];
      else if (c === "'") {
        this.i++;
        return unescapeText(raw);
      } else raw += c;
    }
    throw new Error('unterminated string');
  }

  private bare(): unknown {
    const m = /^[^\s,\]):}]+/.exec(this.s.slice(this.i));
    if (!m) throw new Error(`unexpected '${this.s[this.i] ?? 'end'}' at ${this.i}`);
    this.i += m[0].length;
    const t = m[0];
    if (/^null$/i.test(t)) return null;
    if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
    if (/^-?\d+$/.test(t)) return BigInt(t);
    if (String(Number(t)) === t) return Number(t);
    throw new Error(`unsupported literal ${t}`);
  }

  private expect(ch: string): void {
    this.skipSpace();
    if (this.s[this.i] !== ch) throw new Error(`expected '${ch}' at ${this.i}`);
    this.i++;
  }

  private skipSpace(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }
}

// ---- access ------------------------------------------------------------------------------------------

// Headers only a web browser sends: a page may point fetch() or a form at a loopback port.
const BROWSER_HEADERS = ['origin', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user'];

function credentialDigest(user: string, password: string): Buffer {
  return createHash('sha256').update(user).update('\0').update(password).digest();
}

/** Basic auth as @clickhouse/client sends it, or ClickHouse's X-ClickHouse-User/Key; compared in constant time. */
function authenticated(req: http.IncomingMessage, expected: Buffer): boolean {
  let user: string | undefined;
  let password: string | undefined;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0) [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  } else if (typeof req.headers['x-clickhouse-key'] === 'string') {
    const named = req.headers['x-clickhouse-user'];
    [user, password] = [typeof named === 'string' ? named : 'default', req.headers['x-clickhouse-key']];
  }
  return user !== undefined && password !== undefined && timingSafeEqual(credentialDigest(user, password), expected);
}

/** Answers a refused request at once, without reading its body, and closes the connection. */
function refuse(req: http.IncomingMessage, res: http.ServerResponse, e: StoreError): void {
  req.resume();
  res.writeHead(httpStatus(e.code), {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Exception-Code': String(e.code),
    Connection: 'close',
  });
  res.end(`${e.message}\n`);
}

function readOnlyError(): StoreError {
  return new StoreError(
    164,
    'READONLY',
    'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries',
  );
}

// ---- connection context ----------------------------------------------------------------------------------

/** One chDB connection and the gate that keeps its current database. */
class Connection {
  readonly gate: ContextGate;
  constructor(readonly session: Session) {
    this.gate = new ContextGate((db) => session.queryAsync(`USE ${quoteIdentifier(db)}`).then(() => undefined));
  }
}

interface Waiter {
  database: string;
  exclusive: boolean;
  admit: () => void;
  fail: (err: unknown) => void;
}

/**
 * The one chDB connection has one current database. Queries for the current database run together; a
 * request for another database waits (FIFO, so neither side starves) until those drain, then `USE` switches.
 * An exclusive run (statement with SET settings) has the connection to itself.
 */
class ContextGate {
  private current: string | undefined;
  private active = 0;
  private exclusiveActive = false;
  private switching = false;
  private readonly queue: Waiter[] = [];

  constructor(private readonly useDatabase: (db: string) => Promise<void>) {}

  async run<T>(database: string, exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    await new Promise<void>((admit, fail) => {
      this.queue.push({ database, exclusive, admit, fail });
      this.pump();
    });
    try {
      return await fn();
    } finally {
      this.active--;
      this.exclusiveActive = false; // only the exclusive run itself can be active while it is set
      this.pump();
    }
  }

  private pump(): void {
    while (!this.switching && !this.exclusiveActive && this.queue.length > 0) {
      const head = this.queue[0];
      const same = head.database === this.current;
      if (this.active > 0 && (!same || head.exclusive)) return;
      if (!same) {
        this.switchTo(head);
        return;
      }
      this.queue.shift();
      this.active++;
      this.exclusiveActive = head.exclusive;
      head.admit();
    }
  }

  private switchTo(head: Waiter): void {
    this.switching = true;
    this.useDatabase(head.database)
      .then(
        () => {
          this.current = head.database;
        },
        (err: unknown) => {
          this.queue.splice(this.queue.indexOf(head), 1);
          head.fail(err);
        },
      )
      .finally(() => {
        this.switching = false;
        this.pump();
      });
  }
}

// ---- HTTP helpers ----------------------------------------------------------------------------------------

const decoders: Record<string, (b: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
  const encoding = req.headers['content-encoding'];
  if (!encoding || encoding === 'identity' || body.length === 0) return body;
  const decode = decoders[encoding];
  if (!decode) throw new StoreError(1, 'UNSUPPORTED_METHOD', `Unknown Content-Encoding ${encoding}`);
  return decode(body);
}

function asStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const match = /^Code: (\d+)\./.exec(message);
  // chDB errors carry the engine's code and its full `Code: N. DB::Exception: … (TYPE)` text.
  const code = (err as { clickhouseCode?: unknown }).clickhouseCode;
  if (typeof code === 'number' && match) return new StoreError(code, typeOf(message), message, true);
  const name = (err as { name?: unknown }).name;
  if (name === 'ChdbBindError') return new StoreError(457, 'BAD_QUERY_PARAMETER', message);
  if (typeof code === 'number') return new StoreError(code, 'UNKNOWN_EXCEPTION', message);
  return new StoreError(1002, 'UNKNOWN_EXCEPTION', message);
}

function typeOf(message: string): string {
  return /\(([A-Z0-9_]*[A-Z]{3}[A-Z0-9_]*)\)(?:\s*\(version[^)]*\))?\s*$/.exec(message)?.[1] ?? 'UNKNOWN_EXCEPTION';
}

// The status codes ClickHouse's HTTP handler uses for the errors a client can cause; everything else is 500.
const BAD_REQUEST = new Set([6, 26, 27, 33, 36, 38, 41, 53, 62, 69, 70, 72, 115, 117, 130, 131, 456, 457]);
const NOT_FOUND = new Set([16, 46, 47, 60, 81]);
// Refusals: READONLY, SETTING_CONSTRAINT_VIOLATION, ACCESS_DENIED, AUTHENTICATION_FAILED.
const FORBIDDEN = new Set([164, 452, 497, 516]);

function httpStatus(code: number): number {
  if (FORBIDDEN.has(code)) return 403;
  if (BAD_REQUEST.has(code)) return 400;
  if (NOT_FOUND.has(code)) return 404;
  return 500;
}

function contentType(format: string): string {
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^(TSV|TabSeparated)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8; header=absent';
  return 'text/plain; charset=UTF-8';
}

function emptySummary(): Record<string, string> {
  const zero = '0';
  return {
    read_rows: zero,
    read_bytes: zero,
    written_rows: zero,
    written_bytes: zero,
    total_rows_to_read: zero,
    result_rows: zero,
    result_bytes: zero,
  };
}

function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
