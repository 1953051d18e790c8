// CSV text (RFC 4180): fields separated by commas, records ended by CRLF, a field quoted when it holds a comma,
// a quote or a line break, quotes doubled inside. Text that a spreadsheet would read as a formula (starting
// with = + - @, a tab or a carriage return) gets a leading apostrophe, so opening an export never runs a cell
// a visitor controlled (a page path, a referrer, a campaign name); numbers are written as they are.

export type CsvValue = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field: numbers as JavaScript prints them, null and undefined empty, text guarded and quoted as needed. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, CRLF included. */
export function csvRecord(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** Records of `rows` by `columns` (the header first), in pieces of about `chunkBytes` for a stream. */
export function* csvChunks(
  columns: readonly string[],
  rows: Iterable<Record<string, CsvValue>>,
  chunkBytes = 64 * 1024,
): Generator<string> {
  let chunk = csvRecord(columns);
  for (const row of rows) {
    chunk += csvRecord(columns.map((c) => row[c]));
    if (chunk.length >= chunkBytes) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** A file name safe in Content-Disposition and in a ZIP: letters, digits, dot, dash and underscore only. */
export function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 150);
}
