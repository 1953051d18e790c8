import { type GuardPolicy, inspectStatement } from '../../../../lib/clickhouse/store-guard';

// The store builds the denied list from its engine's table functions (store-engine.ts); these stand in.
const policy: GuardPolicy = {
  deniedFunctions: new Set(['file', 'url', 'remote', 's3', 'format', 'input', 'executable', 'disk']),
  allowedEngines: new Set(['mergetree', 'replacingmergetree', 'null', 'memory', 'atomic']),
};
const inspect = (sql: string) => inspectStatement(sql, policy);

describe('store guard: statements a client may run', () => {
  it.each([
    ["SELECT ';' AS x -- trailing; comment", 'SELECT'],
    ['SELECT 1;', 'SELECT'],
    ['/* lead */ (SELECT 1) UNION ALL (SELECT 2)', 'SELECT'],
    ["SELECT url, file, format FROM t WHERE path = 'upload/file.txt' AND x = {p:String}", 'SELECT'],
    ["SELECT formatDateTime(now(), '%F'), fileSize, urlPath FROM t", 'SELECT'],
    ['INSERT INTO t FORMAT JSONEachRow {"a":"file(1); outfile"}\n{"a":"; DROP TABLE t"}', 'INSERT'],
    ['INSERT INTO t (format, values) FORMAT CSV a;b', 'INSERT'],
    ["INSERT INTO t VALUES ('a;b', now()), ('c', today())", 'INSERT'],
    ['CREATE TABLE t (a UInt8) ENGINE = ReplacingMergeTree ORDER BY a', 'CREATE'],
    ['CREATE TABLE t (a UInt8) ENGINE MergeTree ORDER BY a SETTINGS index_granularity = 8192', 'CREATE'],
    ['CREATE DATABASE IF NOT EXISTS d', 'CREATE'],
    ['SYSTEM STOP MERGES d.t', 'SYSTEM'],
    ["SELECT * FROM numbers(3) WHERE 'a' != $tag$it's$tag$", 'SELECT'],
  ])('%s', (sql, keyword) => {
    expect(inspect(sql)).toEqual({ keyword });
  });
});

describe('store guard: refusals', () => {
  it.each([
    "SELECT file('/etc/passwd')",
    "SELECT * FROM file('/etc/passwd', 'LineAsString')",
    'SELECT "file"(\'/etc/passwd\')',
    "SELECT `\\x66ile`('/etc/passwd')",
    "SELECT file -- a comment\n ('/etc/passwd')",
    "SELECT file /* a /* nested */ comment */ ('/etc/passwd')",
    "SELECT file\u00a0('/etc/passwd')",
    "SELECT $$ ' $$, file('/etc/passwd') -- '",
    "SELECT $$file('/etc/passwd')$$",
    "SELECT * FROM values('s String', ('x')) WHERE 'file(''/etc/passwd'')' = ''",
    "SELECT * FROM format(JSONEachRow, 's String DEFAULT fi' || 'le(1)', '{}')",
    "INSERT INTO t VALUES (file('/etc/passwd'))",
    "INSERT INTO t FORMAT Values (file('/etc/passwd'))",
    "INSERT INTO format FORMAT Values (file('/etc/passwd'))",
    "INSERT INTO t SELECT format FROM (SELECT file('/etc/passwd') AS format)",
    "INSERT INTO FUNCTION url('http://127.0.0.1:1/', 'LineAsString') SELECT 'x'",
    "SELECT * FROM remote('127.0.0.1:9000', system.one)",
    "SELECT 1 INTO OUTFILE '/tmp/x'",
    "INSERT INTO t FROM INFILE '/etc/passwd' FORMAT LineAsString",
    "ATTACH TABLE t FROM '/var/lib' (a UInt8) ENGINE = MergeTree ORDER BY a",
    '(ATTACH TABLE t)',
    "BACKUP TABLE t TO Disk('default', 'x')",
    'KILL QUERY WHERE 1',
    'CREATE TABLE t (a UInt8) ENGINE = Log',
    "CREATE TABLE t (a UInt8) ENGINE = `URL`('http://x/')",
    "CREATE DATABASE d ENGINE = Filesystem('/')",
    "CREATE TABLE t (a UInt8) ENGINE = MergeTree ORDER BY a SETTINGS disk = disk(type = 's3', endpoint = 'http://x/')",
  ])('%s → 497 ACCESS_DENIED', (sql) => {
    expect(inspect(sql).refusal).toMatchObject({ code: 497, type: 'ACCESS_DENIED' });
  });

  it.each([
    'SELECT 1; SELECT 2',
    'SELECT 1 /* ; */ ; USE other',
    'SELECT $a$;$a$; SELECT 2',
    "INSERT INTO t VALUES ('a'); DROP TABLE t",
    "INSERT INTO t FORMAT Values ('a'); DROP TABLE t",
  ])('%s → 62 multi-statement', (sql) => {
    expect(inspect(sql).refusal).toMatchObject({ code: 62, type: 'SYNTAX_ERROR' });
  });
});

describe('store guard: text the client leaves open', () => {
  // The store appends a SETTINGS clause to SELECT-like statements; nothing the client opened may swallow it.
  it.each([
    "SELECT 'x",
    'SELECT 1 AS "x',
    'SELECT 1 AS `x',
    'SELECT $h$x',
    'SELECT 1 /* x',
    "SELECT 1 /* a /* b */ 'x' ",
  ])('%s is refused', (sql) => {
    expect(inspect(sql).refusal).toMatchObject({ code: 62, type: 'SYNTAX_ERROR' });
  });

  it.each(["SELECT 'it''s'", 'SELECT 1 /* a /* b */ */', "SELECT $h$x$h$ -- 'open", 'SELECT 1 -- /* open'])(
    '%s is whole',
    (sql) => {
      expect(inspect(sql).refusal).toBeUndefined();
    },
  );
});
