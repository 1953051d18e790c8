// What the HTTP commands (`tidemark login`, `tidemark annotations`) share: the saved session, the server they
// talk to, and requests that turn every refusal into one line saying what to do. They read only the client
// settings (lib/config.ts loadClientConfig), so they run on a machine without the server's configuration.
import fs from 'node:fs';
import path from 'node:path';
import { SESSION_COOKIE } from '../lib/auth/tokens';
import type { ClientConfig } from '../lib/config';
import { z } from '../lib/zod';
import type { Io } from './context';

export interface RemoteContext {
  client: ClientConfig;
  io: Io;
}

/** The server refused the request or could not be reached: exit code 1. */
export class RemoteError extends Error {}
/** No server or session is known yet: exit code 78, with how to log in. */
export class NotLoggedIn extends Error {}

const savedSession = z.object({
  url: z.string(),
  email: z.string(),
  session: z.string(),
  site_id: z.string().optional(),
});
export type SavedSession = z.infer<typeof savedSession>;

export const sessionFile = (client: ClientConfig) => path.join(client.configDir, 'session.json');

export function readSession(client: ClientConfig): SavedSession | undefined {
  let text: string;
  try {
    text = fs.readFileSync(sessionFile(client), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = savedSession.safeParse(json);
  if (!parsed.success) throw new NotLoggedIn(`${sessionFile(client)} is not a saved session: run tidemark login again`);
  return parsed.data;
}

/** Writes the session readable by its user only (0600, in a 0700 directory), replacing any earlier one whole. */
export function saveSession(client: ClientConfig, session: SavedSession): string {
  fs.mkdirSync(client.configDir, { recursive: true, mode: 0o700 });
  const file = sessionFile(client);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600); // the mode above is filtered by the umask
  fs.renameSync(temp, file);
  return file;
}

/** `https://host/base/` → `https://host/base`: the server's address as requests are built from it. */
export function serverUrl(value: string): string {
  const u = new URL(value);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('must be an http(s) URL');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

export interface Target {
  url: string;
  session: string;
  siteId?: string;
  /** How to get a new session, quoted in errors. */
  loginHint: string;
}

/**
 * The server and session: TIDEMARK_URL and TIDEMARK_SESSION when set, else the saved login. A saved session
 * is only sent to the server it came from.
 */
export function target(ctx: RemoteContext): Target {
  const saved = readSession(ctx.client);
  const url = ctx.client.url ? serverUrl(ctx.client.url) : saved?.url;
  const loginHint = `run tidemark login --url ${url ?? 'URL'} --email ${saved?.email ?? 'EMAIL'}`;
  if (!url) throw new NotLoggedIn(`not logged in: ${loginHint} (or set TIDEMARK_URL and TIDEMARK_SESSION)`);
  const session = ctx.client.session ?? (saved && saved.url === url ? saved.session : undefined);
  if (!session) throw new NotLoggedIn(`not logged in to ${url}: ${loginHint} (or set TIDEMARK_SESSION)`);
  return { url, session, siteId: ctx.client.siteId ?? (saved?.url === url ? saved.site_id : undefined), loginHint };
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the body is read field by field by each command
  body: any;
  headers: Headers;
}

/** One request; no Origin header is sent (the server's CSRF check lets non-browser clients through). */
export async function request(
  url: string,
  method: string,
  pathAndQuery: string,
  opts: { session?: string; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.session) headers.cookie = `${SESSION_COOKIE}=${opts.session}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url + pathAndQuery, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      redirect: 'error',
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new RemoteError(`cannot reach ${url} (${why}): check the URL (TIDEMARK_URL or tidemark login --url)`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, headers: res.headers };
}

/** The server's error message in one line, with what to do for the statuses a user can act on. */
export function refusal(answer: Answer, t: Pick<Target, 'url' | 'loginHint'>): RemoteError {
  const message: string =
    typeof answer.body?.error?.message === 'string'
      ? answer.body.error.message
      : `the server answered HTTP ${answer.status} without an error message; is ${t.url} a Tidemark server?`;
  const line = message.replace(/\s*\n\s*/g, ' ');
  if (answer.status === 401) return new RemoteError(`session not accepted (${line}): ${t.loginHint}`);
  return new RemoteError(`${line} (HTTP ${answer.status})`);
}
