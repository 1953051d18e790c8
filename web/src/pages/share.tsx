// A shared dashboard (/share/:websiteId): anyone with the link sees the website's aggregate overview, read
// only — no settings, annotations or visitor-level data. The page asks for the password when the link has
// one, reads with a short-lived share token (only POST /api/v2/query accepts it), keeps the view state in the
// URL as the signed-in dashboard does, and may be framed by other sites (the server allows it under /share/).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { PublicRealtimeData } from '../../../lib/public/schemas';
import type { ShareInfoView, ShareTokenView } from '../../../lib/public/shareSchemas';
import { ApiError, get, post, setShareToken } from '../lib/api';
import { compact } from '../lib/format';
import { lazy } from '../lib/lazy';
import { navigate } from '../lib/router';
import type { Website } from '../lib/types';
import { useData } from '../lib/useData';
import { Button, Field, FormError, formValues, useSubmit } from '../ui/form';
import { Card, useTitle } from '../ui/layout';
import { ErrorNote, Loading } from '../ui/states';
import { type DashboardState, type Filter, parseState, serializeState } from './dashboard/state';
import './share.css';

const Overview = lazy(() => import('./dashboard/overview'));

/** A new token this long before the old one expires, so a reader never meets an expired one. */
const RENEW_EARLY_MS = 60_000;
const LIVE_EVERY_MS = 30_000;

type Access =
  | { status: 'none'; note?: string }
  | { status: 'fetching' }
  | { status: 'granted'; token: string; expiresAt: number }
  | { status: 'failed'; error: Error };

/** The Website the overview takes, from what the share tells: the rest is neutral (nothing private is known). */
function sharedSite(info: ShareInfoView): Website {
  return {
    id: info.website_id,
    domain: info.domain,
    name: info.name,
    timezone: info.timezone,
    tracking_code: '',
    is_active: true,
    created_at: new Date(0).toISOString(),
    updated_at: new Date(0).toISOString(),
    team_id: '',
    user_id: null,
    primary_color: null,
    kpi_goal: null,
    public_dashboard: true,
    allowed_domains: [],
    settings: { track_outbound_links: false, track_downloads: false, session_replay: false, heatmaps: false },
  };
}

export default function Share({ websiteId, query }: { websiteId: string; query: URLSearchParams }) {
  const info = useData(
    (signal) => get<ShareInfoView>(`/api/share/${encodeURIComponent(websiteId)}`, { signal, anonymous: true }),
    [websiteId],
  );
  const [access, setAccess] = useState<Access>({ status: 'none' });
  const shareInfo = info.data;

  const requestToken = useCallback(
    async (password?: string) => {
      const t = await post<ShareTokenView>(
        `/api/share/${encodeURIComponent(websiteId)}/token`,
        password === undefined ? {} : { password },
        { anonymous: true },
      );
      setAccess({ status: 'granted', token: t.token, expiresAt: Date.now() + t.expires_in * 1000 });
    },
    [websiteId],
  );

  // A link without a password opens at once.
  useEffect(() => {
    if (!shareInfo || shareInfo.password_required || access.status !== 'none') return;
    setAccess({ status: 'fetching' });
    requestToken().catch((error: Error) => setAccess({ status: 'failed', error }));
  }, [shareInfo, access.status, requestToken]);

  // The token goes to Stats v2 queries only; a refusal (sharing off, password changed) asks again.
  const infoReload = info.reload;
  const granted = access.status === 'granted' ? access : null;
  useEffect(() => {
    if (!granted) return;
    setShareToken(granted.token, () => {
      setAccess({ status: 'none', note: 'Your access to this dashboard ended. Open it again.' });
      infoReload();
    });
    return () => setShareToken(null);
  }, [granted, infoReload]);

  // Before the token expires: a fresh one without a password, else the password again.
  useEffect(() => {
    if (!granted || !shareInfo) return;
    const timer = window.setTimeout(
      () => {
        if (shareInfo.password_required) {
          setAccess({ status: 'none', note: 'Your access to this dashboard ended. Enter the password again.' });
        } else {
          requestToken().catch((error: Error) => setAccess({ status: 'failed', error }));
        }
      },
      Math.max(0, granted.expiresAt - Date.now() - RENEW_EARLY_MS),
    );
    return () => window.clearTimeout(timer);
  }, [granted, shareInfo, requestToken]);

  if (info.error) {
    if (info.error instanceof ApiError && info.error.status === 404) return <NotShared />;
    return (
      <Frame title="Shared dashboard">
        <ErrorNote error={info.error} retry={info.reload} />
      </Frame>
    );
  }
  if (!shareInfo) {
    return (
      <Frame title="Shared dashboard">
        <Loading label="Opening the shared dashboard…" />
      </Frame>
    );
  }
  if (access.status === 'failed') {
    return (
      <Frame title={shareInfo.name}>
        <ErrorNote error={access.error} retry={() => setAccess({ status: 'none' })} />
      </Frame>
    );
  }
  if (access.status !== 'granted') {
    if (shareInfo.password_required) {
      return (
        <PasswordForm
          info={shareInfo}
          note={access.status === 'none' ? access.note : undefined}
          onSubmit={requestToken}
        />
      );
    }
    return (
      <Frame title={shareInfo.name}>
        <Loading label="Opening the shared dashboard…" />
      </Frame>
    );
  }
  return <SharedDashboard info={shareInfo} query={query} />;
}

