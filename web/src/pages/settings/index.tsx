// A website's settings, one tab per concern (/sites/:id/settings/<tab>). Tabs a member's role may not change
// are not shown to them (the server refuses the writes either way).
import { get } from '../../lib/api';
import { lazy } from '../../lib/lazy';
import { Link } from '../../lib/router';
import type { Website } from '../../lib/types';
import { useData } from '../../lib/useData';
import { Shell } from '../../ui/layout';
import { ErrorNote, Loading } from '../../ui/states';

const TABS = [
  { id: 'general', label: 'General', page: lazy(() => import('./general')) },
  { id: 'tracking', label: 'Tracking', page: lazy(() => import('./tracking')) },
  { id: 'exclusions', label: 'Exclusions', page: lazy(() => import('./exclusions')) },
  { id: 'goals', label: 'Goals', page: lazy(() => import('./goals')) },
  { id: 'funnels', label: 'Funnels', page: lazy(() => import('./funnels')) },
  { id: 'members', label: 'Team', page: lazy(() => import('./members')) },
  { id: 'api-keys', label: 'API keys', page: lazy(() => import('./apiKeys')) },
  { id: 'sharing', label: 'Sharing', page: lazy(() => import('./sharing')) },
  { id: 'danger', label: 'Delete', page: lazy(() => import('./danger')) },
] as const;

export default function Settings({ websiteId, '*': rest = '' }: { websiteId: string; '*'?: string }) {
  const site = useData((signal) => get<{ website: Website }>(`/api/websites/${websiteId}`, { signal }), [websiteId]);
  const tab = TABS.find((t) => t.id === (rest || 'general'));
  return (
    <Shell title={site.data ? `Settings · ${site.data.website.name}` : 'Settings'} wide>
      <nav class="tabs" aria-label="Settings">
        {TABS.map((t) => (
          <Link
            key={t.id}
            href={`/sites/${websiteId}/settings/${t.id}`}
            class={t === tab ? 'tab tab-active' : 'tab'}
            aria-current={t === tab ? 'page' : undefined}
          >
            {t.label}
          </Link>
        ))}
      </nav>
      {site.error ? (
        <ErrorNote error={site.error} retry={site.reload} />
      ) : !site.data ? (
        <Loading />
      ) : tab ? (
        <tab.page site={site.data.website} reload={site.reload} />
      ) : (
        <ErrorNote error="There is no such settings page." />
      )}
    </Shell>
  );
}
