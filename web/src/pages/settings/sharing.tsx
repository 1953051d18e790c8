// Sharing: the public dashboard switch, an optional password, the public link and an embed snippet. Admins
// change it (the server refuses others, and their error shows here in words).
import { useState } from 'preact/hooks';
import type { SharingView } from '../../../../lib/public/shareSchemas';
import { BASE, get, put } from '../../lib/api';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import { ErrorNote, Loading } from '../../ui/states';
import type { SettingsTabProps } from './tab';
import './sharing.css';

export default function Tab({ site, reload }: SettingsTabProps) {
  const sharing = useData((signal) => get<SharingView>(`/api/websites/${site.id}/sharing`, { signal }), [site.id]);
  const [saved, setSaved] = useState<SharingView | null>(null);
  const view = saved ?? sharing.data;
  const save = async (body: { public_dashboard?: boolean; password?: string | null }) => {
    setSaved(await put<SharingView>(`/api/websites/${site.id}/sharing`, body));
    reload();
  };

  if (sharing.error) return <ErrorNote error={sharing.error} retry={sharing.reload} />;
  if (!view) return <Loading />;
  return (
    <div class="sharing">
      <Switch view={view} save={save} />
      {view.public_dashboard ? (
        <>
          <Password view={view} save={save} />
          <LinkAndEmbed view={view} name={site.name} />
        </>
      ) : (
        <p class="sharing-hint">
          Turn sharing on to get a public link to this website’s dashboard. People with the link see the numbers and
          charts — never single visitors, replays, heatmaps, errors, annotations or settings.
        </p>
      )}
    </div>
  );
}

type Save = (body: { public_dashboard?: boolean; password?: string | null }) => Promise<void>;

function Switch({ view, save }: { view: SharingView; save: Save }) {
  const submit = useSubmit(save);
  return (
    <section class="sharing-section" aria-labelledby="sharing-switch-title">
      <h2 id="sharing-switch-title">Public dashboard</h2>
      <label class="sharing-switch">
        <input
          type="checkbox"
          role="switch"
          checked={view.public_dashboard}
          aria-checked={view.public_dashboard}
          disabled={submit.busy}
          aria-describedby="sharing-switch-hint"
          onChange={(e) => submit.run({ public_dashboard: (e.currentTarget as HTMLInputElement).checked })}
        />
        <span>Share this dashboard with anyone who has the link</span>
      </label>
      <p class="field-hint" id="sharing-switch-hint">
        {view.public_dashboard
          ? 'Shared. Turning it off ends every open shared view at once.'
          : 'Not shared: the link shows “not shared”.'}
      </p>
      <FormError>{submit.error}</FormError>
    </section>
  );
}

function Password({ view, save }: { view: SharingView; save: Save }) {
  const [value, setValue] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const set = useSubmit(async () => {
    await save({ password: value });
    setValue('');
    setDone('Password set. Anyone opening the link now needs it.');
  });
  const clear = useSubmit(async () => {
    await save({ password: null });
    setDone('Password removed. Anyone with the link can view the dashboard.');
  });
  return (
    <section class="sharing-section" aria-labelledby="sharing-password-title">
      <h2 id="sharing-password-title">Password</h2>
      <p class="sharing-status">
        {view.password_set ? 'The link asks for a password.' : 'No password: anyone with the link can view.'}
      </p>
      <form
        class="sharing-row"
        onSubmit={(e) => {
          e.preventDefault();
          setDone(null);
          set.run();
        }}
      >
        <Field
          label={view.password_set ? 'New share password' : 'Share password'}
          name="share-password"
          type="password"
          autocomplete="new-password"
          minLength={8}
          maxLength={512}
          required
          value={value}
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
          hint="At least 8 characters. Changing it ends every open shared view."
        />
        <Button type="submit" busy={set.busy}>
          {view.password_set ? 'Change password' : 'Set password'}
        </Button>
      </form>
      {view.password_set && (
        <Button
          kind="secondary"
          busy={clear.busy}
          onClick={() => {
            setDone(null);
            clear.run();
          }}
        >
          Remove password
        </Button>
      )}
      <FormError>{set.error ?? clear.error}</FormError>
      <p class="sharing-done" role="status">
        {done}
      </p>
    </section>
  );
}

function LinkAndEmbed({ view, name }: { view: SharingView; name: string }) {
  const url = `${window.location.origin}${BASE}${view.share_path}`;
  const embed = `<iframe src="${url}" title="${name.replace(/"/g, '&quot;')} analytics" width="100%" height="1600" loading="lazy" style="border:0"></iframe>`;
  return (
    <section class="sharing-section" aria-labelledby="sharing-link-title">
      <h2 id="sharing-link-title">Link and embed</h2>
      <CopyField label="Public link" value={url} />
      <CopyField
        label="Embed on your site"
        value={embed}
        multiline
        hint="Paste this into a page to show the dashboard there. A password-protected dashboard asks for it inside the frame."
      />
    </section>
  );
}

function CopyField({
  label,
  value,
  multiline,
  hint,
}: {
  label: string;
  value: string;
  multiline?: boolean;
  hint?: string;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const id = `copy-${label.toLowerCase().replace(/\W+/g, '-')}`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      // No clipboard (an insecure origin, a denied permission): select the text for the reader to copy.
      (document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | null)?.select();
      setCopied('Press Ctrl+C (⌘C) to copy the selected text.');
    }
  };
  return (
    <div class="field sharing-copy">
      <label for={id}>{label}</label>
      <div class="sharing-copy-row">
        {multiline ? (
          <textarea id={id} readOnly rows={3} value={value} aria-describedby={hint ? `${id}-hint` : undefined} />
        ) : (
          <input id={id} readOnly value={value} />
        )}
        <Button kind="secondary" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
          Copy
        </Button>
      </div>
      {hint && (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <p class="sharing-done" role="status">
        {copied}
      </p>
    </div>
  );
}
