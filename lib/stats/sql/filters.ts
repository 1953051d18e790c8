// Filter conditions over whitelisted columns, values always bound (f<i>).
import type { Filter } from '../params';

/** The `events` column of each filter key (visit keys also name visit_values' columns). */
export const FILTER_COLUMNS: Record<Filter['key'], string> = {
  country: 'country_code',
  browser: 'browser',
  device: 'device_type',
  os: 'os',
  source: 'source_name',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  page: 'pathname',
};

/** A filter's condition on an expression (bound as f<i>); `negate: false` reads is_not as is. */
export function condition(f: Filter, i: number, expr: string, params: Record<string, unknown>, negate = true): string {
  params[`f${i}`] = f.values;
  if (f.operator === 'contains') return `multiSearchAnyCaseInsensitiveUTF8(${expr}, {f${i}:Array(String)})`;
  return `${expr} ${f.operator === 'is_not' && negate ? 'NOT IN' : 'IN'} {f${i}:Array(String)}`;
}

/** The filters as ` AND …` conditions on the expressions `column` gives for their keys. */
export function filterSql(
  filters: readonly Filter[],
  params: Record<string, unknown>,
  column: (key: Filter['key']) => string,
): string {
  return filters.map((f, i) => ` AND ${condition(f, i, column(f.key), params)}`).join('');
}

/** The attribute rollup rows (`attrs`, `s:attrs`) matching the filters, by their columns a_<key>. */
export function attrsFilterSql(filters: readonly Filter[], params: Record<string, unknown>): string {
  return filterSql(filters, params, (key) => `a_${key}`);
}
