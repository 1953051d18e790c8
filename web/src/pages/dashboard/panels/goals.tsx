// Goals and conversions: each goal's converted visitors, completions and conversion rate over the view's
// range and filters (Stats API v2, by event:goal). Choosing a goal filters the whole dashboard by it.
import { compact, percent } from '../../../lib/format';
import { Link } from '../../../lib/router';
import { useData } from '../../../lib/useData';
import { Panel } from '../../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../../ui/states';
import { metricValue, runQuery } from '../query';
import type { SectionProps } from '../section';
import { MetricTable } from './metricTable';

export default function GoalsPanel({ site, state, addFilter, shared }: SectionProps) {
  const goals = useData(
    (signal) =>
      runQuery(
        site.id,
        state,
        {
          metrics: ['visitors', 'events', 'conversion_rate'],
          dimensions: ['event:goal'],
          order_by: [['visitors', 'desc']],
        },
        signal,
      ),
    [site.id, JSON.stringify(state)],
  );
  const rows = (goals.data?.results ?? []).map((r) => {
    const [visitors, events, rate] = r.metrics.map(metricValue);
    return {
      key: r.dimensions[0],
      label: r.dimensions[0],
      bar: visitors,
      cells: [compact(visitors), compact(events), percent(rate, 1)],
    };
  });
  return (
    <Panel title="Goals">
      {goals.error ? (
        <ErrorNote error={goals.error} retry={goals.reload} />
      ) : !goals.data ? (
        <Loading label="Loading goals…" />
      ) : rows.length === 0 ? (
        <Empty title="No goals yet">
          {shared ? (
            'This site tracks no goals.'
          ) : (
            <>
              Goals count visitors who sign up, reach a page or buy.{' '}
              <Link href={`/sites/${site.id}/settings/goals`}>Add a goal in settings</Link>.
            </>
          )}
        </Empty>
      ) : (
        <MetricTable
          rows={rows}
          columns={['Visitors', 'Total', 'Conv. rate']}
          labelHeading="Goal"
          caption="Goals: visitors who converted, completions and conversion rate. Choose a goal to filter the dashboard by it."
          onSelect={(row) => addFilter({ dimension: 'event:goal', op: 'is', values: [row.key] })}
        />
      )}
    </Panel>
  );
}
