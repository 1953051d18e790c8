// Errors: the site's JavaScript error groups (one per fingerprint), most recently seen first, with their triage
// status (unresolved, resolved, ignored) changed in place. Reads and writes go through the dashboard API
// (/api/websites/:id/errors), whose PUT needs the editor role; a viewer's attempt is answered in words.
import { useState } from 'preact/hooks';
import { get, put } from '../../lib/api';
import { compact, dateTime, relative } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import './sections/sections.css';
import type { ErrorGroup, ErrorGroupStatus, ErrorGroupsData } from './sections/types';

const STATUSES: { id: ErrorGroupStatus; label: string }[] = [
  { id: 'unresolved', label: 'Unresolved' },
  { id: 'resolved', label: 'Resolved' },
  { id: 'ignored', label: 'Ignored' },
];
const FILTERS = [{ id: 'all', label: 'All' }, ...STATUSES];

function StatusSelect({
  siteId,
  group,
  onChange,
}: {
  siteId: string;
  group: ErrorGroup;
  onChange(g: ErrorGroup): void;
}) {
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState<{ text: string; error?: boolean } | null>(null);
  const id = `status-${group.id}`;
  const change = async (status: ErrorGroupStatus) => {
    setSaving(true);
    setNote(null);
    try {
      const res = await put<{ error_group: ErrorGroup }>(`/api/websites/${siteId}/errors/${group.id}`, { status });
      onChange(res.error_group);
      setNote({ text: 'Saved' });
    } catch (err) {
      setNote({ text: (err as Error).message, error: true });
    } finally {
      setSaving(false);
    }
  };
  return (
    <>
      <label for={id} class="visually-hidden">
        Status of “{group.message}”
      </label>
      <select
        id={id}
        class="err-status"
        value={group.status}
        disabled={saving}
        aria-describedby={note ? `${id}-note` : undefined}
        onChange={(e) => change((e.currentTarget as HTMLSelectElement).value as ErrorGroupStatus)}
      >
        {STATUSES.map((s) => (
          <option key={s.id} value={s.id}>
            {s.label}
          </option>
        ))}
      </select>
      {(saving || note) && (
        <span id={`${id}-note`} class={note?.error ? 'err-note err-note-error' : 'err-note'} role="status">
          {saving ? 'Saving…' : note?.text}
        </span>
      )}
    </>
  );
}

export default function Errors({ site, shared }: SectionProps) {
  // Error messages can carry visitor-level details; a shared dashboard shows aggregates only.
  return <ErrorGroups siteId={site.id} />;
}

function ErrorGroups({ siteId }: { siteId: string }) {
  const [filter, setFilter] = useState('all');
  const [edited, setEdited] = useState<Record<string, ErrorGroup>>({});
  const groups = useData(
    (signal) =>
      get<ErrorGroupsData>(`/api/websites/${siteId}/errors?limit=200${filter === 'all' ? '' : `&status=${filter}`}`, {
        signal,
      }),
    [siteId, filter],
  );
  const rows = (groups.data?.error_groups ?? []).map((g) => edited[g.id] ?? g);
  return (
    <Panel
      title="JavaScript errors"
      tabs={FILTERS}
      active={filter}
      onTab={(id) => {
        setEdited({});
        setFilter(id);
      }}
    >
      {groups.error ? (
        <ErrorNote error={groups.error} retry={groups.reload} />
      ) : !groups.data ? (
        <Loading label="Loading error groups…" />
      ) : rows.length === 0 ? (
        <Empty title={filter === 'all' ? 'No errors recorded' : `No ${filter} errors`}>
          {filter === 'all'
            ? 'Uncaught errors and unhandled promise rejections on your pages are grouped here by the tracking script.'
            : 'Groups you move to this status show here.'}
        </Empty>
      ) : (
        <>
          <p class="muted small">
            {groups.data.total === rows.length
              ? `${compact(rows.length)} ${rows.length === 1 ? 'group' : 'groups'}`
              : `The ${rows.length} most recent of ${compact(groups.data.total)} groups`}
            , most recently seen first.
          </p>
          <div class="table-scroll" aria-busy={groups.loading}>
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Error</th>
                  <th scope="col" class="num">
                    Events
                  </th>
                  <th scope="col" class="num">
                    Users
                  </th>
                  <th scope="col">Last seen</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((g) => (
                  <tr key={g.id} data-group={g.id}>
                    <td class="err-cell">
                      <span class="err-message">{g.message}</span>
                      <span class="err-type">
                        {g.type || 'Error'} · first seen {dateTime(g.first_seen_at)}
                      </span>
                    </td>
                    <td class="num">{compact(g.occurrence_count)}</td>
                    <td class="num">{compact(g.affected_users_count)}</td>
                    <td class="nowrap" title={dateTime(g.last_seen_at)}>
                      {relative(g.last_seen_at)}
                    </td>
                    <td class="nowrap">
                      <StatusSelect
                        siteId={siteId}
                        group={g}
                        onChange={(next) => setEdited((e) => ({ ...e, [next.id]: next }))}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Panel>
  );
}
