// A site's overview (/sites/:id): the range and comparison, the filters as removable chips, the KPI cards,
// visitors over time with annotation markers, and the breakdown and conversion panels. Everything is read
// through Stats v2 (query.ts), so a shared dashboard shows the same page with its share token.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { AnnotationView } from '../../../../lib/accounts/annotationSchemas';
import type { Anomaly } from '../../../../lib/external/anomalySchemas';
import { get, qs } from '../../lib/api';
import { change, compact, duration, percent } from '../../lib/format';
import { Link } from '../../lib/router';
import { useData } from '../../lib/useData';
import { type ChartBand, type ChartMarker, type ChartSeries, LineChart } from '../../ui/chart';
import { Empty, ErrorNote } from '../../ui/states';
import { DevicesPanel, LocationsPanel, PagesPanel, SourcesPanel } from './breakdowns';
import { bucketLabel, dimensionLabel, localStamp, operatorLabel, valueLabel } from './labels';
import { type Overview as Figures, type Kpi, kpisFor, overviewData } from './overviewData';
import AskPanel from './panels/ask';
import EventsPanel from './panels/events';
import FunnelsPanel from './panels/funnels';
import GoalsPanel from './panels/goals';
import RevenuePanel from './panels/revenue';
import type { SectionProps } from './section';
import {
  effectiveInterval,
  type Interval,
  intervalsFor,
  RANGES,
  type RangeId,
  serializeState,
  withoutFilter,
} from './state';

const RANGE_LABELS: Record<RangeId, string> = {
  today: 'Today',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  month: 'This month',
  '6mo': 'Last 6 months',
  '12mo': 'Last 12 months',
  custom: 'Custom range',
};

const INTERVAL_LABELS: Record<Interval, string> = { hour: 'Hours', day: 'Days', week: 'Weeks', month: 'Months' };

const PANEL_PLACEHOLDERS = [1, 2, 3, 4];

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

function RangeBar({ state, setState }: Pick<SectionProps, 'state' | 'setState'>) {
  return (
    <div class="range-bar">
      <label class="inline-field">
        <span>Range</span>
        <select
          value={state.range}
          onChange={(e) => {
            const range = e.currentTarget.value as RangeId;
            setState({
              ...state,
              range,
              // A custom range starts as the last 7 days, to be edited.
              from: range === 'custom' ? (state.from ?? daysAgo(6)) : undefined,
              to: range === 'custom' ? (state.to ?? today()) : undefined,
              interval: null,
            });
          }}
        >
          {RANGES.map((r) => (
            <option key={r} value={r}>
              {RANGE_LABELS[r]}
            </option>
          ))}
        </select>
      </label>
      {state.range === 'custom' && (
        <>
          <label class="inline-field">
            <span>From</span>
            <input
              type="date"
              value={state.from}
              max={state.to}
              onChange={(e) =>
                e.currentTarget.value && setState({ ...state, from: e.currentTarget.value, interval: null })
              }
            />
          </label>
          <label class="inline-field">
            <span>To</span>
            <input
              type="date"
              value={state.to}
              min={state.from}
              onChange={(e) =>
                e.currentTarget.value && setState({ ...state, to: e.currentTarget.value, interval: null })
              }
            />
          </label>
        </>
      )}
      <label class="switch">
        <input
          type="checkbox"
          role="switch"
          checked={state.compare}
          aria-checked={state.compare}
          onChange={(e) => setState({ ...state, compare: e.currentTarget.checked })}
        />
        <span>Compare with previous period</span>
      </label>
    </div>
  );
}

function FilterChips({ state, setState }: Pick<SectionProps, 'state' | 'setState'>) {
  if (!state.filters.length) return null;
  return (
    <ul class="chips" aria-label="Filters">
      {state.filters.map((f) => {
        const text = `${dimensionLabel(f.dimension)} ${operatorLabel(f.op)} ${f.values.map((v) => valueLabel(f.dimension, v)).join(' or ')}`;
        return (
          <li key={`${f.dimension}:${f.op}:${f.values.join(',')}`} class="chip">
            <span>{text}</span>
            <button
              type="button"
              class="chip-remove"
              aria-label={`Remove filter ${text}`}
              onClick={() => setState(withoutFilter(state, f))}
            >
              ×
            </button>
          </li>
        );
      })}
      {state.filters.length > 1 && (
        <li>
          <button type="button" class="linklike chip-clear" onClick={() => setState({ ...state, filters: [] })}>
            Clear all
          </button>
        </li>
      )}
    </ul>
  );
}

