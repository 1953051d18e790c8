// Where each part of a stats query is read from — daily rollups, a merged window, or the raw tables — as a
// pure function of the query and the coverage facts read before it (run.ts reads them): whole closed days
// of questions the rollups can answer come from the rollups, the rest of the range raw, merged in the same
// statement (sql/stats.ts), so both paths give the same numbers.
import type { LateMark, RollupCoverage } from './coverage';
import { staleDays, WINDOW_DIMS_EXCLUDED } from './coverage';
import {
  type ConversionQuery,
  type Dimension,
  type GoalDefinition,
  isRawVisitKey,
  isVisitKey,
  type ModelMetric,
  type RangeQuery,
  type StatsQuery,
  type Window,
} from './model';
import { type Filter, filterLeaves, isFilterGroup } from './params';
import { addDays, daysBetween, earlierDate, formatDate, type LocalDate, laterDate, startOfDay, today } from './time';

/** Which whole local days of a range the rollups answer. */
export interface RollupPlan {
  /** Rolled-up local days, inclusive, as YYYY-MM-DD, without skipDays. */
  firstDay: string;
  lastDay: string;
  /** Days between them read raw: a late event landed after their version. */
  skipDays: string[];
  /** Days whose rows are read at their version only ([day, version]); rows above `newest` are never read. */
  pinned: [string, number][];
  newest: number;
  /** The newest version among the plan's days (a merged window must be at least as new). */
  newestInRange: number;
  /** What the raw tables still answer: the parts of the range outside the rolled-up days. */
  rawWindows: Window[];
}

/** What a query is planned with: the rollups' coverage, late marks, and the merged window over its rolled days. */
export interface CoverageFacts {
  coverage?: RollupCoverage;
  marks?: readonly LateMark[];
  /** The run of a fresh merged window over exactly the plan's rolled-up days (windowRun), when kept. */
  windowRun?: string;
}

/** The local date of an instant when it is that date's midnight; undefined for any other instant. */
function midnightDate(instant: number, timeZone: string): LocalDate | undefined {
  const d = today(timeZone, instant);
  return startOfDay(d, timeZone) === instant ? d : undefined;
}

/** Which whole days of [start, end) the rollups answer; undefined when none (or the range is not whole days). */
export function planDays(
  q: Pick<RangeQuery, 'timeZone' | 'start' | 'end'>,
  facts: CoverageFacts,
): RollupPlan | undefined {
  const { timeZone, start, end } = q;
  const { coverage } = facts;
  const from = midnightDate(start, timeZone);
  const until = midnightDate(end, timeZone);
  if (!from || !until || !coverage) return undefined;
  const stale = staleDays(coverage, facts.marks ?? [], timeZone);
  let first = laterDate(coverage.first, from);
  let last = earlierDate(coverage.last, addDays(until, -1));
  while (daysBetween(first, last) >= 0 && stale.has(formatDate(first))) first = addDays(first, 1);
  while (daysBetween(first, last) >= 0 && stale.has(formatDate(last))) last = addDays(last, -1);
  if (daysBetween(first, last) < 0) return undefined;
  const [firstDay, lastDay] = [formatDate(first), formatDate(last)];
  const skipDays: string[] = [];
  const pinned: [string, number][] = [];
  let newestInRange = 0;
  const rawWindows: Window[] = [{ start, end: startOfDay(first, timeZone) }];
  for (let d = first; daysBetween(d, last) >= 0; d = addDays(d, 1)) {
    const day = formatDate(d);
    const known = coverage.days.get(day)!;
    if (stale.has(day)) {
      skipDays.push(day);
      const window = { start: startOfDay(d, timeZone), end: startOfDay(addDays(d, 1), timeZone) };
      const previous = rawWindows[rawWindows.length - 1];
      if (previous.end === window.start) previous.end = window.end;
      else rawWindows.push(window);
      continue;
    }
    if (known.superseded) pinned.push([day, known.version]);
    newestInRange = Math.max(newestInRange, known.version);
  }
  rawWindows.push({ start: startOfDay(addDays(last, 1), timeZone), end });
  return {
    firstDay,
    lastDay,
    skipDays,
    pinned,
    newest: coverage.newest,
    newestInRange,
    rawWindows: rawWindows.filter((w) => w.end > w.start),
  };
}

