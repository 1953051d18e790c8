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

/** A hand-edited link may hold a stray '%': keep the text rather than fail the whole page. */
function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
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
    const [dimension, op, ...values] = raw.split(',').map(safeDecode);
    if (!dimension || !values.length || !['is', 'is_not', 'contains'].includes(op)) continue;
    filters.push({ dimension, op: op as Filter['op'], values });
  }
  let from = date(query.get('from'));
  let to = date(query.get('to'));
  // A hand-edited link with the dates the wrong way round still means the days between them.
  if (from && to && from > to) [from, to] = [to, from];
  const resolved = range === 'custom' && !(from && to) ? '30d' : range;
  return {
    range: resolved,
    from,
    to,
    compare: query.get('compare') === '1',
    // An interval the range does not offer (a link from a longer range) falls back to the range's own.
    interval: interval && intervalsFor({ range: resolved, from, to }).includes(interval) ? interval : null,
    filters,
  };
}

/** Days a custom range covers, both ends included (1 when it is not custom or incomplete). */
function customDays(state: Pick<DashboardState, 'from' | 'to'>): number {
  if (!state.from || !state.to) return 1;
  return Math.round((Date.parse(state.to) - Date.parse(state.from)) / 86_400_000) + 1;
}

/** The chart intervals that make sense for a range: never one bucket, never thousands. */
export function intervalsFor(state: Pick<DashboardState, 'range' | 'from' | 'to'>): Interval[] {
  switch (state.range) {
    case 'today':
    case '24h':
      return ['hour'];
    case '7d':
      return ['hour', 'day'];
    case '30d':
    case 'month':
      return ['day', 'week'];
    case '6mo':
    case '12mo':
      return ['day', 'week', 'month'];
    case 'custom': {
      const days = customDays(state);
      if (days <= 1) return ['hour'];
      if (days <= 14) return ['hour', 'day'];
      if (days <= 62) return ['day', 'week'];
      return ['day', 'week', 'month'];
    }
  }
}

/** The interval the chart uses: the state's choice, else the range's natural one. */
export function effectiveInterval(state: DashboardState): Interval {
  const offered = intervalsFor(state);
  if (state.interval && offered.includes(state.interval)) return state.interval;
  if (state.range === '6mo' || state.range === '12mo') return 'month';
  if (state.range === 'custom' && customDays(state) > 92) return 'month';
  return offered.includes('day') ? 'day' : offered[0];
}

/** The state without one filter (a chip's remove button). */
export function withoutFilter(state: DashboardState, filter: Filter): DashboardState {
  return { ...state, filters: state.filters.filter((f) => f !== filter) };
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
  // Only '%' and ',' are escaped inside a part (the query string encodes the rest once).
  const part = (v: string) => v.replace(/%/g, '%25').replace(/,/g, '%2C');
  for (const f of state.filters) q.append('f', [f.dimension, f.op, ...f.values].map(part).join(','));
  const s = q.toString();
  return s ? `?${s}` : '';
}
