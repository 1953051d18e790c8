// The overview's breakdown panels: sources, pages, locations and devices, each with tabs for related
// dimensions. A row's click filters the whole dashboard by its value (entry and exit pages excepted: v2
// cannot filter by them yet, so their rows are plain text).
import { useState } from 'preact/hooks';
import { compact } from '../../lib/format';
import { useData } from '../../lib/useData';
import { BarList, Panel } from '../../ui/panel';
import { Empty, ErrorNote } from '../../ui/states';
import { valueLabel } from './labels';
import { metricValue, runQuery } from './query';
import type { SectionProps } from './section';
import { serializeState } from './state';

interface Tab {
  id: string;
  label: string;
  dimension: string;
  /** Heading of the name column. */
  heading: string;
  filterable?: boolean;
}

const ROWS = 10;

function BreakdownPanel({ title, tabs, site, state, addFilter }: SectionProps & { title: string; tabs: Tab[] }) {
  const [active, setActive] = useState(tabs[0].id);
  const tab = tabs.find((t) => t.id === active) ?? tabs[0];
  const rows = useData(
    (signal) =>
      runQuery(
        site.id,
        state,
        { metrics: ['visitors'], dimensions: [tab.dimension], order_by: [['visitors', 'desc']], limit: ROWS },
        signal,
      ),
    [site.id, serializeState(state), tab.dimension],
  );
  let body = null;
  if (rows.error) body = <ErrorNote error={rows.error} retry={rows.reload} />;
  else if (!rows.data) body = <SkeletonRows />;
  else if (rows.data.results.length === 0)
    body = (
      <Empty title={`No ${tab.label.toLowerCase()} in this range`}>
        {state.filters.length ? 'Try removing a filter or a longer range.' : 'Try a longer range.'}
      </Empty>
    );
  else
    body = (
      <BarList
        labelHeading={tab.heading}
        valueLabel="Visitors"
        rows={rows.data.results.map((r) => {
          const value = r.dimensions[0];
          const v = metricValue(r.metrics[0]);
          return { key: value, label: valueLabel(tab.dimension, value), value: v, display: compact(v) };
        })}
        onSelect={
          tab.filterable === false
            ? undefined
            : (row) => addFilter({ dimension: tab.dimension, op: 'is', values: [row.key] })
        }
      />
    );
  return (
    <Panel title={title} tabs={tabs} active={tab.id} onTab={setActive}>
      <div class={rows.loading && rows.data ? 'panel-content is-stale' : 'panel-content'} aria-busy={rows.loading}>
        {body}
      </div>
    </Panel>
  );
}

function SkeletonRows({ count = 5 }: { count?: number }) {
  return (
    <div class="skeleton-rows" aria-hidden="true">
      {Array.from({ length: count }, (_, i) => (
        <span key={i} class="skeleton skeleton-row" style={{ width: `${90 - i * 12}%` }} />
      ))}
    </div>
  );
}

const SOURCES: Tab[] = [
  { id: 'channels', label: 'Channels', dimension: 'visit:channel', heading: 'Channel' },
  { id: 'sources', label: 'Sources', dimension: 'visit:source', heading: 'Source' },
  { id: 'medium', label: 'UTM medium', dimension: 'visit:utm_medium', heading: 'Medium' },
  { id: 'source', label: 'UTM source', dimension: 'visit:utm_source', heading: 'UTM source' },
  { id: 'campaign', label: 'Campaign', dimension: 'visit:utm_campaign', heading: 'Campaign' },
];
const PAGES: Tab[] = [
  { id: 'top', label: 'Top pages', dimension: 'event:page', heading: 'Page' },
  { id: 'entry', label: 'Entry pages', dimension: 'visit:entry_page', heading: 'Entry page', filterable: false },
  { id: 'exit', label: 'Exit pages', dimension: 'visit:exit_page', heading: 'Exit page', filterable: false },
];
const LOCATIONS: Tab[] = [
  { id: 'countries', label: 'Countries', dimension: 'visit:country', heading: 'Country' },
  { id: 'regions', label: 'Regions', dimension: 'visit:region', heading: 'Region' },
  { id: 'cities', label: 'Cities', dimension: 'visit:city', heading: 'City' },
];
const DEVICES: Tab[] = [
  { id: 'devices', label: 'Devices', dimension: 'visit:device', heading: 'Device' },
  { id: 'browsers', label: 'Browsers', dimension: 'visit:browser', heading: 'Browser' },
  { id: 'os', label: 'OS', dimension: 'visit:os', heading: 'Operating system' },
];

export const SourcesPanel = (p: SectionProps) => <BreakdownPanel {...p} title="Sources" tabs={SOURCES} />;
export const PagesPanel = (p: SectionProps) => <BreakdownPanel {...p} title="Pages" tabs={PAGES} />;
export const LocationsPanel = (p: SectionProps) => <BreakdownPanel {...p} title="Locations" tabs={LOCATIONS} />;
export const DevicesPanel = (p: SectionProps) => <BreakdownPanel {...p} title="Devices" tabs={DEVICES} />;