function KpiCards({ kpis, data }: { kpis: Kpi[]; data: Figures | undefined }) {
  return (
    <ul class="kpis" aria-label="Key figures">
      {kpis.map((k) => {
        const now = data?.kpis[k.metric];
        const before = data?.previous?.kpis[k.metric];
        const delta = data?.previous ? change(now, before) : null;
        const good = delta === null || delta === 0 ? null : delta > 0 !== Boolean(k.lowerIsBetter);
        return (
          <li key={k.metric} class="kpi" data-metric={k.metric} data-value={now}>
            <span class="kpi-label">{k.label}</span>
            {now === undefined ? (
              <span class="skeleton kpi-skeleton" aria-hidden="true" />
            ) : (
              <span class="kpi-value">{k.format(now)}</span>
            )}
            {data?.previous && (
              <span
                class={`kpi-change ${good === null ? '' : good ? 'is-good' : 'is-bad'}`}
                data-change={delta === null ? '' : delta.toFixed(1)}
              >
                {delta === null ? (
                  <span title="Nothing to compare with in the previous period">—</span>
                ) : (
                  <>
                    <span aria-hidden="true">{delta > 0 ? '↑' : delta < 0 ? '↓' : '→'}</span>
                    <span class="visually-hidden">{delta > 0 ? 'up' : delta < 0 ? 'down' : 'unchanged'}</span>{' '}
                    {percent(Math.abs(delta))}
                  </>
                )}
                <span class="kpi-before"> vs {k.format(before ?? 0)}</span>
              </span>
            )}
          </li>
        );
      })}
    </ul>
  );
}

const ANOMALY_METRICS: Record<string, string> = {
  visitors: 'Visitors',
  pageviews: 'Pageviews',
  bounce_rate: 'Bounce rate',
  visit_duration: 'Visit duration',
  error_rate: 'Errors per pageview',
};

/** An anomaly's metric, figures and change in words: "Visitors 315 against 90 expected (+250 %)". */
function anomalyText(a: Anomaly): string {
  const name = a.goal ? `Conversions of ${a.goal.name}` : (ANOMALY_METRICS[a.metric_name] ?? a.metric_name);
  const value = (v: number) =>
    a.metric_name === 'bounce_rate'
      ? percent(v)
      : a.metric_name === 'visit_duration'
        ? duration(v)
        : a.metric_name === 'error_rate'
          ? String(Math.round(v * 1000) / 1000)
          : compact(v);
  const sign = a.direction === 'spike' ? '+' : '−';
  return `${name} ${value(a.actual_value)} against ${value(a.expected_value)} expected (${sign}${percent(a.deviation_percentage)})`;
}

const SEVERITY_RANK: Record<Anomaly['severity'], number> = { info: 1, warning: 2, critical: 3 };

const suspectsText = (a: Anomaly) => a.suspect_annotations.map((s) => `${s.type}: ${s.message}`).join('; ');

