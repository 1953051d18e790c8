// A small fetch wrapper for talking to a test server. External API responses are checked against the
// OpenAPI document on the way (test/helpers/openapiValidate.ts).
import { checkAgainstOpenApi } from './openapiValidate';

// biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  rawBody?: string;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export function client(baseUrl: string) {
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field
  return async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
    let body: string | undefined;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody;
      headers['content-type'] ??= 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON; keep the text
    }
    checkAgainstOpenApi(method, path, res.status, parsed, res.headers.get('content-type'));
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
}
