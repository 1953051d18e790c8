// Funnels: the site's saved funnels (dashboard API), one picked at a time, its steps as bars as long as the
// share of the first step's visitors, with the drop-off from the step before. Funnels read visits, not
// conversions: goal, event and property filters of the view do not apply to them (said so under the steps).
import { useState } from 'preact/hooks';
import './conversions.css';
import type { FunnelResultsView, FunnelView } from '../../../../../lib/accounts/funnelSchemas';
import { get, qs } from '../../../lib/api';
import { compact, percent } from '../../../lib/format';
import { Link } from '../../../lib/router';
import { useData } from '../../../lib/useData';
import { Panel } from '../../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../../ui/states';
import type { SectionProps } from '../section';
import type { DashboardState, Filter } from '../state';

/** The view's dashboard dimensions the funnel results filter by, as their filter keys. */
const FUNNEL_KEYS: Record<string, string> = {
  'event:page': 'page',
  'visit:country': 'country',
  'visit:region': 'region',
  'visit:city': 'city',
  'visit:browser': 'browser',
  'visit:device': 'device',
  'visit:os': 'os',
  'visit:source': 'source',
  'visit:referrer': 'referrer',
  'visit:channel': 'channel',
  'visit:utm_source': 'utm_source',
  'visit:utm_medium': 'utm_medium',
  'visit:utm_campaign': 'utm_campaign',
};

/** A local date (YYYY-MM-DD) in the site's time zone, `days` days from now. */
function localDay(timeZone: string, days = 0): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    Date.now() + days * 86_400_000,
  );
}

/** The view's range as the results endpoint's period (whole days: the last 24 hours are yesterday and today). */
function period(state: DashboardState, timeZone: string): string {
  switch (state.range) {
    case 'today':
      return 'day';
    case '24h':
      return `custom:${localDay(timeZone, -1)},${localDay(timeZone)}`;
    case 'custom':
      return `custom:${state.from},${state.to}`;
    default:
      return state.range;
  }
}

function funnelFilters(filters: Filter[]): { applied: Filter[]; ignored: Filter[] } {
  const applied = filters.filter((f) => FUNNEL_KEYS[f.dimension]);
  return { applied, ignored: filters.filter((f) => !FUNNEL_KEYS[f.dimension]) };
}

export default function FunnelsPanel({ site, state, shared }: SectionProps) {
  // Funnels are read with a member's credential: a shared link does not show them.
  if (shared) return null;
  return <Funnels site={site} state={state} />;
}

function Funnels({ site, state }: Pick<SectionProps, 'site' | 'state'>) {
  const list = useData(
    (signal) => get<{ funnels: FunnelView[] }>(`/api/websites/${site.id}/funnels`, { signal }),
    [site.id],
  );
  const [chosen, setChosen] = useState<string | null>(null);
  const funnels = list.data?.funnels ?? [];
  const funnel = funnels.find((f) => f.id === chosen) ?? funnels[0];
  const picker =
    funnels.length > 1 && funnel ? (
      <label class="cv-select">
        <span>Funnel</span>
        <select value={funnel.id} onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}>
          {funnels.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
      </label>
    ) : undefined;
  return (
    <Panel title={funnels.length === 1 && funnel ? `Funnel: ${funnel.name}` : 'Funnels'} actions={picker}>
      {list.error ? (
        <ErrorNote error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading label="Loading funnels…" />
      ) : !funnel ? (
        <Empty title="No funnels yet">
          A funnel shows how many visitors go from one step to the next, say from pricing to sign-up.{' '}
          <Link href={`/sites/${site.id}/settings/funnels`}>Set one up in settings</Link>.
        </Empty>
      ) : (
        <FunnelSteps key={funnel.id} siteId={site.id} timeZone={site.timezone} funnelId={funnel.id} state={state} />
      )}
    </Panel>
  );
}

function FunnelSteps({
  siteId,
  timeZone,
  funnelId,
  state,
}: {
  siteId: string;
  timeZone: string;
  funnelId: string;
  state: DashboardState;
}) {
  const { applied, ignored } = funnelFilters(state.filters);
  const results = useData(
    (signal) =>
      get<FunnelResultsView>(
        `/api/websites/${siteId}/funnels/${funnelId}/results${qs({
          period: period(state, timeZone),
          filters: applied.length
            ? JSON.stringify(applied.map((f) => [f.op, FUNNEL_KEYS[f.dimension], f.values]))
            : undefined,
        })}`,
        { signal },
      ),
    [siteId, funnelId, timeZone, JSON.stringify(state)],
  );
  if (results.error) return <ErrorNote error={results.error} retry={results.reload} />;
  if (!results.data) return <Loading label="Loading the funnel…" />;
  const { steps, totals } = results.data;
  return (
    <>
      <ol class="cv-funnel">
        {steps.map((s) => {
          const previous = s.step === 1 ? s.visitors : s.visitors + s.dropoff;
          return (
            <li key={s.step} class="cv-step">
              <div class="cv-step-line">
                <span class="cv-step-name">
                  {s.step}. {s.name}
                  <span class="cv-step-kind"> ({s.kind === 'path' ? 'page' : `${s.kind} goal`})</span>
                </span>
                <span class="cv-step-figures">
                  {compact(s.visitors)} {s.visitors === 1 ? 'visitor' : 'visitors'} · {percent(s.conversion_rate, 1)}
                </span>
              </div>
              <div class="cv-step-track" aria-hidden="true">
                <span class="cv-step-bar" style={{ width: `${Math.min(100, s.conversion_rate)}%` }} />
              </div>
              {s.step > 1 && (
                <p class="cv-step-drop">
                  {s.dropoff > 0
                    ? `${compact(s.dropoff)} dropped off (${percent(100 - s.step_conversion_rate, 1)} of ${compact(previous)})`
                    : 'No drop-off'}
                </p>
              )}
            </li>
          );
        })}
      </ol>
      <p class="cv-total">
        {totals.entered === 0
          ? 'No visitor entered this funnel in this period.'
          : `${compact(totals.completed)} of ${compact(totals.entered)} ${totals.entered === 1 ? 'visitor' : 'visitors'} completed the funnel (${percent(totals.conversion_rate, 1)}).`}
      </p>
      {ignored.length > 0 && (
        <p class="cv-note">
          Not applied to funnels:{' '}
          {ignored.map((f) => `${f.dimension.replace(/^(event|visit):/, '')} filter`).join(', ')}.
        </p>
      )}
    </>
  );
}
