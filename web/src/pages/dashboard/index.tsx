// A website's dashboard: loads the site, reads the view state from the URL and shows the section the path
// names (/sites/:id, /sites/:id/realtime, …/heatmaps, …/replays, …/errors, …/insights, …/retention, …/ltv).
import { useState } from 'preact/hooks';
import { get } from '../../lib/api';
import { sessionChecked } from '../../lib/auth';
import { lazy } from '../../lib/lazy';
import { Link, navigate } from '../../lib/router';
import type { Website } from '../../lib/types';
import { useData } from '../../lib/useData';
import { Shell } from '../../ui/layout';
import { ErrorNote, Loading } from '../../ui/states';
import { prefetchOverview } from './overviewData';
import { type DashboardState, type Filter, parseState, serializeState } from './state';
import './dashboard.css';

const NAV = [
  { id: '', label: 'Overview' },
  { id: 'insights', label: 'Insights' },
  { id: 'realtime', label: 'Realtime' },
  { id: 'retention', label: 'Retention' },
  { id: 'ltv', label: 'Lifetime value' },
  { id: 'heatmaps', label: 'Heatmaps' },
  { id: 'replays', label: 'Replays' },
  { id: 'errors', label: 'Errors' },
] as const;

const SECTIONS = {
  '': lazy(() => import('./overview')),
  realtime: lazy(() => import('./realtime')),
  heatmaps: lazy(() => import('./heatmaps')),
  replays: lazy(() => import('./replays')),
  errors: lazy(() => import('./errors')),
  ltv: lazy(() => import('./ltv')),
  retention: lazy(() => import('./retention')),
  insights: lazy(() => import('./insights')),
} as const;

// A type, not an interface: it must fit the lazy loader's Record of route params.
type DashboardProps = {
  websiteId: string;
  query: URLSearchParams;
  '*'?: string;
};

/** The website's record asked for before the page renders (prefetch), taken once by the page. */
const earlySites = new Map<string, Promise<{ website: Website }>>();

/**
 * While sign-in is checked: the overview's first figures go now with the session cookie, and the website's
 * record as soon as the token is there, so neither waits for the page to render.
 * @public (called through the lazy loader's module object, where knip cannot see it)
 */
export function prefetch({ websiteId, query, '*': rest = '' }: DashboardProps): void {
  if (rest === '') prefetchOverview(websiteId, parseState(query));
  if (earlySites.has(websiteId)) return;
  const site = sessionChecked.then((ok) =>
    ok ? get<{ website: Website }>(`/api/websites/${websiteId}`) : Promise.reject(new Error('signed out')),
  );
  site.catch(() => earlySites.delete(websiteId));
  earlySites.set(websiteId, site);
}

function loadSite(websiteId: string, signal: AbortSignal): Promise<{ website: Website }> {
  const early = earlySites.get(websiteId);
  earlySites.delete(websiteId);
  return early ?? get<{ website: Website }>(`/api/websites/${websiteId}`, { signal });
}

export default function Dashboard({ websiteId, query, '*': rest = '' }: DashboardProps) {
  const site = useData((signal) => loadSite(websiteId, signal), [websiteId]);
  // The overview's first figures are asked for now, beside the website and the overview's code (unless the
  // prefetch above already did).
  useState(() => rest === '' && prefetchOverview(websiteId, parseState(query)));
  const section = SECTIONS[rest as keyof typeof SECTIONS];
  const state = parseState(query);
  const base = `/sites/${websiteId}${rest ? `/${rest}` : ''}`;
  const setState = (next: DashboardState) => navigate(`${base}${serializeState(next)}`, { replace: true });
  const addFilter = (f: Filter) =>
    setState({
      ...state,
      filters: [...state.filters.filter((x) => x.dimension !== f.dimension), f],
    });
  const title = site.data?.website.name ?? 'Dashboard';
  if (!section) {
    return (
      <Shell title="Not found">
        <ErrorNote error="This dashboard has no such section." />
      </Shell>
    );
  }
  const Section = section;
  // The section's code downloads while the website is read.
  Section.preload();
  const search = serializeState(state);
  return (
    <Shell title={title} wide>
      <div class="dash-head">
        <h1>{site.data?.website.name ?? 'Dashboard'}</h1>
        <nav class="dash-nav" aria-label="Dashboard sections">
          {NAV.map((n) => (
            <Link
              key={n.id}
              href={`/sites/${websiteId}${n.id ? `/${n.id}` : ''}${search}`}
              class={n.id === rest ? 'tab tab-active' : 'tab'}
              aria-current={n.id === rest ? 'page' : undefined}
            >
              {n.label}
            </Link>
          ))}
          <Link href={`/sites/${websiteId}/settings`} class="tab">
            Settings
          </Link>
        </nav>
      </div>
      {site.error ? (
        <ErrorNote error={site.error} retry={site.reload} />
      ) : !site.data ? (
        <Loading />
      ) : (
        <Section site={site.data.website} state={state} setState={setState} addFilter={addFilter} />
      )}
    </Shell>
  );
}
