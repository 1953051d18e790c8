// Exclusions: visits from these addresses (IP or CIDR range) and pageviews of these paths are not counted.
// Each applies to events from the moment it is saved; data already stored stays.
import { useState } from 'preact/hooks';
import type { exclusionsView } from '../../../../lib/accounts/responses';
import type { z } from '../../../../lib/zod';
import { del, get, post } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, splitFieldError, useSubmit } from '../../ui/form';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SettingsTabProps } from './tab';
import '../sites.css';

type Exclusions = z.infer<typeof exclusionsView>;
type Kind = 'ip' | 'path';

const KINDS = {
  ip: {
    title: 'IP addresses',
    intro: 'Visits from these addresses are not counted: your office, your own devices, a monitoring service.',
    field: 'ip_address',
    label: 'IP address or CIDR range',
    placeholder: '203.0.113.7 or 2001:db8::/32',
    add: 'Add address',
  },
  path: {
    title: 'Paths',
    intro: 'Pages whose path matches are not counted. * matches any characters, such as /admin/* or */preview.',
    field: 'path_pattern',
    label: 'Path pattern',
    placeholder: '/admin/*',
    add: 'Add path',
  },
} as const;

function AddForm({ kind, siteId, onAdded }: { kind: Kind; siteId: string; onAdded(): void }) {
  const k = KINDS[kind];
  const [rule, setRule] = useState('');
  const [description, setDescription] = useState('');
  const submit = useSubmit(async () => {
    await post(`/api/websites/${siteId}/exclusions/${kind}`, {
      [k.field]: rule.trim(),
      description: description.trim() || undefined,
    });
    setRule('');
    setDescription('');
    onAdded();
  });
  const problem = splitFieldError(submit.error);
  const ruleError = problem.field === k.field ? `This ${problem.text}.`.replace(/\.\.$/, '.') : undefined;
  return (
    <>
      <form
        class="inline-form"
        aria-label={`Add an excluded ${kind === 'ip' ? 'address' : 'path'}`}
        onSubmit={(e) => {
          e.preventDefault();
          submit.run();
        }}
      >
        <Field
          label={k.label}
          name={k.field}
          required
          maxLength={kind === 'ip' ? 64 : 200}
          spellcheck={false}
          placeholder={k.placeholder}
          value={rule}
          onInput={(e) => setRule(e.currentTarget.value)}
          error={ruleError}
        />
        <Field
          label="Note (optional)"
          name="description"
          maxLength={500}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <Button type="submit" kind="secondary" busy={submit.busy}>
          {k.add}
        </Button>
      </form>
      {!ruleError && submit.error && (
        <p class="form-error inline-form-error" role="alert">
          {submit.error}
        </p>
      )}
    </>
  );
}

function RuleTable({
  kind,
  rows,
  onDelete,
  busyId,
}: {
  kind: Kind;
  rows: { id: string; rule: string; description: string | null; created_at: string }[];
  onDelete(id: string, rule: string): void;
  busyId: string | null;
}) {
  if (!rows.length) return <Empty title={kind === 'ip' ? 'No addresses excluded' : 'No paths excluded'} />;
  return (
    <table class="rules">
      <thead>
        <tr>
          <th scope="col">{kind === 'ip' ? 'Address' : 'Pattern'}</th>
          <th scope="col">Note</th>
          <th scope="col" class="rule-added">
            Added
          </th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id}>
            <td>
              <code>{r.rule}</code>
            </td>
            <td>{r.description ?? <span class="muted">—</span>}</td>
            <td class="rule-added">{dateTime(r.created_at)}</td>
            <td>
              <Button
                kind="secondary"
                class="button button-secondary button-small"
                busy={busyId === r.id}
                aria-label={`Remove ${r.rule}`}
                onClick={() => onDelete(r.id, r.rule)}
              >
                Remove
              </Button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function ExclusionsTab({ site }: SettingsTabProps) {
  const list = useData((signal) => get<Exclusions>(`/api/websites/${site.id}/exclusions`, { signal }), [site.id]);
  const [busyId, setBusyId] = useState<string | null>(null);
  const remove = useSubmit(async (kind: Kind, id: string) => {
    setBusyId(id);
    try {
      await del(`/api/websites/${site.id}/exclusions/${kind}/${id}`);
      list.reload();
    } finally {
      setBusyId(null);
    }
  });
  if (list.error) return <ErrorNote error={list.error} retry={list.reload} />;
  if (!list.data) return <Loading />;
  const ip = list.data.ip_exclusions.map((e) => ({ ...e, rule: e.ip_address }));
  const path = list.data.path_exclusions.map((e) => ({ ...e, rule: e.path_pattern }));
  return (
    <div class="settings-form">
      <p class="lead">
        Excluded traffic is dropped as it arrives, from the moment a rule is saved; figures already stored stay.
      </p>
      <FormError>{remove.error}</FormError>
      {(['ip', 'path'] as const).map((kind) => (
        <section class="settings-section" key={kind} aria-labelledby={`excl-${kind}`}>
          <h2 id={`excl-${kind}`}>{KINDS[kind].title}</h2>
          <p>{KINDS[kind].intro}</p>
          <RuleTable
            kind={kind}
            rows={kind === 'ip' ? ip : path}
            busyId={busyId}
            onDelete={(id) => remove.run(kind, id)}
          />
          <AddForm kind={kind} siteId={site.id} onAdded={list.reload} />
        </section>
      ))}
    </div>
  );
}
