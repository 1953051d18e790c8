// The dashboard's view state, kept in the URL so a view can be bookmarked and shared: the range (a preset or
// a custom from/to), the comparison, the chart's interval and the filters (`f=visit:country,is,DE`, repeated).
// Every panel reads this one value; changing it rewrites the query string (history replaced, not pushed).

export const RANGES = ['today', '24h', '7d', '30d', 'month', '6mo', '12mo', 'custom'] as const;
export type RangeId = (typeof RANGES)[number];
export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** One filter, Plausible's way: a dimension (`visit:country`, `event:page`, `event:goal`…), an operator, values. */
export interface Filter {
  dimension: string;
  op: 'is' | 'is_not' | 'contains';
  values: string[];
}

export interface DashboardState {
  range: RangeId;
  /** ISO dates (YYYY-MM-DD) for a custom range. */
  from?: string;
  to?: string;
  compare: boolean;
  /** null: the range's natural interval. */
  interval: Interval | null;
  filters: Filter[];
}

export function parseState(query: URLSearchParams): DashboardState {
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '')
    ? (query.get('range') as RangeId)
    : '30d';
  const date = (v: string | null) => (v && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : undefined);
  const interval = (INTERVALS as readonly string[]).includes(query.get('interval') ?? '')
    ? (query.get('interval') as Interval)
    : null;
  const filters: Filter[] = [];
  for (const raw of query.getAll('f')) {
    const [dimension, op, ...values] = raw.split(',').map(decodeURIComponent);
    if (!dimension || !values.length || !['is', 'is_not', 'contains'].includes(op)) continue;
    filters.push({ dimension, op: op as Filter['op'], values });
  }
  const from = date(query.get('from'));
  const to = date(query.get('to'));
  return {
    range: range === 'custom' && !(from && to) ? '30d' : range,
    from,
    to,
    compare: query.get('compare') === '1',
    interval,
    filters,
  };
}

export function serializeState(state: DashboardState): string {
  const q = new URLSearchParams();
  if (state.range !== '30d') q.set('range', state.range);
  if (state.range === 'custom' && state.from && state.to) {
    q.set('from', state.from);
    q.set('to', state.to);
  }
  if (state.compare) q.set('compare', '1');
  if (state.interval) q.set('interval', state.interval);
  for (const f of state.filters) q.append('f', [f.dimension, f.op, ...f.values].map(encodeURIComponent).join(','));
  const s = q.toString();
  return s ? `?${s}` : '';
}
