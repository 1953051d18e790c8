// The dashboard's one way to call the server: the same public endpoints a script uses, with the signed-in
// user's JWT (kept in memory; renewed from the session cookie when it expires) or a shared link's token.
// Answers come in three shapes: the dashboard/External envelope `{success, data}`, Plausible's bare body
// (Stats v2), and errors as `{success:false, error:{message, code}}` or Plausible's `{error}`.

const baseMeta = document.querySelector<HTMLMetaElement>('meta[name="tm-base"]');
/** The path prefix of PUBLIC_URL ('' at the root): every link and request starts with it. */
export const BASE = (baseMeta?.content ?? '').replace(/\/+$/, '');

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

let token: string | null = null;
let onSignedOut: () => void = () => {};

export function setToken(value: string | null): void {
  token = value;
}

let shareToken: string | null = null;
let onShareRefused: () => void = () => {};

/** The only API a share token is good for (the server accepts it nowhere else). */
const SHARE_READS = '/api/v2/query';

/**
 * A shared link's token (pages/share.tsx): while set, Stats v2 queries carry it rather than a signed-in
 * reader's JWT, so a signed-in visitor of someone else's shared link still reads as the link; a 401 there
 * calls `refused` (the page asks for a new token) instead of renewing or ending a session. Other requests
 * keep the reader's own credential. The page clears it on leaving.
 */
export function setShareToken(value: string | null, refused: () => void = () => {}): void {
  shareToken = value;
  onShareRefused = refused;
}

/** Called when the session is gone (the cookie expired or was revoked elsewhere). */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

interface CallOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** Send no JWT (sign-in pages, shared links carry their own). */
  anonymous?: boolean;
  headers?: Record<string, string>;
  /**
   * The call checks a password the reader typed (password change, deleting the account): the token is renewed
   * first, so a 401 means a wrong password and is not retried (a retry would count as a second wrong guess).
   */
  passwordCheck?: boolean;
}

async function send(method: string, path: string, options: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const bearer = shareToken && path === SHARE_READS ? shareToken : token;
  if (bearer && !options.anonymous) headers.Authorization = `Bearer ${bearer}`;
  try {
    return await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      credentials: 'same-origin',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('The server cannot be reached; check your connection and try again.', 0, 'NETWORK');
  }
}

let renewing: Promise<boolean> | null = null;

/** The server's readable marker next to the HttpOnly session cookie: without it there is no session to renew. */
const SIGNED_IN_COOKIE = 'tm_signed_in';
const mayHaveSession = () => document.cookie.split('; ').includes(`${SIGNED_IN_COOKIE}=1`);

/** Swaps the session cookie for a fresh JWT; false when there is no valid session. */
export function renewToken(): Promise<boolean> {
  if (!mayHaveSession()) return Promise.resolve(false);
  renewing ??= (async () => {
    try {
      const res = await send('POST', '/api/auth/token', { anonymous: true });
      if (!res.ok) {
        // The session ended elsewhere (revoked, expired): forget the marker so the next load asks nothing.
        // biome-ignore lint/suspicious/noDocumentCookie: a fixed name and empty value; the Cookie Store API is not in every browser
        document.cookie = `${SIGNED_IN_COOKIE}=; Max-Age=0; path=/`;
        return false;
      }
      const body = (await res.json()) as { data: { token: string } };
      token = body.data.token;
      return true;
    } catch {
      return false;
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

async function readError(res: Response): Promise<ApiError> {
  let message = `The server answered ${res.status}`;
  let code = 'HTTP_ERROR';
  try {
    const body = (await res.json()) as { error?: string | { message?: string; code?: string }; code?: string };
    if (typeof body.error === 'string') {
      message = body.error;
      code = body.code ?? code;
    } else if (body.error) {
      message = body.error.message ?? message;
      code = body.error.code ?? code;
    }
  } catch {
    // Not JSON (a proxy's error page): keep the status line.
  }
  if (res.status === 429) message = `${message} (too many requests; wait a moment)`;
  return new ApiError(message, res.status, code);
}

export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  if (options.passwordCheck && token && !(await renewToken())) {
    token = null;
    onSignedOut();
    throw new ApiError('Your session has ended; sign in again.', 401, 'UNAUTHORIZED');
  }
  let res = await send(method, path, options);
  if (res.status === 401 && shareToken && path === SHARE_READS && !options.anonymous) onShareRefused();
  else if (res.status === 401 && token && !options.anonymous && !options.passwordCheck) {
    if (await renewToken()) res = await send(method, path, options);
    else {
      token = null;
      onSignedOut();
    }
  }
  if (!res.ok) throw await readError(res);
  if (res.status === 204) return undefined as T;
  const body = (await res.json()) as { success?: boolean; data?: unknown };
  return (body.success === true && 'data' in body ? body.data : body) as T;
}

export const get = <T>(path: string, options?: CallOptions) => call<T>('GET', path, options);
export const post = <T>(path: string, body?: unknown, options?: CallOptions) =>
  call<T>('POST', path, { ...options, body });
export const put = <T>(path: string, body?: unknown, options?: CallOptions) =>
  call<T>('PUT', path, { ...options, body });
export const del = <T>(path: string, body?: unknown, options?: CallOptions) =>
  call<T>('DELETE', path, { ...options, body });

/** A query string from the defined entries of an object. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  const s = search.toString();
  return s ? `?${s}` : '';
}
