// What every `tidemark` command gets: its output streams, the configuration and lazily opened connections,
// and the helpers that turn flags into values or a one-line usage error.
import type { Pool } from 'pg';
import { UUID } from '../lib/checks';
import type { Config } from '../lib/config';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  stdin(): Promise<string>;
  /** Asks for a secret without echoing it; present only when stdin is a terminal. */
  secret?(prompt: string): Promise<string>;
}

export interface Context {
  config: Config;
  io: Io;
  /** The PostgreSQL pool, opened (and the database created) on first use. */
  pool(): Promise<Pool>;
}

export type Values = Record<string, string | boolean | undefined>;

/** A mistake in how the command was called: exit code 2 and a pointer to the command's --help. */
export class UsageError extends Error {}

export function requireString(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`${flag} is required`);
  return value;
}

export function requireUuid(value: unknown, flag: string, what = 'team'): string {
  const s = requireString(value, flag);
  if (!UUID.test(s)) throw new UsageError(`${flag} must be ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} id (UUID)`);
  return s;
}

export function parseWith<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  value: unknown,
  flag: string,
): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`${flag} ${r.error.issues[0].message}`);
  return r.data;
}

/** Rows as an aligned text table (or, with --json, as one JSON array). */
export function printRows(io: Io, rows: Record<string, unknown>[], json: boolean, columns: string[]): void {
  if (json) {
    io.out(JSON.stringify(rows));
    return;
  }
  if (rows.length === 0) {
    io.out('(none)');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : v instanceof Date ? v.toISOString() : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  io.out([line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n'));
}