/**
 * Visit keys whose values closed days keep as one combination per visit (the rollups' `attrs` and `s:attrs`
 * rows), in that order: questions filtered on these alone read closed days from those.
 */
export const ATTRIBUTE_KEYS: readonly Filter['key'][] = ['country', 'browser', 'os', 'device'];

/** Dimensions that describe a whole visit: every metric is computed over sessions. */
const SESSION_DIMENSIONS: ReadonlySet<Dimension | undefined> = new Set(['entry_page', 'exit_page']);
export const bySessions = (q: Pick<StatsQuery, 'dimension'>) => SESSION_DIMENSIONS.has(q.dimension);
// Views per visit divides the event part's pageviews by the session part's visits (run.ts).
const EVENT_METRICS: readonly ModelMetric[] = ['visitors', 'pageviews', 'events', 'views_per_visit'];
const SESSION_METRICS: readonly ModelMetric[] = [
  'visit_duration',
  'bounce_rate',
  'visits',
  'value_score',
  'views_per_visit',
];

/**
 * What the rollups do not hold: the visit keys of RAW_VISIT_KEYS (as the dimension or in any filter, however
 * deep in a group) and engaged time (time_on_page). A query that uses any reads raw events only.
 */
export function usesRawOnly(q: Pick<StatsQuery, 'dimension' | 'filters' | 'metrics'>): boolean {
  return (
    isRawVisitKey(q.dimension) ||
    filterLeaves(q.filters).some((f) => isRawVisitKey(f.key)) ||
    q.metrics.includes('time_on_page')
  );
}

/** Whether a filter list has a visit-key clause (whose visit values a read must find: visitSource). */
const hasVisitKey = (q: Pick<RangeQuery, 'filters'>) => filterLeaves(q.filters).some((f) => isVisitKey(f.key));

/** The rollup dimensions that hold a query's event metrics and its session metrics; undefined: none can. */
export interface RollupDims {
  events: string;
  sessions: string;
}

/** The rollup dimensions of an unfiltered question by a dimension. */
function rollupDimsOf(d: Dimension | undefined): RollupDims | undefined {
  switch (d) {
    case undefined:
    case 'time:day':
    case 'time:month':
    case 'time:week':
      return { events: '', sessions: 's:' };
    case 'time:hour':
      return undefined;
    case 'page':
      return { events: 'page', sessions: 's:entry_page' };
    case 'entry_page':
    case 'exit_page':
      return { events: `s:${d}`, sessions: `s:${d}` };
    default:
      return { events: d, sessions: `s:${d}` };
  }
}

/**
 * Unfiltered, every dimension but the hour has rollups; filtered on attributes alone, totals and day or
 * month buckets read the `attrs` rollups; any other filter reads the whole range raw.
 */
function rollupDims(q: Pick<StatsQuery, 'filters' | 'dimension' | 'metrics'>): RollupDims | undefined {
  if (usesRawOnly(q)) return undefined;
  if (q.filters.length === 0) return rollupDimsOf(q.dimension);
  const attributesOnly = q.filters.every((f) => !isFilterGroup(f) && ATTRIBUTE_KEYS.includes(f.key));
  const byRange =
    q.dimension === undefined ||
    q.dimension === 'time:day' ||
    q.dimension === 'time:month' ||
    q.dimension === 'time:week';
  return attributesOnly && byRange ? { events: 'attrs', sessions: 's:attrs' } : undefined;
}

/**
 * Where a read finds its sessions' visit values for visit-key filters (sql/visits.ts): the sessions begun on
 * `days` from `visit_values` (the rollup job keeps each day's), the others around `around` (each window
 * widened by a day) folded from `sessions`.
 */
export interface VisitSource {
  around: readonly Window[];
  days?: RollupPlan;
}

/**
 * The VisitSource of a read of a whole range: a visit-key filter over rolled-up days reads their sessions'
 * values from visit_values, and folds the sessions around the rest of the range (its raw windows and its two
 * edges); otherwise the sessions around the range.
 */
export function visitSource(q: RangeQuery, facts: CoverageFacts): VisitSource {
  const range = { start: q.start, end: q.end };
  // visit_values holds only the rolled-up visit keys.
  const rawOnly = filterLeaves(q.filters).some((f) => isRawVisitKey(f.key));
  const days = hasVisitKey(q) && !rawOnly ? planDays(q, facts) : undefined;
  if (!days) return { around: [range] };
  return {
    around: [{ start: range.start, end: range.start }, ...days.rawWindows, { start: range.end, end: range.end }],
    days,
  };
}

