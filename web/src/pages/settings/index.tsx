// A website's settings, one tab per concern (/sites/:id/settings/<tab>). Only the tabs the caller's role in the
// website's team may change are shown (the server refuses the writes either way); a viewer sees a note and the
// way back to the dashboard instead, also when they open a tab's address directly.
import { get } from '../../lib/api';
import { lazy } from '../../lib/lazy';
import { Link } from '../../lib/router';
import type { Website } from '../../lib/types';
import { useData } from '../../lib/useData';
import { Shell } from '../../ui/layout';
import { ErrorNote, Loading } from '../../ui/states';
import { hasRole, usePermissions } from './shared';
import type { Role } from './types';
import './manage.css';

interface Tab {
  id: string;
  label: string;
  /** The least role that may change what the tab shows (the server's check on its writes). */
  need: Role;
  page: ReturnType<typeof lazy>;
}

const TABS: Tab[] = [
  { id: 'general', label: 'General', need: 'editor', page: lazy(() => import('./general')) },
  { id: 'tracking', label: 'Tracking', need: 'editor', page: lazy(() => import('./tracking')) },
  { id: 'exclusions', label: 'Exclusions', need: 'editor', page: lazy(() => import('./exclusions')) },
  { id: 'goals', label: 'Goals', need: 'editor', page: lazy(() => import('./goals')) },
  { id: 'funnels', label: 'Funnels', need: 'editor', page: lazy(() => import('./funnels')) },
  { id: 'members', label: 'Team', need: 'admin', page: lazy(() => import('./members')) },
  { id: 'api-keys', label: 'API keys', need: 'admin', page: lazy(() => import('./apiKeys')) },
  { id: 'sharing', label: 'Sharing', need: 'editor', page: lazy(() => import('./sharing')) },
  { id: 'danger', label: 'Delete', need: 'admin', page: lazy(() => import('./danger')) },
];

export default function Settings({ websiteId, '*': rest = '' }: { websiteId: string; '*'?: string }) {
  const site = useData((signal) => get<{ website: Website }>(`/api/websites/${websiteId}`, { signal }), [websiteId]);
  const website = site.data?.website;
  return (
    <Shell title={website ? `Settings · ${website.name}` : 'Settings'} wide>
      <div class="settings-head">
        <h1>{website ? `Settings of ${website.name}` : 'Settings'}</h1>
        <Link href={`/sites/${websiteId}`} class="button button-secondary settings-link">
          View dashboard
        </Link>
      </div>
      {site.error ? (
        <ErrorNote error={site.error} retry={site.reload} />
      ) : !website ? (
        <Loading />
      ) : (
        <Tabs website={website} reload={site.reload} requested={rest} />
      )}
    </Shell>
  );
}

function Tabs({ website, reload, requested }: { website: Website; reload(): void; requested: string }) {
  const perms = usePermissions(website.team_id);
  if (perms.error) return <ErrorNote error={perms.error} retry={perms.reload} />;
  if (!perms.data) return <Loading />;
  const role = perms.data.role;
  const allowed = TABS.filter((t) => hasRole(role, t.need));
  if (allowed.length === 0) {
    return (
      <div class="settings-note" role="note">
        <p class="state-title">You can view this site, not change its settings</p>
        <p>
          Your role in the team that owns {website.name} is <strong>{role}</strong>: you can read its dashboard, but its
          settings, goals, funnels, members and API keys are changed by editors and admins. Ask a team admin for the
          editor role if you need to change them.
        </p>
        <Link href={`/sites/${website.id}`}>Go to the dashboard of {website.name}</Link>
      </div>
    );
  }
  const wanted = TABS.find((t) => t.id === (requested || allowed[0].id));
  const tab = wanted && allowed.includes(wanted) ? wanted : undefined;
  return (
    <>
      <nav class="tabs settings-tabs" aria-label="Settings">
        {allowed.map((t) => (
          <Link
            key={t.id}
            href={`/sites/${website.id}/settings/${t.id}`}
            class={t === tab ? 'tab tab-active' : 'tab'}
            aria-current={t === tab ? 'page' : undefined}
          >
            {t.label}
          </Link>
        ))}
      </nav>
      {tab ? (
        <tab.page site={website} reload={reload} />
      ) : wanted ? (
        <div class="settings-note" role="note">
          <p class="state-title">
            {wanted.label} is for team {wanted.need}s
          </p>
          <p>
            Your role is <strong>{role}</strong>; ask a team admin if you need to change this. The tabs above are the
            ones you can use.
          </p>
        </div>
      ) : (
        <ErrorNote error="There is no such settings page; choose one of the tabs above." />
      )}
    </>
  );
}
