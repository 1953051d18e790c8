// A website's dashboard: loads the site, reads the view state from the URL and shows the section the path
// names (/sites/:id, /sites/:id/realtime, …/heatmaps, …/replays, …/errors).
import { get } from '../../lib/api';
import { lazy } from '../../lib/lazy';
import { navigate } from '../../lib/router';
import type { Website } from '../../lib/types';
import { useData } from '../../lib/useData';
import { Shell } from '../../ui/layout';
import { ErrorNote, Loading } from '../../ui/states';
import { type DashboardState, type Filter, parseState, serializeState } from './state';

const SECTIONS = {
  '': lazy(() => import('./overview')),
  realtime: lazy(() => import('./realtime')),
  heatmaps: lazy(() => import('./heatmaps')),
  replays: lazy(() => import('./replays')),
  errors: lazy(() => import('./errors')),
} as const;

export default function Dashboard({
  websiteId,
  query,
  '*': rest = '',
}: {
  websiteId: string;
  query: URLSearchParams;
  '*'?: string;
}) {
  const site = useData((signal) => get<{ website: Website }>(`/api/websites/${websiteId}`, { signal }), [websiteId]);
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
  return (
    <Shell title={title} wide>
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
