// Goals: what counts as a conversion on this site — a custom event by its name, a visit to a page whose path
// matches a pattern, or the site's purchases. Listed, added, edited (name, path, paused) and deleted here.
import { useState } from 'preact/hooks';
import { del, get, post, put } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import { ConfirmDelete, explain } from './shared';
import type { SettingsTabProps } from './tab';
import type { FunnelView, GoalView } from './types';

type Kind = GoalView['kind'];

const KIND_LABELS: Record<Kind, string> = {
  event: 'Custom event',
  page: 'Page visit',
  purchase: 'Purchases',
};

export default function Goals({ site }: SettingsTabProps) {
  const base = `/api/websites/${site.id}`;
  const goals = useData((signal) => get<{ goals: GoalView[] }>(`${base}/goals`, { signal }), [site.id]);
  // Deleting a goal deletes the funnels it is a step of: the question names them.
  const funnels = useData((signal) => get<{ funnels: FunnelView[] }>(`${base}/funnels`, { signal }), [site.id]);
  const [editing, setEditing] = useState<string | null>(null);
  const list = goals.data?.goals ?? [];

  return (
    <div class="manage">
      <section class="manage-section" aria-labelledby="goal-list-title">
        <h2 id="goal-list-title">Goals</h2>
        <p class="lead">Conversions the dashboard counts for {site.name}. Pause a goal to stop counting it.</p>
        {goals.error ? (
          <ErrorNote error={goals.error} retry={goals.reload} />
        ) : !goals.data ? (
          <Loading label="Loading goals…" />
        ) : list.length === 0 ? (
          <Empty title="No goals yet">
            Add one below: the name of a custom event your site sends (such as Signup), or a page path such as
            /thank-you.
          </Empty>
        ) : (
          <table class="manage-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Counts</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((g) =>
                editing === g.id ? (
                  <tr key={g.id}>
                    <td colSpan={4}>
                      <EditGoal
                        goal={g}
                        path={`${base}/goals/${g.id}`}
                        done={() => {
                          setEditing(null);
                          goals.reload();
                        }}
                      />
                    </td>
                  </tr>
                ) : (
                  <tr key={g.id}>
                    <td>
                      <strong>{g.name}</strong>
                      <div class="muted">Added {dateTime(g.created_at)}</div>
                    </td>
                    <td>
                      {KIND_LABELS[g.kind]}
                      {g.kind === 'page' && (
                        <>
                          {' '}
                          <code class="inline">{g.path}</code>
                        </>
                      )}
                      {g.kind === 'event' && <div class="muted">event name “{g.name}”</div>}
                    </td>
                    <td>
                      <span class={g.is_active ? 'badge badge-accent' : 'badge'}>
                        {g.is_active ? 'Active' : 'Paused'}
                      </span>
                    </td>
                    <td class="actions">
                      <button
                        type="button"
                        class="button button-secondary button-small"
                        aria-label={`Edit goal ${g.name}`}
                        onClick={() => setEditing(g.id)}
                      >
                        Edit
                      </button>
                      <ConfirmDelete
                        label={`Delete goal ${g.name}`}
                        question={deleteQuestion(g, funnels.data?.funnels ?? [])}
                        onConfirm={async () => {
                          await del(`${base}/goals/${g.id}`);
                          goals.reload();
                          funnels.reload();
                        }}
                      />
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        )}
      </section>
      <AddGoal path={`${base}/goals`} added={goals.reload} />
    </div>
  );
}

function deleteQuestion(goal: GoalView, funnels: FunnelView[]): string {
  const using = funnels.filter((f) => f.steps.some((s) => s.goal_id === goal.id)).map((f) => `“${f.name}”`);
  const also = using.length ? ` The funnel${using.length > 1 ? 's' : ''} ${using.join(', ')} that use it go too.` : '';
  return `Delete “${goal.name}”? Its past conversions stop showing.${also}`;
}

function AddGoal({ path, added }: { path: string; added(): void }) {
  const [kind, setKind] = useState<Kind>('event');
  const [name, setName] = useState('');
  const [pattern, setPattern] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const { busy, error, run } = useSubmit(async () => {
    setSaved(null);
    const body =
      kind === 'page'
        ? { kind, path: pattern.trim(), ...(name.trim() ? { name: name.trim() } : {}) }
        : { kind, name: name.trim() };
    const { goal } = await post<{ goal: GoalView }>(path, body);
    setName('');
    setPattern('');
    setSaved(`Added the goal “${goal.name}”.`);
    added();
  }, explain);
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };

  return (
    <section class="manage-section" aria-labelledby="goal-add-title">
      <h2 id="goal-add-title">Add a goal</h2>
      <p class="lead">
        {kind === 'event'
          ? 'Counts a custom event by its exact name, as your site sends it (tidemark("Signup")).'
          : kind === 'page'
            ? 'Counts pageviews whose path matches: * stands for any run of characters, as in /blog/*.'
            : 'Counts the site’s succeeded purchases (revenue events).'}
      </p>
      <form class="manage-form" onSubmit={submit}>
        <div class="field">
          <label for="goal-kind">Goal type</label>
          <select id="goal-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
            <option value="event">Custom event</option>
            <option value="page">Page visit</option>
            <option value="purchase">Purchases</option>
          </select>
        </div>
        {kind === 'page' && (
          <Field
            label="Page path"
            name="path"
            required
            maxLength={500}
            placeholder="/thank-you"
            value={pattern}
            onInput={(e) => setPattern(e.currentTarget.value)}
          />
        )}
        <Field
          label={kind === 'event' ? 'Event name' : kind === 'page' ? 'Name (optional)' : 'Name'}
          name="name"
          required={kind !== 'page'}
          maxLength={200}
          placeholder={kind === 'event' ? 'Signup' : kind === 'page' ? `Visit ${pattern || '/thank-you'}` : 'Purchase'}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <div class="form-actions">
          <Button type="submit" busy={busy}>
            Add goal
          </Button>
          {saved && (
            <span class="muted" role="status">
              {saved}
            </span>
          )}
        </div>
        <div class="form-actions">
          <FormError>{error}</FormError>
        </div>
      </form>
    </section>
  );
}

function EditGoal({ goal, path, done }: { goal: GoalView; path: string; done(): void }) {
  const [name, setName] = useState(goal.name);
  const [pattern, setPattern] = useState(goal.path ?? '');
  const [active, setActive] = useState(goal.is_active);
  const { busy, error, run } = useSubmit(async () => {
    await put(path, {
      name: name.trim(),
      is_active: active,
      ...(goal.kind === 'page' ? { path: pattern.trim() } : {}),
    });
    done();
  }, explain);
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return (
    <form class="manage-form" onSubmit={submit} aria-label={`Edit goal ${goal.name}`}>
      <Field
        label={goal.kind === 'event' ? 'Event name' : 'Name'}
        required
        maxLength={200}
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      {goal.kind === 'page' && (
        <Field
          label="Page path"
          required
          maxLength={500}
          value={pattern}
          onInput={(e) => setPattern(e.currentTarget.value)}
        />
      )}
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />
        Active (counted on the dashboard)
      </label>
      <div class="form-actions">
        <Button type="submit" busy={busy}>
          Save goal
        </Button>
        <button type="button" class="button button-secondary" onClick={done}>
          Cancel
        </button>
      </div>
      <div class="form-actions">
        <FormError>{error}</FormError>
      </div>
    </form>
  );
}