function SharedDashboard({ info, query }: { info: ShareInfoView; query: URLSearchParams }) {
  const state = parseState(query);
  const setState = (next: DashboardState) =>
    navigate(`/share/${info.website_id}${serializeState(next)}`, { replace: true });
  const addFilter = (f: Filter) =>
    setState({ ...state, filters: [...state.filters.filter((x) => x.dimension !== f.dimension), f] });
  const [site] = useState(() => sharedSite(info));
  return (
    <Frame title={info.name} live={<LiveVisitors websiteId={info.website_id} />} domain={info.domain}>
      <Overview site={site} state={state} setState={setState} addFilter={addFilter} shared />
    </Frame>
  );
}

/** Live visitors from the public realtime endpoint, every half minute; nothing shown when it cannot answer. */
function LiveVisitors({ websiteId }: { websiteId: string }) {
  const [live, setLive] = useState<number | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    const load = () =>
      get<PublicRealtimeData>(`/e/realtime/${encodeURIComponent(websiteId)}`, {
        signal: controller.signal,
        anonymous: true,
      }).then(
        (d) => setLive('live_visitors' in d ? d.live_visitors : null),
        () => setLive(null),
      );
    load();
    const timer = window.setInterval(load, LIVE_EVERY_MS);
    return () => {
      controller.abort();
      window.clearInterval(timer);
    };
  }, [websiteId]);
  if (live === null) return null;
  return (
    <p class="share-live" aria-live="polite">
      <span class="share-live-dot" aria-hidden="true" />
      {compact(live)} {live === 1 ? 'visitor' : 'visitors'} online now
    </p>
  );
}

function PasswordForm({
  info,
  note,
  onSubmit,
}: {
  info: ShareInfoView;
  note?: string;
  onSubmit(password: string): Promise<void>;
}) {
  const submit = useSubmit(async (values: Record<string, string>) => {
    await onSubmit(values.password);
  });
  const error =
    submit.error && /wrong password/i.test(submit.error) ? 'That password is not right. Try again.' : submit.error;
  return (
    <div class="share-page">
      <Card title={info.name}>
        <p class="lead share-center">
          The analytics of {info.domain} are shared with a password. Enter it to see the dashboard.
        </p>
        {note && <p class="share-note">{note}</p>}
        <form onSubmit={(e) => submit.run(formValues(e))}>
          <Field label="Password" name="password" type="password" autocomplete="current-password" required />
          <FormError>{error}</FormError>
          <Button type="submit" busy={submit.busy}>
            View dashboard
          </Button>
        </form>
      </Card>
      <PoweredBy />
    </div>
  );
}

function NotShared() {
  return (
    <div class="share-page">
      <Card title="This dashboard is not shared">
        <p>
          The link does not lead to a shared dashboard: its owner may have stopped sharing it, or the link is
          incomplete. Ask whoever gave it to you for a new one.
        </p>
      </Card>
      <PoweredBy />
    </div>
  );
}

function Frame({
  title,
  domain,
  live,
  children,
}: {
  title: string;
  domain?: string;
  live?: ComponentChildren;
  children: ComponentChildren;
}) {
  useTitle(title);
  return (
    <div class="share-page">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="share-head">
        <div>
          <h1 class="share-title">{title}</h1>
          {domain && <p class="share-domain">{domain} · shared dashboard</p>}
        </div>
        {live}
      </header>
      <main id="main" class="page page-wide share-main">
        {children}
      </main>
      <PoweredBy />
    </div>
  );
}

function PoweredBy() {
  return (
    <footer class="share-foot">
      <span class="brand-mark" aria-hidden="true" />
      Powered by Tidemark
    </footer>
  );
}
