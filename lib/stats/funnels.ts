// A saved funnel's results over a range (issue 22): visitors per step counted in ClickHouse (sql/funnels.ts),
// then the rates and drop-offs between the steps.
import type { ExternalFunnelData, FunnelResults, FunnelResultsView, FunnelStepResult } from '../accounts/funnelSchemas';
import { type FunnelRow, funnelView } from '../accounts/funnels';
import { type ClickHouseClient, selectRows } from '../clickhouse/client';
import { type GoalDefinition, isVisitKey, type RangeQuery } from './model';
import {
  FILTER_KEYS,
  type Filter,
  type FilterClause,
  isFilterGroup,
  parseFilters,
  parseJsonFilters,
  parseStatsParams,
  type StatsParamError,
} from './params';
import { type ResolvedPeriod, resolvePeriod, resolveRange } from './period';
import { visitSource } from './plan';
import { coverageFacts } from './run';
import { funnelStatement } from './sql/funnels';
import { formatDate, today } from './time';

/** What each step matches: its goal, or a path step as the page goal of its pattern. */
export function stepDefinitions(funnel: FunnelRow): GoalDefinition[] {
  return funnel.steps.map((s) =>
    s.goal_id !== null && s.goal_kind !== null
      ? { name: s.goal_name ?? '', kind: s.goal_kind, path: s.goal_path }
      : { name: s.path ?? '', kind: 'page', path: s.path },
  );
}

/** Visitors who reached each step of the funnel, in order within one visit, over the query's range. */
export async function funnelVisitors(
  clickhouse: ClickHouseClient,
  funnel: FunnelRow,
  q: RangeQuery & { filters: readonly Filter[] },
): Promise<number[]> {
  // Visit-key filters over rolled-up days read those days' visit values (visitSource), as every other read does.
  const facts = await coverageFacts(clickhouse, q, {
    coverage: q.filters.some((f: Filter) => isVisitKey(f.key)),
    window: false,
  });
  const { sql, params } = funnelStatement(stepDefinitions(funnel), q.filters, q, visitSource(q, facts));
  params.w = q.websiteId;
  params.tz = q.timeZone;
  const [row] = await selectRows<{ reached: (string | number)[] }>(clickhouse, sql, params);
  return funnel.steps.map((_, i) => Number(row?.reached[i] ?? 0));
}

/** `part` of `whole` in %, two decimals; 0 when the whole is 0. */
const rate = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0);

/** The results body: each step's visitors, conversion from the first and the previous step, and drop-off. */
export function funnelResults(funnel: FunnelRow, visitors: readonly number[]): FunnelResults {
  const view = funnelView(funnel);
  const first = visitors[0] ?? 0;
  const steps: FunnelStepResult[] = view.steps.map((s, i) => {
    const previous = i === 0 ? visitors[i] : visitors[i - 1];
    return {
      step: i + 1,
      ...s,
      visitors: visitors[i],
      conversion_rate: rate(visitors[i], first),
      step_conversion_rate: rate(visitors[i], previous),
      dropoff: previous - visitors[i],
    };
  });
  const completed = visitors[visitors.length - 1] ?? 0;
  return {
    funnel: { id: view.id, name: view.name },
    steps,
    totals: { entered: first, completed, conversion_rate: rate(completed, first), dropoff: first - completed },
  };
}

export interface FunnelQuery {
  period: ResolvedPeriod;
  filters: Filter[];
}

/**
 * The dashboard's results query: `period` (default 30d), `date` and `filters` as the Stats API v2 reads
 * them (its parser, its codes), in the website's time zone.
 */
export function parseFunnelQuery(
  query: Record<string, unknown>,
  website: { id: string; timezone: string },
): FunnelQuery | { error: StatsParamError } {
  const params = parseStatsParams(
    {
      site_id: website.id,
      metrics: 'visitors',
      period: query.period ?? '30d',
      date: query.date,
      filters: query.filters,
    },
    'aggregate',
    'v2',
  );
  if ('error' in params) return params;
  if (params.conversionFilters.length > 0) {
    return {
      error: {
        code: 'UNKNOWN_FILTER_KEY',
        message: `goal, name and props filters do not apply to funnels; use ${FILTER_KEYS.join(', ')}`,
      },
    };
  }
  const period = resolvePeriod(params.period, params.date ?? today(website.timezone), website.timezone);
  if ('error' in period) return { error: { code: period.error, message: `period ${params.period} is not valid` } };
  const filters = withoutGroups(params.filters);
  return 'error' in filters ? filters : { period, filters };
}

/** Groups (or, and, not) would mix page and visit clauses, which funnels apply apart: refused. */
function withoutGroups(clauses: readonly FilterClause[]): Filter[] | { error: StatsParamError } {
  if (clauses.some(isFilterGroup)) {
    return { error: { code: 'VALIDATION_ERROR', message: 'filters: or, and and not groups do not apply to funnels' } };
  }
  return clauses as Filter[];
}

/** The External API's `filters`: the Stats API v2's JSON array or its v1 clauses, with their codes. */
export function parseFilterParam(raw: string | undefined): Filter[] | { error: StatsParamError } {
  if (raw === undefined) return [];
  const filters = raw.trim().startsWith('[') ? parseJsonFilters(raw) : parseFilters(raw);
  return Array.isArray(filters) ? withoutGroups(filters) : { error: filters };
}

const applied = (filters: readonly Filter[]) =>
  filters.map((f) => ({ key: f.key, operator: f.operator, values: f.values }));

interface SiteRef {
  id: string;
  timezone: string;
}

/** The dashboard's answer: the results and the Stats API's meta of the period. */
export async function dashboardFunnelResults(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  funnel: FunnelRow,
  q: FunnelQuery,
): Promise<FunnelResultsView> {
  const { period, filters } = q;
  const range = { websiteId: site.id, timeZone: site.timezone, start: period.start, end: period.end, filters };
  return {
    ...funnelResults(funnel, await funnelVisitors(clickhouse, funnel, range)),
    meta: {
      period: period.period,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      filters_applied: applied(filters),
    },
  };
}

/** The External API's answer: the results over one of its ranges, dated as its other analytics are. */
export async function externalFunnelResults(
  clickhouse: ClickHouseClient,
  site: SiteRef,
  funnel: FunnelRow,
  rangeName: Parameters<typeof resolveRange>[0],
  filters: Filter[],
  now = Date.now(),
): Promise<ExternalFunnelData> {
  const p = resolveRange(rangeName, site.timezone, now);
  const range = { websiteId: site.id, timeZone: site.timezone, start: p.start, end: p.end, filters };
  return {
    ...funnelResults(funnel, await funnelVisitors(clickhouse, funnel, range)),
    time_range: rangeName,
    date_range: {
      start: formatDate(p.first),
      end: formatDate(p.last),
      startDateTime: new Date(p.start).toISOString(),
      endDateTime: new Date(p.end).toISOString(),
    },
    filters_applied: applied(filters),
  };
}
