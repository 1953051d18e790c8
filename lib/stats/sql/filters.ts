// Filter conditions over whitelisted columns, values always bound (f<i>).
import { channelSql } from '../channel';
import { type Filter, type FilterClause, isFilterGroup } from '../params';

/**
 * The referrer domain of an event's own values as visit:referrer names it: Direct / None without one, and
 * when the source says the referrer was no source (the site's own host, no utm_source); '' for an event
 * that names no source (not a pageview).
 */
export const referrerValue = (source: string, utmSource: string, domain: string) =>
  `if(${source} = '', '', if(${domain} = '' OR (${utmSource} = '' AND ${source} = 'Direct / None'), 'Direct / None', ${domain}))`;

/** The `events` column (or expression over its columns) of each filter key (visit keys also name visit_values' columns). */
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
  city: 'city',
  region: 'region',
  referrer: referrerValue('toString(source_name)', 'toString(utm_source)', 'toString(referrer_domain)'),
  channel: channelSql({
    source: 'source_name',
    utmSource: 'utm_source',
    utmMedium: 'utm_medium',
    utmCampaign: 'utm_campaign',
    referrer: 'referrer_domain',
  }),
};

/**
 * A filter's condition on an expression (bound as f<i>, and f<i>_<j> for each expression of `matches`);
 * `negate: false` reads the negated operators (is_not, contains_not, matches_not) as their positive form.
 */
export function condition(
  f: Pick<Filter, 'operator' | 'values'>,
  i: number | string,
  expr: string,
  params: Record<string, unknown>,
  negate = true,
): string {
  const not = negate && f.operator.endsWith('_not');
  let positive: string;
  if (f.operator === 'matches' || f.operator === 'matches_not') {
    // RE2 through match(), one bound pattern each (checked by patterns.ts regexError when parsed).
    positive = `(${f.values
      .map((v, j) => {
        params[`f${i}_${j}`] = v;
        return `match(${expr}, {f${i}_${j}:String})`;
      })
      .join(' OR ')})`;
  } else {
    params[`f${i}`] = f.values;
    if (f.operator === 'contains' || f.operator === 'contains_not')
      positive = `multiSearchAnyCaseInsensitiveUTF8(${expr}, {f${i}:Array(String)})`;
    else return `${expr} ${not ? 'NOT IN' : 'IN'} {f${i}:Array(String)}`;
  }
  return not ? `NOT ${positive}` : positive;
}

/** Whether '' (the value of a session without visit values) satisfies a filter. */
export function emptyMatches(f: Filter): boolean {
  let positive: boolean;
  if (f.operator === 'is' || f.operator === 'is_not') positive = f.values.includes('');
  else if (f.operator === 'contains' || f.operator === 'contains_not')
    positive = false; // values are never ''
  else positive = f.values.some((v) => new RegExp(v, 'u').test(''));
  return f.operator.endsWith('_not') ? !positive : positive;
}

/**
 * A group's condition (or, and, not), its clauses' conditions given by `leaf` with a parameter id each
 * (`<i>_<j>_…`, the path to the clause).
 */
export function groupCondition(c: FilterClause, id: string, leaf: (f: Filter, id: string) => string): string {
  if (!isFilterGroup(c)) return leaf(c, id);
  const parts = c.clauses.map((x, j) => groupCondition(x, `${id}_${j}`, leaf));
  if (c.operator === 'not') return `NOT (${parts[0]})`;
  return `(${parts.join(c.operator === 'or' ? ' OR ' : ' AND ')})`;
}

/**
 * The filters as ` AND …` conditions on the expressions `column` gives for their keys. Groups only where
 * every key is a column `column` answers (the attribute rollups: the planner sends no group there).
 */
export function filterSql(
  filters: readonly FilterClause[],
  params: Record<string, unknown>,
  column: (key: Filter['key']) => string,
): string {
  return filters
    .map((c, i) => ` AND ${groupCondition(c, String(i), (f, id) => condition(f, id, column(f.key), params))}`)
    .join('');
}

/** The attribute rollup rows (`attrs`, `s:attrs`) matching the filters, by their columns a_<key>. */
export function attrsFilterSql(filters: readonly FilterClause[], params: Record<string, unknown>): string {
  return filterSql(filters, params, (key) => `a_${key}`);
}
