// What the embedded store refuses to run for a client, read from the statement's tokens. The engine's grants
// (store-engine.ts) are the first wall; this covers what chDB cannot deny itself, measured on chdb 3.4.0:
// - the scalar function `file(path)` reads any file in an embedded engine, whatever the grants;
// - `INTO OUTFILE` and `FROM INFILE` are done by the embedded client, outside access control;
// - `ATTACH TABLE … FROM 'path'` adopts any directory, and a later DROP deletes it;
// - `disk(type = 's3', endpoint = …)` connects anywhere, and a table's `ENGINE =` may name engines that reach
//   outside the data directory (the grant check covers only some of them);
// - SQL hidden in strings (a Values payload of `format()`, a DEFAULT in a structure argument) is evaluated.
// The tokenizer follows ClickHouse's lexer (src/Parsers/Lexer.cpp): quoted identifiers are unescaped, comments
// nest, heredocs are strings, and anything it cannot place only ever makes it refuse more.

export interface Refusal {
  code: number;
  type: string;
  message: string;
}

export interface Inspection {
  /** The statement's first keyword, upper case ('' when there is none). */
  keyword: string;
  refusal?: Refusal;
}

export interface GuardPolicy {
  /** Function and table-function names (lower case) that may not be called. */
  deniedFunctions: ReadonlySet<string>;
  /** Table and database engines (lower case) a statement may name after ENGINE. */
  allowedEngines: ReadonlySet<string>;
}

/** First keywords of statements a client may not run at all (the engine's grants stop most of the rest). */
const DENIED_STATEMENTS = new Set([
  'ATTACH',
  'DETACH',
  'BACKUP',
  'RESTORE',
  'KILL',
  'GRANT',
  'REVOKE',
  'EXECUTE',
  'UNDROP',
]);
/** Words that never have a harmless use here: client-side file access of the embedded client. */
const DENIED_WORDS = new Set(['outfile', 'infile']);
const MAX_STRING_DEPTH = 4;

export function inspectStatement(sql: string, policy: GuardPolicy): Inspection {
  const tokens = sqlTokens(sql);
  const keyword = (tokens.find((t) => !(t.kind === 'punct' && t.text === '('))?.text ?? '').toUpperCase();
  const accessDenied = (message: string): Inspection => ({
    keyword,
    refusal: { code: 497, type: 'ACCESS_DENIED', message },
  });
  if (DENIED_STATEMENTS.has(keyword)) return accessDenied(`${keyword} is not allowed by the embedded store`);
  // Text the store appends (a SETTINGS clause) must never land inside a string or comment the client opened.
  if (tokens.at(-1)?.kind === 'open') {
    return {
      keyword,
      refusal: {
        code: 62,
        type: 'SYNTAX_ERROR',
        message: 'Unterminated string, quoted identifier, heredoc or comment',
      },
    };
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'punct' && t.text === ';' && i + 1 < tokens.length) {
      return { keyword, refusal: { code: 62, type: 'SYNTAX_ERROR', message: 'Multi-statements are not allowed' } };
    }
    const denied = deniedIn(tokens, i, policy, 0);
    if (denied) return accessDenied(denied);
  }
  return { keyword };
}

/** Why token i (or SQL inside it, when it is a string) may not run; undefined when it may. */
function deniedIn(tokens: Token[], i: number, policy: GuardPolicy, depth: number): string | undefined {
  const t = tokens[i];
  const next = tokens[i + 1];
  if (t.kind === 'string') {
    if (depth >= MAX_STRING_DEPTH) return undefined;
    const inner = sqlTokens(t.text);
    for (let j = 0; j < inner.length; j++) {
      const why = deniedIn(inner, j, policy, depth + 1);
      if (why) return why;
    }
    return undefined;
  }
  if (t.kind !== 'word' && t.kind !== 'quoted') return undefined;
  const name = t.text.toLowerCase();
  if (next?.kind === 'punct' && next.text === '(' && policy.deniedFunctions.has(name)) {
    return `function ${t.text} is not allowed by the embedded store`;
  }
  // Statement syntax counts only in the statement itself; strings can carry expressions, not clauses.
  if (depth > 0 || t.kind !== 'word') return undefined;
  if (DENIED_WORDS.has(name)) return `${t.text.toUpperCase()} is not allowed by the embedded store`;
  if (name === 'engine') {
    const engine = next?.kind === 'punct' && next.text === '=' ? tokens[i + 2] : next;
    if (
      engine &&
      (engine.kind === 'word' || engine.kind === 'quoted') &&
      !policy.allowedEngines.has(engine.text.toLowerCase())
    ) {
      return `engine ${engine.text} is not allowed by the embedded store`;
    }
  }
  return undefined;
}

// ---- tokens ----------------------------------------------------------------------------------------------

export interface Token {
  /** 'open': a string, quoted identifier, heredoc or comment that the text never closes (always the last token). */
  kind: 'word' | 'quoted' | 'string' | 'punct' | 'open';
  /** A word or punctuation as written; a quoted identifier or string unescaped. */
  text: string;
}

