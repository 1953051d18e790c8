// PostgreSQL refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb. Client strings
// pass through here before they reach PostgreSQL, so such input can never fail a write (and with it every
// job flushed together).
export function cleanText(value: string): string;
export function cleanText(value: string | null): string | null;
export function cleanText(value: string | null): string | null {
  if (value === null) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what is removed
  return value.includes('\u0000') ? value.replace(/\u0000/g, '').toWellFormed() : value.toWellFormed();
}

/** The same for any JSON value, keys included. */
export function cleanJson(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) return value.map(cleanJson);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[cleanText(k)] = cleanJson(v);
    return out;
  }
  return value;
}