/** When an anomaly was seen, in the site's time: "Nov 5, 10:00–12:00" (its hours, the last one's end). */
function anomalySpan(a: Anomaly, timeZone: string): string {
  const fmt = (iso: string, withDay: boolean) =>
    new Date(iso).toLocaleString('en', {
      timeZone,
      ...(withDay ? { month: 'short', day: 'numeric' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
  const end = new Date(Date.parse(a.last_seen_at) + 3_600_000).toISOString();
  const sameDay = localStamp(a.started_at, timeZone).slice(0, 10) === localStamp(end, timeZone).slice(0, 10);
  return `${fmt(a.started_at, true)}–${fmt(end, !sameDay)}`;
}

function useAnnotations(site: SectionProps['site'], resolved: [string, string] | undefined, shared?: boolean) {
  return useData(
    async (signal) => {
      // Annotations are the signed-in team's notes: the session cookie reads them (no Bearer token), and a
      // shared dashboard never shows them.
      if (shared || !resolved) return [];
      const body = await get<{ annotations: AnnotationView[] }>(
        `/api/annotations${qs({ websiteId: site.id, from: resolved[0], to: resolved[1] })}`,
        { signal, anonymous: true },
      );
      return body.annotations;
    },
    [site.id, resolved?.[0], resolved?.[1], shared],
  );
}

function Chart({ data, state, setState, site, shared }: SectionProps & { data: Figures }) {
  const interval = effectiveInterval(state);
  const offered = intervalsFor(state);
  const annotations = useAnnotations(site, data.resolved, shared);
  const { labels, series } = useMemo(() => {
    const current = data.series;
    const list: ChartSeries[] = [{ label: 'Visitors', values: current.values }];
    if (data.previous) {
      // Bucket i of the previous period against bucket i of this one (equal lengths; a month more or less
      // of a 6-month range leaves a gap or drops the extra).
      const values = current.labels.map((_, i) => data.previous?.series.values[i] ?? null);
      list.push({ label: 'Previous period', values, dashed: true });
    }
    return { labels: current.labels, series: list };
  }, [data]);
  const oneDay = labels.length > 0 && labels[0].slice(0, 10) === labels[labels.length - 1].slice(0, 10);
  const markers = useMemo<ChartMarker[]>(() => {
    const out: ChartMarker[] = [];
    for (const a of annotations.data ?? []) {
      const at = localStamp(a.occurred_at, site.timezone);
      let index = -1;
      for (let i = 0; i < labels.length && labels[i] <= at; i++) index = i;
      if (index >= 0)
        out.push({ index, label: `${a.type}: ${a.message} (${new Date(a.occurred_at).toLocaleString()})` });
    }
    return out;
  }, [annotations.data, labels, site.timezone]);
  const anomalies = data.series.anomalies ?? [];
  const bands = useMemo<ChartBand[]>(() => {
    // The buckets holding an anomaly's first and last hours (the last bucket starting at or before each).
    const bucketOf = (iso: string) => {
      const at = localStamp(iso, site.timezone);
      let index = -1;
      for (let i = 0; i < labels.length && labels[i] <= at; i++) index = i;
      return index;
    };
    const spans = anomalies
      .map((a) => ({ a, from: Math.max(0, bucketOf(a.started_at)), to: bucketOf(a.last_seen_at) }))
      .filter((x) => x.to >= 0)
      .sort((x, y) => x.from - y.from || x.to - y.to);
    // Anomalies sharing buckets (several metrics of one hour; a day holding a spike and a drop) are one band, in
    // the worst severity's colour, its label naming each: stacked stripes would muddy into one dark block.
    const out: (ChartBand & { rank: number })[] = [];
    for (const { a, from, to } of spans) {
      const suspects = suspectsText(a);
      const text = `Anomaly (${a.severity}), ${anomalySpan(a, site.timezone)}: ${anomalyText(a)}${suspects ? `. Suspect changes: ${suspects}` : ''}`;
      const rank = SEVERITY_RANK[a.severity];
      const last = out[out.length - 1];
      if (last && from <= last.to) {
        last.to = Math.max(last.to, to);
        last.label = `${last.label}\n${text}`;
        if (rank > last.rank) Object.assign(last, { rank, tone: a.severity });
      } else out.push({ from, to, tone: a.severity, label: text, rank });
    }
    return out.map(({ rank: _, ...band }) => band);
  }, [anomalies, labels, site.timezone]);
  const total = data.series.values.reduce((a, b) => a + b, 0);
  return (
    <section class="panel chart-panel" aria-label="Visitors over time">
      <div class="panel-head">
        <h2>Visitors over time</h2>
        {offered.length > 1 && (
          <fieldset class="segmented">
            <legend class="visually-hidden">Interval</legend>
            {offered.map((i) => (
              <button
                key={i}
                type="button"
                class={i === interval ? 'tab tab-active' : 'tab'}
                aria-pressed={i === interval}
                onClick={() => setState({ ...state, interval: i })}
              >
                {INTERVAL_LABELS[i]}
              </button>
            ))}
          </fieldset>
        )}
      </div>
      <div class="panel-body">
        <LineChart
          labels={labels}
          series={series}
          markers={markers}
          bands={bands}
          formatLabel={(l) => bucketLabel(l, interval, oneDay)}
          formatValue={(v) => compact(v)}
          summary={`Visitors per ${interval}: ${compact(total)} in all over ${labels.length} ${INTERVAL_LABELS[interval].toLowerCase()}.`}
        />
        {anomalies.length > 0 && (
          <ul class="chart-anomalies" aria-label="Anomalies in this range">
            {anomalies.map((a) => (
              <li key={a.id} class="chart-anomaly" data-metric={a.metric_name} data-severity={a.severity}>
                <span class={`anomaly-severity is-${a.severity}`}>{a.severity}</span>
                <span>
                  {anomalySpan(a, site.timezone)} · {anomalyText(a)}
                  {a.is_resolved ? '' : ' · ongoing'}
                  {a.suspect_annotations.length > 0 && (
                    <span class="anomaly-suspects"> · suspect changes: {suspectsText(a)}</span>
                  )}
                </span>
              </li>
            ))}
          </ul>
        )}
        {annotations.error && <p class="chart-note">Annotations could not be loaded: {annotations.error.message}</p>}
      </div>
    </section>
  );
}

function ChartSkeleton() {
  return (
    <section class="panel chart-panel" aria-label="Visitors over time" aria-busy="true">
      <div class="panel-head">
        <h2>Visitors over time</h2>
      </div>
      <div class="panel-body">
        <span class="skeleton chart-skeleton" />
      </div>
    </section>
  );
}

export default function Overview(props: SectionProps) {
  const { site, state, setState, shared } = props;
  const interval = effectiveInterval(state);
  const overview = useData(
    (signal) => overviewData(site.id, state, interval, signal),
    [site.id, serializeState(state), interval],
  );
  const data = overview.data;
  // The store answers one query at a time: the key figures and the chart are asked first, and the panels'
  // dozen questions only once they have answered (later changes of the view ask everything at once).
  const [primed, setPrimed] = useState(false);
  useEffect(() => {
    if (data || overview.error) setPrimed(true);
  }, [data, overview.error]);
  const empty = data && data.kpis.visitors === 0 && data.kpis.pageviews === 0;
  return (
    <div class="overview">
      <RangeBar state={state} setState={setState} />
      <FilterChips state={state} setState={setState} />
      {overview.error ? (
        <ErrorNote error={overview.error} retry={overview.reload} />
      ) : (
        <div class={overview.loading && data ? 'is-stale' : undefined} aria-busy={overview.loading}>
          <KpiCards kpis={kpisFor(state)} data={data} />
          {empty && !state.filters.length && (
            <Empty title="No visits in this range yet">
              {shared ? (
                'Try a longer range.'
              ) : (
                <>
                  Try a longer range, or check that the tracking snippet is on your pages:{' '}
                  <Link href={`/sites/${site.id}/settings/tracking`}>see the snippet and install it</Link>.
                </>
              )}
            </Empty>
          )}
          {empty && state.filters.length > 0 && (
            <Empty title="No visits match these filters">Remove a filter above or choose a longer range.</Empty>
          )}
          {data ? <Chart {...props} data={data} /> : <ChartSkeleton />}
        </div>
      )}
      {!shared && (
        <div class="ask-panel">
          <AskPanel {...props} />
        </div>
      )}
      {primed ? (
        <div class="panel-grid">
          <SourcesPanel {...props} />
          <PagesPanel {...props} />
          <LocationsPanel {...props} />
          <DevicesPanel {...props} />
          <GoalsPanel {...props} />
          <EventsPanel {...props} />
          <FunnelsPanel {...props} />
          <RevenuePanel {...props} />
        </div>
      ) : (
        <div class="panel-grid" aria-hidden="true">
          {PANEL_PLACEHOLDERS.map((n) => (
            <div key={n} class="panel panel-placeholder">
              <span class="skeleton" />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
