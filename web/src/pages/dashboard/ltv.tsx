// Lifetime value: customers grouped by the week or month of their first purchase, and the net revenue per
// customer each cohort has brought by the end of every period since (the nightly job's figures, read from
// /api/external/v1/revenue/:id/ltv as a signed-in reader). A curve of all cohorts together, the newest one
// dashed beside it, and the cohort table; what was left out (no exchange rate, no customer) said in words.
import { useMemo, useState } from 'preact/hooks';
import type { LtvData } from '../../../../lib/ltv/schemas';
import { get } from '../../lib/api';
import { compact, money, moneyExact } from '../../lib/format';
import { useData } from '../../lib/useData';
import { type ChartSeries, LineChart } from '../../ui/chart';
import { Choice } from '../../ui/form';
import { Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import './sections/sections.css';
import './sections/ltv.css';

type Granularity = LtvData['granularity'];
type Cohort = LtvData['cohorts'][number];

const GRANULARITIES: { id: Granularity; label: string }[] = [
  { id: 'monthly', label: 'Monthly' },
  { id: 'weekly', label: 'Weekly' },
];
const RANGES = [
  { id: '90d', label: 'Last 90 days' },
  { id: '1y', label: 'Last 12 months' },
];
const UNIT: Record<Granularity, string> = { monthly: 'Month', weekly: 'Week' };

function cohortLabel(date: string, g: Granularity): string {
  const d = new Date(`${date}T00:00:00Z`);
  return g === 'monthly'
    ? d.toLocaleDateString(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' })
    : `Week of ${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })}`;
}

/** Per period, the cumulative revenue per customer of every cohort that has reached it, weighted by customers. */
function allCohorts(cohorts: Cohort[]): (number | null)[] {
  const longest = Math.max(0, ...cohorts.map((c) => c.periods.length));
  return Array.from({ length: longest }, (_, k) => {
    let revenue = 0;
    let customers = 0;
    for (const c of cohorts) {
      const p = c.periods[k];
      if (!p) continue;
      revenue += p.cumulative_revenue_per_customer * c.customers;
      customers += c.customers;
    }
    return customers > 0 ? Math.round((revenue / customers) * 100) / 100 : null;
  });
}

export default function LifetimeValue({ site }: SectionProps) {
  const [granularity, setGranularity] = useState<Granularity>('monthly');
  const [range, setRange] = useState('90d');
  const ltv = useData(
    (signal) =>
      get<LtvData>(`/api/external/v1/revenue/${site.id}/ltv?granularity=${granularity}&range=${range}`, { signal }),
    [site.id, granularity, range],
  );
  const rangePicker = (
    <Choice class="ltv-range" label="Cohorts from" value={range} options={RANGES} onChange={setRange} />
  );
  return (
    <div class="sections">
      <Panel
        title="Lifetime value"
        tabs={GRANULARITIES}
        active={granularity}
        onTab={(id) => setGranularity(id as Granularity)}
        actions={rangePicker}
      >
        {ltv.error ? (
          <ErrorNote error={ltv.error} retry={ltv.reload} />
        ) : !ltv.data ? (
          <Loading label="Loading lifetime value…" />
        ) : (
          <LtvBody data={ltv.data} busy={ltv.loading} />
        )}
      </Panel>
    </div>
  );
}

function LtvBody({ data, busy }: { data: LtvData; busy?: boolean }) {
  const { currency, cohorts, summary, excluded, granularity } = data;
  const unit = UNIT[granularity];
  const labels = useMemo(() => allCohorts(cohorts).map((_, k) => String(k)), [cohorts]);
  const series = useMemo<ChartSeries[]>(() => {
    const newest = cohorts[cohorts.length - 1];
    const all: ChartSeries = { label: 'All cohorts', values: allCohorts(cohorts) };
    if (!newest || cohorts.length < 2) return [all];
    return [
      all,
      {
        label: `Newest (${cohortLabel(newest.cohort_date, granularity)})`,
        values: labels.map((_, k) => newest.periods[k]?.cumulative_revenue_per_customer ?? null),
        dashed: true,
      },
    ];
  }, [cohorts, labels, granularity]);
  const longest = labels.length;
  const left = [
    excluded.unconverted_purchases > 0 &&
      `${compact(excluded.unconverted_purchases)} ${excluded.unconverted_purchases === 1 ? 'purchase' : 'purchases'} in ${excluded.unconverted_currencies.join(', ')} left out: no exchange rate for their day (an operator sets one with tidemark admin rates set).`,
    excluded.unattributed_purchases > 0 &&
      `${compact(excluded.unattributed_purchases)} ${excluded.unattributed_purchases === 1 ? 'purchase' : 'purchases'} without a visitor id or customer email left out.`,
  ].filter((x): x is string => typeof x === 'string');
  return (
    <div class="ltv" aria-busy={busy}>
      <dl class="ltv-kpis">
        <div>
          <dt>Average LTV, first 30 days</dt>
          <dd data-testid="ltv-30d">{moneyExact(summary.average_ltv_30d, currency)}</dd>
          <dd class="ltv-kpi-note">{compact(summary.customers_30d)} customers</dd>
        </div>
        <div>
          <dt>Average LTV, first 90 days</dt>
          <dd data-testid="ltv-90d">{moneyExact(summary.average_ltv_90d, currency)}</dd>
          <dd class="ltv-kpi-note">{compact(summary.customers_90d)} customers</dd>
        </div>
      </dl>
      {data.as_of === null ? (
        <Empty title="Not computed yet">
          Lifetime value is worked out every night from your purchases; the first figures appear after the next run.
        </Empty>
      ) : cohorts.length === 0 ? (
        <Empty title="No customers in this period">
          Customers appear here after their first succeeded purchase, sent with the server API as a purchase event (with
          a visitorId or a customer_email).
        </Empty>
      ) : (
        <>
          <LineChart
            labels={labels}
            series={series}
            height={220}
            formatLabel={(l) => `${unit} ${l}`}
            formatValue={(v) => money(v, currency)}
            summary={`Cumulative revenue per customer in ${currency} by ${unit.toLowerCase()} since the first purchase, for ${cohorts.length} cohorts.`}
          />
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
          <section class="table-scroll" aria-label="Cohort table" tabIndex={0}>
            <table class="data ltv-table">
              <caption class="visually-hidden">
                Cumulative revenue per customer in {currency}, by cohort ({unit.toLowerCase()} of the first purchase)
                and {unit.toLowerCase()} since.
              </caption>
              <thead>
                <tr>
                  <th scope="col">Cohort</th>
                  <th scope="col" class="num">
                    Customers
                  </th>
                  {labels.map((k) => (
                    <th key={k} scope="col" class="num">
                      {unit} {k}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {cohorts.map((c) => (
                  <tr key={c.cohort_date} data-cohort={c.cohort_date}>
                    <th scope="row" class="nowrap">
                      {cohortLabel(c.cohort_date, granularity)}
                    </th>
                    <td class="num">{compact(c.customers)}</td>
                    {Array.from({ length: longest }, (_, k) => (
                      <td key={k} class="num">
                        {c.periods[k] ? moneyExact(c.periods[k].cumulative_revenue_per_customer, currency) : ''}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
      <p class="muted small">
        {data.as_of ? `Purchases up to ${data.as_of}, in ${currency}; refunds subtract. ` : ''}
        {left.join(' ')}
      </p>
    </div>
  );
}
