// Revenue: net revenue and revenue per purchase in the site's currency over the view's range and filters
// (Stats API v2; the currency comes with each figure), then the purchase goals one by one. A shared link
// cannot list goals by kind: it shows the goals that brought revenue, and nothing when none did.
import type { GoalView } from '../../../../../lib/accounts/responses';
import { get } from '../../../lib/api';
import { compact, money } from '../../../lib/format';
import { Link } from '../../../lib/router';
import { useData } from '../../../lib/useData';
import { Panel } from '../../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../../ui/states';
import { metricValue, runQuery, type V2Result } from '../query';
import type { SectionProps } from '../section';
import { MetricTable } from './metricTable';

const METRICS = ['events', 'total_revenue', 'average_revenue'];

type Metric = V2Result['results'][number]['metrics'][number];
const currencyOf = (m: Metric) => (m !== null && typeof m === 'object' ? m.currency : undefined);

export default function RevenuePanel({ site, state, shared }: SectionProps) {
  const revenue = useData(
    async (signal) => {
      const [goals, total, byGoal] = await Promise.all([
        shared
          ? undefined
          : get<{ goals: GoalView[] }>(`/api/websites/${site.id}/goals`, { signal }).then((r) => r.goals),
        runQuery(site.id, state, { metrics: METRICS }, signal),
        runQuery(site.id, state, { metrics: METRICS, dimensions: ['event:goal'] }, signal),
      ]);
      const purchaseGoals = goals && new Set(goals.filter((g) => g.kind === 'purchase').map((g) => g.name));
      const rows = byGoal.results.filter((r) =>
        purchaseGoals ? purchaseGoals.has(r.dimensions[0]) : metricValue(r.metrics[1]) !== 0,
      );
      return { hasPurchaseGoals: purchaseGoals ? purchaseGoals.size > 0 : rows.length > 0, total, rows };
    },
    [site.id, shared, JSON.stringify(state)],
  );
  if (shared && revenue.data && !revenue.data.hasPurchaseGoals) return null;
  const body = () => {
    if (revenue.error) return <ErrorNote error={revenue.error} retry={revenue.reload} />;
    if (!revenue.data) return <Loading label="Loading revenue…" />;
    const { hasPurchaseGoals, total, rows } = revenue.data;
    if (!hasPurchaseGoals) {
      return (
        <Empty title="No purchase goal yet">
          Revenue is counted for purchase goals.{' '}
          <Link href={`/sites/${site.id}/settings/goals`}>Add a purchase goal in settings</Link>.
        </Empty>
      );
    }
    const [purchases, net, average] = total.results[0]?.metrics ?? [0, null, null];
    const currency = currencyOf(net) ?? currencyOf(rows[0]?.metrics[1] ?? null) ?? 'USD';
    return (
      <>
        <dl class="cv-kpis">
          <div>
            <dt>Total revenue</dt>
            <dd>{money(metricValue(net), currency)}</dd>
          </div>
          <div>
            <dt>Average per purchase</dt>
            <dd>{money(metricValue(average), currency)}</dd>
          </div>
          <div>
            <dt>Purchases</dt>
            <dd>{compact(metricValue(purchases))}</dd>
          </div>
        </dl>
        {/* Purchases count every currency, revenue and its average only the site's (no exchange rates are kept):
            when average × purchases is off by more than the average's rounding, some were in other currencies. */}
        {Math.abs(metricValue(average) * metricValue(purchases) - metricValue(net)) >
          0.005 * metricValue(purchases) + 0.001 && (
          <p class="cv-note">
            Revenue and its average count purchases in {currency} only; purchases count every currency.
          </p>
        )}
        {metricValue(purchases) === 0 ? (
          <Empty title="No purchases in this period">Try a wider date range or fewer filters.</Empty>
        ) : (
          <MetricTable
            rows={rows.map((r) => ({
              key: r.dimensions[0],
              label: r.dimensions[0],
              bar: metricValue(r.metrics[1]),
              cells: [
                compact(metricValue(r.metrics[0])),
                money(metricValue(r.metrics[1]), currencyOf(r.metrics[1]) ?? currency),
                money(metricValue(r.metrics[2]), currencyOf(r.metrics[2]) ?? currency),
              ],
            }))}
            columns={['Purchases', 'Revenue', 'Average']}
            labelHeading="Goal"
            wide
            caption={`Revenue by purchase goal in ${currency}: purchases, net revenue and revenue per purchase.`}
          />
        )}
      </>
    );
  };
  return <Panel title="Revenue">{body()}</Panel>;
}
