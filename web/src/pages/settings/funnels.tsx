// Funnels: ordered steps (a goal of the site or a page path) a visitor goes through in one visit. Listed with
// their steps and a link to their results on the dashboard; created and edited with 2 to 8 steps; deleted.
import { useState } from 'preact/hooks';
import { del, get, post, put } from '../../lib/api';
import { Link } from '../../lib/router';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import { ConfirmDelete, explain } from './shared';
import type { SettingsTabProps } from './tab';
import type { FunnelView, GoalView } from './types';

// The server's bounds (lib/accounts/funnelSchemas.ts); it checks them again.
const MIN_STEPS = 2;
const MAX_STEPS = 8;

interface StepDraft {
  kind: 'path' | 'goal';
  path: string;
  goalId: string;
}

const emptyStep = (): StepDraft => ({ kind: 'path', path: '', goalId: '' });

export default function Funnels({ site }: SettingsTabProps) {
  const base = `/api/websites/${site.id}`;
  const funnels = useData((signal) => get<{ funnels: FunnelView[] }>(`${base}/funnels`, { signal }), [site.id]);
  const goals = useData((signal) => get<{ goals: GoalView[] }>(`${base}/goals`, { signal }), [site.id]);
  // null: no form open; 'new', or the id of the funnel being edited.
  const [editing, setEditing] = useState<string | null>(null);
  const list = funnels.data?.funnels ?? [];
  const goalList = goals.data?.goals ?? [];
  const closeForm = () => {
    setEditing(null);
    funnels.reload();
  };
  const editedFunnel = list.find((f) => f.id === editing);

  return (
    <div class="manage">
      <section class="manage-section" aria-labelledby="funnel-list-title">
        <h2 id="funnel-list-title">Funnels</h2>
        <p class="lead">
          How many visitors of {site.name} go through a series of steps in order, and where they drop off. Results are
          on the <Link href={`/sites/${site.id}`}>dashboard</Link>.
        </p>
        {funnels.error ? (
          <ErrorNote error={funnels.error} retry={funnels.reload} />
        ) : !funnels.data ? (
          <Loading label="Loading funnels…" />
        ) : list.length === 0 ? (
          <Empty title="No funnels yet">Create one below, for example /pricing → /signup → the Signup goal.</Empty>
        ) : (
          <table class="manage-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Steps</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((f) => (
                <tr key={f.id}>
                  <td>
                    <strong>{f.name}</strong>
                    <div>
                      <Link href={`/sites/${site.id}`}>See results on the dashboard</Link>
                    </div>
                  </td>
                  <td>
                    <ol class="funnel-steps">
                      {f.steps.map((s) => (
                        <li key={s.goal_id ?? s.path}>
                          {s.kind === 'path' ? (
                            <>
                              Visit <code class="inline">{s.path}</code>
                            </>
                          ) : (
                            <>Goal “{s.name}”</>
                          )}
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td class="actions">
                    <button
                      type="button"
                      class="button button-secondary button-small"
                      aria-label={`Edit funnel ${f.name}`}
                      onClick={() => setEditing(f.id)}
                    >
                      Edit
                    </button>
                    <ConfirmDelete
                      label={`Delete funnel ${f.name}`}
                      question={`Delete “${f.name}”? Its results go with it.`}
                      onConfirm={async () => {
                        await del(`${base}/funnels/${f.id}`);
                        if (editing === f.id) setEditing(null);
                        funnels.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {editing === null && (
          <div class="form-actions">
            <Button onClick={() => setEditing('new')}>New funnel</Button>
          </div>
        )}
      </section>
      {(editing === 'new' || editedFunnel) && (
        <FunnelForm
          key={editing}
          funnel={editedFunnel}
          goals={goalList}
          goalsError={goals.error}
          path={editedFunnel ? `${base}/funnels/${editedFunnel.id}` : `${base}/funnels`}
          done={closeForm}
          cancel={() => setEditing(null)}
        />
      )}
    </div>
  );
}

function FunnelForm({
  funnel,
  goals,
  goalsError,
  path,
  done,
  cancel,
}: {
  funnel?: FunnelView;
  goals: GoalView[];
  goalsError: Error | null;
  path: string;
  done(): void;
  cancel(): void;
}) {
  const [name, setName] = useState(funnel?.name ?? '');
  const [steps, setSteps] = useState<StepDraft[]>(() =>
    funnel
      ? funnel.steps.map((s) =>
          s.goal_id ? { kind: 'goal', path: '', goalId: s.goal_id } : { kind: 'path', path: s.path ?? '', goalId: '' },
        )
      : [emptyStep(), emptyStep()],
  );
  const title = funnel ? `Edit funnel “${funnel.name}”` : 'New funnel';

  const change = (i: number, patch: Partial<StepDraft>) =>
    setSteps((all) => all.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const move = (i: number, by: number) =>
    setSteps((all) => {
      const next = [...all];
      [next[i], next[i + by]] = [next[i + by], next[i]];
      return next;
    });

  const { busy, error, run } = useSubmit(async () => {
    const missing = steps.findIndex((s) => (s.kind === 'goal' ? !s.goalId : !s.path.trim()));
    if (missing >= 0)
      throw new Error(`Step ${missing + 1} needs ${steps[missing].kind === 'goal' ? 'a goal' : 'a page path'}.`);
    const body = {
      name: name.trim(),
      steps: steps.map((s) => (s.kind === 'goal' ? { goal_id: s.goalId } : { path: s.path.trim() })),
    };
    if (funnel) await put(path, body);
    else await post(path, body);
    done();
  }, explain);
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };

  return (
    <section class="manage-section" aria-labelledby="funnel-form-title">
      <h2 id="funnel-form-title">{title}</h2>
      <p class="lead">
        {MIN_STEPS} to {MAX_STEPS} steps, in the order visitors take them. A step is a page path (* for any run of
        characters) or one of the site’s goals.
      </p>
      <form onSubmit={submit}>
        <Field
          label="Funnel name"
          required
          maxLength={200}
          placeholder="Signup funnel"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <ol class="steps" aria-label="Steps">
          {steps.map((s, i) => (
            <li class="step" key={i}>
              <span class="step-number" aria-hidden="true">
                {i + 1}
              </span>
              <select
                aria-label={`Step ${i + 1} type`}
                value={s.kind}
                onChange={(e) => change(i, { kind: e.currentTarget.value as StepDraft['kind'] })}
              >
                <option value="path">Page path</option>
                <option value="goal" disabled={goals.length === 0}>
                  Goal
                </option>
              </select>
              {s.kind === 'path' ? (
                <input
                  aria-label={`Step ${i + 1} page path`}
                  placeholder={i === 0 ? '/pricing' : '/signup'}
                  maxLength={500}
                  value={s.path}
                  onInput={(e) => change(i, { path: e.currentTarget.value })}
                />
              ) : (
                <select
                  aria-label={`Step ${i + 1} goal`}
                  value={s.goalId}
                  onChange={(e) => change(i, { goalId: e.currentTarget.value })}
                >
                  <option value="">Choose a goal…</option>
                  {goals.map((g) => (
                    <option key={g.id} value={g.id}>
                      {g.name}
                    </option>
                  ))}
                </select>
              )}
              <span class="step-buttons">
                <button
                  type="button"
                  class="button button-secondary button-small"
                  aria-label={`Move step ${i + 1} up`}
                  disabled={i === 0}
                  onClick={() => move(i, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  class="button button-secondary button-small"
                  aria-label={`Move step ${i + 1} down`}
                  disabled={i === steps.length - 1}
                  onClick={() => move(i, 1)}
                >
                  ↓
                </button>
                <button
                  type="button"
                  class="button button-secondary button-small"
                  aria-label={`Remove step ${i + 1}`}
                  disabled={steps.length <= MIN_STEPS}
                  onClick={() => setSteps((all) => all.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ol>
        {goalsError && (
          <p class="field-hint">The site’s goals could not be loaded ({goalsError.message}): use paths.</p>
        )}
        {!goalsError && goals.length === 0 && (
          <p class="field-hint">This site has no goals yet: add some on the Goals tab to use them as steps.</p>
        )}
        <FormError>{error}</FormError>
        <div class="form-actions">
          <button
            type="button"
            class="button button-secondary"
            disabled={steps.length >= MAX_STEPS}
            onClick={() => setSteps((all) => [...all, emptyStep()])}
          >
            Add step
          </button>
          <Button type="submit" busy={busy}>
            {funnel ? 'Save funnel' : 'Create funnel'}
          </Button>
          <button type="button" class="button button-secondary" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