/**
 * Where a conversion question's page-goal completions are read: a page goal is the `page` rollup rows whose
 * value its pattern matches (their visitors and pageviews are exactly the goal's), so over rolled-up days
 * they come from the daily rows or a merged window and only the raw windows' pageviews are scanned. Other
 * goals' rows (custom events, purchases) are few and sorted apart (the events' key has `type`): always raw.
 */
export interface ConversionPlan {
  days: RollupPlan;
  /** The merged window's run, when one serves (a total or the goal breakdown, not time buckets). */
  run?: string;
}

/** Whether rollups may answer a conversion question's page goals: unfiltered but by goal, by goal or time. */
export function pageGoalsRollable(
  q: Pick<ConversionQuery, 'filters' | 'conversionFilters' | 'dimension'>,
  goals: readonly GoalDefinition[] | undefined,
): { window: boolean } | undefined {
  const d = q.dimension;
  const byRange = d === undefined || d === 'goal';
  const byTime = d === 'time:day' || d === 'time:week' || d === 'time:month';
  if (q.filters.length > 0 || q.conversionFilters.some((f) => f.key !== 'goal') || !(byRange || byTime)) return;
  if (!goals?.some((g) => g.kind === 'page')) return;
  return { window: byRange };
}

export function planConversions(
  q: ConversionQuery,
  goals: readonly GoalDefinition[] | undefined,
  facts: CoverageFacts,
): ConversionPlan | undefined {
  const rollable = pageGoalsRollable(q, goals);
  const days = rollable && planDays(q, facts);
  if (!days) return undefined;
  // The window's pageview sums count a stale day's rolled rows too: with one read raw, daily rows only.
  const run = rollable.window && windowSumsServe(days) ? facts.windowRun : undefined;
  return { days, ...(run ? { run } : {}) };
}

const timeDimension = (q: Pick<StatsQuery, 'dimension'>) => q.dimension?.startsWith('time:') === true;

/** The facts a query needs read before it is planned: the coverage, and whether a merged window may serve. */
export function factsNeeded(q: StatsQuery): { coverage: boolean; window: boolean } {
  const dims = rollupDims(q);
  const byDay = q.dimension === 'time:day';
  // Merged windows answer a range total or breakdown over the plan's days with one row per value: sketches
  // and sums (see windowSumsServe); by day only the total's visitors.
  const window =
    dims !== undefined &&
    (!timeDimension(q) || (byDay && q.total === true && q.metrics.includes('visitors') && q.filters.length === 0));
  return { coverage: dims !== undefined || (hasVisitKey(q) && !usesRawOnly(q)), window };
}

/**
 * Whether a window's sums may stand for the plan's days: not when a day between is read raw (its rolled
 * sums would count twice; visitor sketches only union, so the window's sketches serve anyway).
 */
export const windowSumsServe = (days: RollupPlan) => days.skipDays.length === 0;

/** The event metrics' part (visitors, pageviews, events). */
export interface EventPart {
  /** Raw events of the plan's raw windows. */
  raw: boolean;
  /** Daily rollup rows: visitors from their sketches, from their own day counts, or none from them. */
  daily?: 'sketches' | 'day counts' | 'no visitors';
  /** The merged window's rows: visitor sketches (when asked), its sums when they stand for the days (no daily rows then). */
  window?: { visitors: boolean; sums: boolean; totalOnly: boolean };
  /** All raw: visitors counted where the rows are read, not as sketches merged a level up. */
  direct: boolean;
}

/** The session metrics' part (visits, visit duration, bounce rate, value score; all metrics by entry or exit page). */
export interface SessionPart {
  raw: boolean;
  /** Rolled-up days: from daily rows or the merged window's, of the `s:attrs` combinations when filtered. */
  rolled?: { from: 'daily' | 'window'; filtered: boolean };
}

/** Engaged time per pageview (time_on_page), always from raw events. */
export interface EngagementPart {
  raw: true;
}

/** Value scores by page: a visit's score counts for every page it viewed. */
export interface PageScorePart {
  raw: boolean;
  daily: boolean;
}

