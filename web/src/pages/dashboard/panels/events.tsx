// Custom events by name (visitors and completions, Stats API v2 by event:name); choosing one shows its
// properties: each key's values with their counts over the view's range and filters. The keys come from the
// External API's custom-events read (the only list of them); their values and counts from v2 by
// event:props:<key>, so they follow the dashboard's range and filters like every other figure.
import { useState } from 'preact/hooks';
import type { CustomEventsData } from '../../../../../lib/external/schemas';
import { get, qs } from '../../../lib/api';
import { compact } from '../../../lib/format';
import { useData } from '../../../lib/useData';
import { BarList, Panel } from '../../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../../ui/states';
import { metricValue, runQuery } from '../query';
import type { SectionProps } from '../section';
import type { DashboardState } from '../state';
import { MetricTable } from './metricTable';

/** Property keys shown for one event (the External read keeps 10 per event). */
const MAX_KEYS = 10;
const VALUES_PER_KEY = 10;
/** The keys Stats v2 can break down by (lib/stats/params.ts PROP_KEY; the web bundle imports types only). */
const PROP_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The External API's range that covers the view's (a wider one only lists keys that may have no values). */
function keysRange(state: DashboardState): string {
  switch (state.range) {
    case 'today':
    case '24h':
      return '7d';
    case '7d':
      return '30d';
    case '30d':
    case 'month':
      return '90d';
    default:
      return '1y';
  }
}

export default function EventsPanel(props: SectionProps) {
  const { site, state } = props;
  const [selected, setSelected] = useState<string | null>(null);
  const events = useData(
    (signal) =>
      runQuery(
        site.id,
        state,
        { metrics: ['visitors', 'events'], dimensions: ['event:name'], order_by: [['events', 'desc']], limit: 100 },
        signal,
      ),
    [site.id, JSON.stringify(state)],
  );
  const rows = (events.data?.results ?? [])
    .filter((r) => r.dimensions[0] !== '')
    .map((r) => {
      const [visitors, count] = r.metrics.map(metricValue);
      return { key: r.dimensions[0], label: r.dimensions[0], bar: count, cells: [compact(visitors), compact(count)] };
    });
  const back = selected ? (
    <button type="button" class="button button-secondary button-small" onClick={() => setSelected(null)}>
      All events
    </button>
  ) : undefined;
  return (
    <Panel title="Custom events" actions={back}>
      {events.error ? (
        <ErrorNote error={events.error} retry={events.reload} />
      ) : !events.data ? (
        <Loading label="Loading custom events…" />
      ) : selected ? (
        <EventProperties {...props} name={selected} />
      ) : rows.length === 0 ? (
        <Empty title="No custom events in this period">
          Send one with{' '}
          <code>
            tidemark('Signup', {'{'} props: {'{'} plan: 'pro' {'}'} {'}'})
          </code>{' '}
          from your site, or widen the date range.
        </Empty>
      ) : (
        <MetricTable
          rows={rows}
          columns={['Visitors', 'Events']}
          labelHeading="Event"
          caption="Custom events: visitors and completions. Choose an event to see its properties."
          onSelect={(row) => setSelected(row.key)}
        />
      )}
    </Panel>
  );
}

function EventProperties({ site, state, addFilter, shared, name }: SectionProps & { name: string }) {
  const properties = useData(
    async (signal) => {
      // A shared link reads aggregates through Stats v2 only: no list of keys to break down by.
      if (shared) return [];
      const listed = await get<CustomEventsData>(
        `/api/external/v1/analytics/${site.id}/events${qs({ range: keysRange(state), limit: 100 })}`,
        { signal },
      );
      const keys = (listed.events.find((e) => e.name === name)?.properties ?? [])
        .map((p) => p.key)
        .filter((k) => PROP_KEY.test(k))
        .slice(0, MAX_KEYS);
      const byKey = await Promise.all(
        keys.map(async (key) => {
          const res = await runQuery(
            site.id,
            // The chosen event replaces an event-name filter of the view (both would select nothing).
            { ...state, filters: state.filters.filter((f) => f.dimension !== 'event:name') },
            {
              metrics: ['visitors', 'events'],
              dimensions: [`event:props:${key}`],
              order_by: [['events', 'desc']],
              limit: VALUES_PER_KEY,
              filters: [{ dimension: 'event:name', op: 'is', values: [name] }],
            },
            signal,
          );
          const values = res.results
            .map((r) => ({
              value: r.dimensions[0],
              visitors: metricValue(r.metrics[0]),
              events: metricValue(r.metrics[1]),
            }))
            .filter((v) => v.events > 0);
          return { key, values };
        }),
      );
      return byKey.filter((k) => k.values.length > 0);
    },
    [site.id, name, shared, JSON.stringify(state)],
  );
  return (
    <div class="cv-props">
      <div class="cv-props-head">
        <h3>{name}</h3>
        <button
          type="button"
          class="button button-secondary button-small"
          onClick={() => addFilter({ dimension: 'event:name', op: 'is', values: [name] })}
        >
          Filter dashboard by {name}
        </button>
      </div>
      {shared ? (
        <Empty title="Properties are not shown on a shared dashboard" />
      ) : properties.error ? (
        <ErrorNote error={properties.error} retry={properties.reload} />
      ) : !properties.data ? (
        <Loading label="Loading properties…" />
      ) : properties.data.length === 0 ? (
        <Empty title={`No properties recorded for ${name} in this period`}>
          Properties come with the event, e.g.{' '}
          <code>
            {'{'} props: {'{'} plan: 'pro' {'}'} {'}'}
          </code>
          .
        </Empty>
      ) : (
        properties.data.map((p) => (
          <section key={p.key} class="cv-prop" aria-label={`Property ${p.key}`}>
            <h4>{p.key}</h4>
            <BarList
              labelHeading="Value"
              valueLabel="Events"
              extraLabel="Visitors"
              rows={p.values.map((v) => ({
                key: v.value,
                label: v.value === '' ? '(not set)' : v.value,
                value: v.events,
                display: compact(v.events),
                extra: compact(v.visitors),
              }))}
              onSelect={(row) => addFilter({ dimension: `event:props:${p.key}`, op: 'is', values: [row.key] })}
            />
          </section>
        ))
      )}
    </div>
  );
}
