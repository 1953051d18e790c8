// Deleting a site: its settings and every event, visit, replay and heatmap it recorded, for good. Typing the
// domain to confirm keeps a slip of the mouse from doing it.
import { useState } from 'preact/hooks';
import { del } from '../../lib/api';
import { navigate } from '../../lib/router';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import type { SettingsTabProps } from './tab';
import '../sites.css';

export default function Danger({ site }: SettingsTabProps) {
  const [typed, setTyped] = useState('');
  const matches = typed.trim().toLowerCase() === site.domain.toLowerCase();
  const submit = useSubmit(async () => {
    await del(`/api/websites/${site.id}`);
    navigate('/sites');
  });
  return (
    <section class="danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete this site</h2>
      <p>
        Deleting <strong>{site.name}</strong> removes its settings, goals and funnels and every event, replay and
        heatmap click it recorded. It cannot be undone; the snippet on its pages stops being counted.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (matches) submit.run();
        }}
      >
        <Field
          label={`Type ${site.domain} to confirm`}
          name="confirm"
          autocomplete="off"
          spellcheck={false}
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
        <FormError>{submit.error}</FormError>
        <Button type="submit" kind="danger" disabled={!matches} busy={submit.busy}>
          Delete site and its data
        </Button>
      </form>
    </section>
  );
}
