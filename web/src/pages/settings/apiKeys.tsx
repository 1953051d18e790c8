// API keys of the team that owns this site, for the External and Stats APIs: listed with their last use,
// created for this site only or for all the team's sites (the secret is shown once, to copy), revoked.
import { useState } from 'preact/hooks';
import { del, get, post } from '../../lib/api';
import { dateTime, relative } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import { ConfirmDelete, CopyField, explain, usePermissions } from './shared';
import type { SettingsTabProps } from './tab';
import type { ApiKeyView, CreatedApiKeyView } from './types';

export default function ApiKeys({ site }: SettingsTabProps) {
  const path = `/api/teams/${site.team_id}/api-keys`;
  const keys = useData((signal) => get<{ api_keys: ApiKeyView[] }>(path, { signal }), [path]);
  const perms = usePermissions(site.team_id);
  const [created, setCreated] = useState<CreatedApiKeyView | null>(null);
  const list = keys.data?.api_keys ?? [];
  const scope = (k: ApiKeyView) =>
    k.permission === 'full_access'
      ? 'All the team’s sites'
      : k.website_id === site.id
        ? `Only ${site.name}`
        : 'Only another site of the team';

  return (
    <div class="manage">
      {created && (
        <section class="manage-section secret" aria-labelledby="new-key-title" role="status">
          <h2 id="new-key-title">Your new API key “{created.name}”</h2>
          <p>
            <strong>Copy it now: this is the only time it is shown.</strong> Tidemark keeps only a fingerprint of it; if
            it is lost, revoke it and create another. Send it as the <code class="inline">X-API-Key</code> header.
          </p>
          <CopyField id="new-api-key" label="API key" value={created.key} />
          <div class="form-actions">
            <button type="button" class="button button-secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        </section>
      )}
      <section class="manage-section" aria-labelledby="key-list-title">
        <h2 id="key-list-title">API keys</h2>
        <p class="lead">
          Keys belong to the team that owns {site.name} and read its data through the External and Stats APIs.
        </p>
        {keys.error ? (
          <ErrorNote error={keys.error} retry={keys.reload} />
        ) : !keys.data ? (
          <Loading label="Loading API keys…" />
        ) : list.length === 0 ? (
          <Empty title="No API keys yet">Create one below to read this site’s statistics from a script.</Empty>
        ) : (
          <table class="manage-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Access</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((k) => (
                <tr key={k.id}>
                  <td>
                    <strong>{k.name}</strong>
                    <div class="muted">
                      <code class="inline">{k.prefix}…</code> · created {dateTime(k.created_at)}
                    </div>
                  </td>
                  <td>{scope(k)}</td>
                  <td>
                    {k.last_used_at ? (
                      <time datetime={k.last_used_at} title={dateTime(k.last_used_at)}>
                        {relative(k.last_used_at)}
                      </time>
                    ) : (
                      <span class="muted">Never</span>
                    )}
                  </td>
                  <td class="actions">
                    <ConfirmDelete
                      label={`Revoke API key ${k.name}`}
                      confirmLabel="Revoke"
                      question={`Revoke “${k.name}”? Scripts using it get 401 from now on; this cannot be undone.`}
                      onConfirm={async () => {
                        await del(`${path}/${k.id}`);
                        if (created?.id === k.id) setCreated(null);
                        keys.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {!perms.data ? null : perms.data.plan === 'free' ? (
        <section class="manage-section" aria-labelledby="key-create-title">
          <h2 id="key-create-title">Create an API key</h2>
          <p class="lead">
            API keys need a plan other than free. The server’s operator can change the team’s plan with{' '}
            <code class="inline">tidemark admin plan</code>.
          </p>
        </section>
      ) : (
        <CreateKey
          siteId={site.id}
          siteName={site.name}
          path={path}
          created={(key) => {
            setCreated(key);
            keys.reload();
          }}
        />
      )}
    </div>
  );
}

function CreateKey({
  siteId,
  siteName,
  path,
  created,
}: {
  siteId: string;
  siteName: string;
  path: string;
  created(key: CreatedApiKeyView): void;
}) {
  const [name, setName] = useState('');
  const [access, setAccess] = useState<'site_access' | 'full_access'>('site_access');
  const { busy, error, run } = useSubmit(async () => {
    const key = await post<CreatedApiKeyView>(path, {
      name: name.trim(),
      permission: access,
      ...(access === 'site_access' ? { website_id: siteId } : {}),
    });
    setName('');
    created(key);
    window.scrollTo(0, 0);
  }, explain);
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return (
    <section class="manage-section" aria-labelledby="key-create-title">
      <h2 id="key-create-title">Create an API key</h2>
      <form class="manage-form" onSubmit={submit}>
        <Field
          label="Key name"
          required
          maxLength={100}
          placeholder="Reporting script"
          hint="To tell keys apart, e.g. what uses it."
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <div class="field">
          <label for="key-access">Access</label>
          <select
            id="key-access"
            value={access}
            onChange={(e) => setAccess(e.currentTarget.value as 'site_access' | 'full_access')}
          >
            <option value="site_access">Only {siteName}</option>
            <option value="full_access">All the team’s sites</option>
          </select>
        </div>
        <div class="form-actions">
          <Button type="submit" busy={busy}>
            Create API key
          </Button>
        </div>
        <div class="form-actions">
          <FormError>{error}</FormError>
        </div>
      </form>
    </section>
  );
}