export interface StatsPlan {
  /** The rolled-up days whose rollup rows are read (with `dims`). */
  days?: RollupPlan;
  dims?: RollupDims;
  /** What is read raw: the whole range, or the parts of it outside `days`. */
  raw: Window[];
  /** The merged window's run read. */
  run?: string;
  visits: VisitSource;
  events?: EventPart;
  sessions?: SessionPart;
  pageScores?: PageScorePart;
  engagement?: EngagementPart;
}

/** Decides a query's reads from its facts. */
export function planStats(q: StatsQuery, facts: CoverageFacts): StatsPlan {
  if (q.keys && (q.dimension === undefined || timeDimension(q)))
    throw new RangeError('keys need a breakdown dimension');
  if (q.total && !timeDimension(q)) throw new RangeError('total needs a time dimension');
  const dims = rollupDims(q);
  const days = dims ? planDays(q, facts) : undefined;
  const raw = days ? days.rawWindows : [{ start: q.start, end: q.end }];
  const filtered = q.filters.length > 0;
  const wantVisitors = q.metrics.includes('visitors');
  const byDay = q.dimension === 'time:day';
  const run = days && factsNeeded(q).window ? facts.windowRun : undefined;
  const windowSums = (dim: string) =>
    run !== undefined && !timeDimension(q) && windowSumsServe(days!) && !WINDOW_DIMS_EXCLUDED.includes(dim);
  // Rolled-up days read from rollups, the raw windows' events and sessions have visits begun around them.
  const visits = days ? { around: raw } : visitSource(q, facts);
  const plan: StatsPlan = { days, dims, raw, run, visits };

  if (!bySessions(q) && q.metrics.some((m) => EVENT_METRICS.includes(m))) {
    const sums = dims !== undefined && windowSums(dims.events);
    const windowed = run !== undefined && (wantVisitors || sums);
    // A day's own count serves its day row, unless the daily sketches must be read anyway for the total.
    // (Not under filters: a day's visitors may span several `attrs` rows, so only sketches add up.)
    const dayCounts = wantVisitors && byDay && !filtered && (windowed || !q.total);
    const dailySketch = wantVisitors && !windowed && !dayCounts;
    const daily = days && !sums ? (dailySketch ? 'sketches' : dayCounts ? 'day counts' : 'no visitors') : undefined;
    const window = windowed && days ? { visitors: wantVisitors, sums, totalOnly: byDay } : undefined;
    // Not with a total: its grouping set would compute the key expression from default values, where the
    // nested form gives it ''.
    const direct = raw.length > 0 && !window && !daily && !q.total;
    plan.events = { raw: raw.length > 0, daily, window, direct };
  }
  if (
    bySessions(q) ||
    q.metrics.some((m) => SESSION_METRICS.includes(m) && !(scoresByViews(q) && m === 'value_score'))
  ) {
    const sums = dims !== undefined && windowSums(dims.sessions);
    plan.sessions = { raw: raw.length > 0, rolled: days ? { from: sums ? 'window' : 'daily', filtered } : undefined };
  }
  if (scoresByViews(q)) plan.pageScores = { raw: raw.length > 0, daily: days !== undefined };
  // By entry or exit page, the sessions part computes it from its visits.
  if (q.metrics.includes('time_on_page') && !bySessions(q)) plan.engagement = { raw: true };
  return plan;
}

/** By page, a visit's score counts for every page it viewed (not only its entry page). */
export const scoresByViews = (q: Pick<StatsQuery, 'dimension' | 'metrics'>) =>
  q.dimension === 'page' && q.metrics.includes('value_score');

/** Several breakdowns' event metrics in one pass (run.ts runEventBreakdowns). */
export interface EventBreakdownsPlan {
  days?: RollupPlan;
  raw: Window[];
  run?: string;
  /** The window's sums stand for the days: no daily rows. */
  sums: boolean;
  visits: VisitSource;
}

/** Unfiltered, rolled-up days come from the rollups (and the merged window); filtered, the range is read raw. */
export function planEventBreakdowns(q: RangeQuery, facts: CoverageFacts): EventBreakdownsPlan {
  const days = q.filters.length === 0 ? planDays(q, facts) : undefined;
  const run = days ? facts.windowRun : undefined;
  const raw = days ? days.rawWindows : [{ start: q.start, end: q.end }];
  return {
    days,
    raw,
    run,
    sums: run !== undefined && windowSumsServe(days!),
    visits: days ? { around: raw } : visitSource(q, facts),
  };
}
