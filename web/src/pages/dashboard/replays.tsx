// Replays: recorded sessions, newest first, a page at a time; opening one plays it with rrweb-player, which is
// loaded (with its styles) only then, in the player's own document. The open recording and the page of the
// list live in the URL (?session=…, ?page=2) so they can be bookmarked and shared.
import { get } from '../../lib/api';
import { compact, dateTime, duration } from '../../lib/format';
import { Link, navigate, useLocation } from '../../lib/router';
import { useData } from '../../lib/useData';
import { Button } from '../../ui/form';
import { Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import { countryName } from './sections/places';
import { ReplayPlayer } from './sections/replayPlayer';
import './sections/sections.css';
import { external, type ReplaySessionsData } from './sections/types';

const PER_PAGE = 20;

const capital = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : '');

export default function Replays({ site, shared }: SectionProps) {
  // Recordings are visitor-level data, never part of a shared dashboard.
  if (shared) return <Empty title="Session replays are not part of a shared dashboard" />;
  return <ReplaysOf siteId={site.id} replayOn={site.settings.session_replay} />;
}

function ReplaysOf({ siteId, replayOn }: { siteId: string; replayOn: boolean }) {
  const loc = useLocation();
  const session = loc.query.get('session');
  const page = Math.max(1, Number.parseInt(loc.query.get('page') ?? '1', 10) || 1);
  const base = `/sites/${siteId}/replays`;
  if (session) {
    return (
      <div class="sections">
        <div class="rp-head">
          <h2>Session replay</h2>
          <Link href={page > 1 ? `${base}?page=${page}` : base}>← All recordings</Link>
        </div>
        <p class="muted small">
          Session <code>{session}</code>. Inputs were masked when it was recorded.
        </p>
        <ReplayPlayer siteId={siteId} sessionId={session} />
      </div>
    );
  }
  return <SessionList siteId={siteId} page={page} base={base} replayOn={replayOn} />;
}

function SessionList({
  siteId,
  page,
  base,
  replayOn,
}: {
  siteId: string;
  page: number;
  base: string;
  replayOn: boolean;
}) {
  const offset = (page - 1) * PER_PAGE;
  const list = useData(
    (signal) =>
      get<ReplaySessionsData>(external(`/replays/${siteId}/sessions?limit=${PER_PAGE}&offset=${offset}`), { signal }),
    [siteId, offset],
  );
  const goTo = (p: number) => navigate(p > 1 ? `${base}?page=${p}` : base, { replace: true });
  return (
    <Panel title="Recorded sessions">
      {list.error ? (
        <ErrorNote error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading label="Loading recordings…" />
      ) : list.data.sessions.length === 0 ? (
        page > 1 ? (
          <Empty title="No more recordings">
            <Button kind="secondary" onClick={() => goTo(1)}>
              Back to the newest
            </Button>
          </Empty>
        ) : (
          <Empty title="No recordings yet">
            {replayOn ? (
              <p>Session replay is on: visits are recorded from now on and show here within a few seconds.</p>
            ) : (
              <p>
                Session replay is off for this site. Turn it on in{' '}
                <Link href={`/sites/${siteId}/settings/tracking`}>tracking settings</Link> to record visits (inputs are
                always masked).
              </p>
            )}
          </Empty>
        )
      ) : (
        <>
          <div class="table-scroll" aria-busy={list.loading}>
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col" class="num">
                    Duration
                  </th>
                  <th scope="col">Entry page</th>
                  <th scope="col" class="num">
                    Events
                  </th>
                  <th scope="col">Country</th>
                  <th scope="col">Device</th>
                  <th scope="col">
                    <span class="visually-hidden">Play</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.sessions.map((s) => (
                  <tr key={s.id}>
                    <td class="nowrap">{dateTime(s.started_at)}</td>
                    <td class="num">{duration(s.duration_seconds)}</td>
                    <td>{s.page_url || '—'}</td>
                    <td class="num">{compact(s.event_count)}</td>
                    <td class="nowrap">{countryName(s.country_code)}</td>
                    <td class="nowrap">
                      {[capital(s.device_type), s.browser, s.os].filter(Boolean).join(' · ') || 'Unknown'}
                    </td>
                    <td>
                      <Link
                        href={`${base}?session=${encodeURIComponent(s.session_id)}${page > 1 ? `&page=${page}` : ''}`}
                        aria-label={`Play the session of ${dateTime(s.started_at)}`}
                      >
                        Play
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {(page > 1 || list.data.pagination.has_more) && (
            <nav class="pager" aria-label="Recordings pages">
              <Button kind="secondary" disabled={page === 1} onClick={() => goTo(page - 1)}>
                Newer
              </Button>
              <span class="muted small">Page {page}</span>
              <Button kind="secondary" disabled={!list.data.pagination.has_more} onClick={() => goTo(page + 1)}>
                Older
              </Button>
            </nav>
          )}
        </>
      )}
    </Panel>
  );
}
