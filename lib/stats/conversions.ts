// Runs conversion questions (model.ts ConversionQuery): goals completed, custom events by name and property,
// revenue. The conversions are read raw (sql/conversions.ts) but for page goals over rolled-up days
// (plan.ts planConversions); a conversion rate divides by the visitors of the same question without its
// conversion filters, which runStats answers (from rollups where it can).
import { type ClickHouseClient, selectRows } from '../clickhouse/client';
import { type ConversionQuery, type Dimension, isVisitKey, type StatsRow } from './model';
import { filterLeaves } from './params';
import { pageGoalsRollable, planConversions, visitSource } from './plan';
import { coverageFacts, runStats } from './run';
import { conversionsStatement, goalsAsked } from './sql/conversions';

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Converted visitors as a % of all visitors, two decimals (0 without visitors). */
export const conversionRate = (converted: number, all: number) => (all > 0 ? round2((100 * converted) / all) : 0);

/** Whether a dimension is one runStats answers too (time, page, visit key): then rates are per key. */
const sharedDimension = (d: ConversionQuery['dimension']): d is Dimension =>
  d !== undefined && d !== 'goal' && d !== 'name' && !d.startsWith('props:');

/** Visitors of the question without its conversion filters, per key of a shared dimension, else under ''. */
async function visitorsOf(clickhouse: ClickHouseClient, q: ConversionQuery): Promise<Map<string, number>> {
  const dimension = sharedDimension(q.dimension) ? q.dimension : undefined;
  const rows = await runStats(clickhouse, {
    websiteId: q.websiteId,
    timeZone: q.timeZone,
    start: q.start,
    end: q.end,
    filters: q.filters,
    metrics: ['visitors'],
    dimension,
  });
  return new Map(rows.map((r) => [dimension ? r.key : '', r.values.visitors ?? 0]));
}

/**
 * One row per key ('' without a dimension; by goal, the goal's name) with the asked metrics: visitors who
 * converted, completions, conversion rate (% of the visitors, two decimals), net revenue and revenue per
 * purchase in the website's currency (two decimals). Goals without completions are rows of zeros.
 */
export async function runConversions(clickhouse: ClickHouseClient, q: ConversionQuery): Promise<StatsRow[]> {
  const goals = goalsAsked(q);
  const rate = q.metrics.includes('conversion_rate');
  const [rows, visitors] = await Promise.all([
    goals?.length === 0
      ? []
      : (async () => {
          const rollable = pageGoalsRollable(q, goals);
          const facts = await coverageFacts(clickhouse, q, {
            coverage: rollable !== undefined || filterLeaves(q.filters).some((f) => isVisitKey(f.key)),
            window: rollable?.window ?? false,
          });
          const plan = planConversions(q, goals, facts);
          const { sql, params } = conversionsStatement(q, goals, visitSource(q, facts), plan);
          return selectRows<{ k: string; visitors: string; events: string; revenue: string; purchases: string }>(
            clickhouse,
            sql,
            params,
          );
        })(),
    rate ? visitorsOf(clickhouse, q) : undefined,
  ]);
  type Row = (typeof rows)[number];
  const byKey = new Map<string, Row | undefined>();
  // By goal, every goal asked is a row; without a dimension, the one row '' is there even when empty.
  if (q.dimension === 'goal') for (const g of goals ?? []) byKey.set(g.name, undefined);
  if (!q.dimension) byKey.set('', undefined);
  for (const r of rows) byKey.set(q.dimension === 'goal' ? (goals ?? [])[Number(r.k) - 1].name : r.k, r);
  return [...byKey.entries()].map(([key, r]) => {
    const converted = Number(r?.visitors ?? 0);
    const revenue = Number(r?.revenue ?? 0);
    const purchases = Number(r?.purchases ?? 0);
    const all = visitors?.get(sharedDimension(q.dimension) ? key : '') ?? 0;
    const values = {
      visitors: converted,
      events: Number(r?.events ?? 0),
      conversion_rate: conversionRate(converted, all),
      total_revenue: round2(revenue),
      average_revenue: purchases > 0 ? round2(revenue / purchases) : 0,
    };
    return { key, values: Object.fromEntries(q.metrics.map((m) => [m, values[m]])) };
  });
}