/**
 * The tokens of the SQL a client statement runs, without whitespace and comments. Inline data of
 * `INSERT … FORMAT x` is not SQL and is left out, except in the Values format, whose rows are expressions the
 * engine evaluates (and ends at a `;`, after which another statement would run).
 */
export function sqlTokens(sql: string): Token[] {
  const out: Token[] = [];
  // Only `INSERT INTO t [(…)] [SETTINGS …] FORMAT name` starts data; after a SELECT or WITH, FORMAT is not that.
  let insertData = false;
  for (const t of lex(sql)) {
    out.push(t);
    if (out.length === 1) {
      insertData = t.kind === 'word' && t.text.toLowerCase() === 'insert';
      continue;
    }
    if (!insertData || t.kind !== 'word') continue;
    const word = t.text.toLowerCase();
    if (word === 'select' || word === 'with') insertData = false;
    else if (word !== 'values' && isFormatKeyword(out[out.length - 2], out[out.length - 3])) break;
  }
  return out;
}

/** A word FORMAT that starts a format name; right after INTO, TABLE or a dot it names a table (`INSERT INTO format`). */
function isFormatKeyword(t: Token, before: Token | undefined): boolean {
  if (t.kind !== 'word' || t.text.toLowerCase() !== 'format' || !before) return false;
  return before.kind === 'punct' ? before.text !== '.' : !['into', 'table'].includes(before.text.toLowerCase());
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r', '\f', '\v']);

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_]/.test(c);
}

/** ClickHouse's lexer, reduced to what the checks need; non-ASCII characters separate tokens. */
function* lex(sql: string): Generator<Token> {
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i];
    const c1 = sql[i + 1];
    if (WHITESPACE.has(c) || sql.charCodeAt(i) > 0x7f) {
      i++;
    } else if ((c === '-' && c1 === '-') || (c === '/' && c1 === '/') || (c === '#' && (c1 === ' ' || c1 === '!'))) {
      const eol = sql.indexOf('\n', i);
      i = eol === -1 ? n : eol;
    } else if (c === '/' && c1 === '*') {
      i = blockCommentEnd(sql, i + 2);
      if (i === -1) {
        yield { kind: 'open', text: '/*' };
        return;
      }
    } else if (c === "'" || c === '"' || c === '`') {
      const end = quotedEnd(sql, i);
      if (end === n) {
        yield { kind: 'open', text: c };
        return;
      }
      yield { kind: c === "'" ? 'string' : 'quoted', text: unquote(sql.slice(i + 1, end), c) };
      i = end + 1;
    } else if (c === '$') {
      const close = sql.indexOf('$', i + 1);
      const delimiter = close === -1 ? '' : sql.slice(i, close + 1);
      const end = delimiter ? sql.indexOf(delimiter, close + 1) : -1;
      if (end !== -1) {
        yield { kind: 'string', text: sql.slice(close + 1, end) };
        i = end + delimiter.length;
      } else if (delimiter && /^\$[A-Za-z0-9_]*\$$/.test(delimiter)) {
        yield { kind: 'open', text: delimiter };
        return;
      } else if (!isWordChar(c1)) {
        yield { kind: 'punct', text: c };
        i++;
      } else {
        i = yield* word(sql, i);
      }
    } else if (isWordChar(c)) {
      i = yield* word(sql, i);
    } else {
      yield { kind: 'punct', text: c };
      i++;
    }
  }
}

function* word(sql: string, from: number): Generator<Token, number> {
  let i = from + 1;
  while (i < sql.length && (isWordChar(sql[i]) || sql[i] === '$')) i++;
  yield { kind: 'word', text: sql.slice(from, i) };
  return i;
}

/** Index past the `*\/` that closes a comment opened before `from` (comments nest), or -1 when none does. */
function blockCommentEnd(sql: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i + 1 < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      i += 2;
      if (--depth === 0) return i;
    } else i++;
  }
  return -1;
}

/** Index of the quote closing the one at `from` (a doubled quote and a backslash escape do not close). */
function quotedEnd(sql: string, from: number): number {
  const quote = sql[from];
  for (let i = from + 1; i < sql.length; i++) {
    if (sql[i] === '\\') i++;
    else if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i;
      i++;
    }
  }
  return sql.length;
}

const ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  '0': '\0',
  a: '\x07',
  v: '\v',
  e: '\x1b',
};

/** The text of a quoted token: `\x66`, `\n`, `\'` and a doubled quote resolved as ClickHouse reads them. */
function unquote(body: string, quote: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === quote && body[i + 1] === quote) {
      out += quote;
      i++;
    } else if (c === '\\' && i + 1 < body.length) {
      const e = body[++i];
      const hex = e === 'x' ? /^[0-9A-Fa-f]{2}/.exec(body.slice(i + 1, i + 3)) : null;
      if (hex) {
        out += String.fromCharCode(parseInt(hex[0], 16));
        i += 2;
      } else out += ESCAPES[e] ?? e;
    } else out += c;
  }
  return out;
}
