// Tracking options: what the snippet records beyond pageviews (PUT /api/websites/:id/tracking). The tracker
// reads these when a page loads, so a change applies to the next page a visitor opens; no snippet change.
import { useState } from 'preact/hooks';
import type { WebsiteSettings } from '../../../../lib/external/schemas';
import { put } from '../../lib/api';
import { Button, FormError, useSubmit } from '../../ui/form';
import type { SettingsTabProps } from './tab';
import '../sites.css';

const OPTIONS: { key: keyof WebsiteSettings; label: string; hint: string }[] = [
  {
    key: 'track_outbound_links',
    label: 'Outbound link clicks',
    hint: 'Records an “Outbound Link: Click” event when a visitor follows a link to another site.',
  },
  {
    key: 'track_downloads',
    label: 'File downloads',
    hint: 'Records a “File Download” event for links to files such as .pdf, .zip or .dmg.',
  },
  {
    key: 'heatmaps',
    label: 'Heatmaps',
    hint: 'Records where visitors click, for the click-density view of each page.',
  },
  {
    key: 'session_replay',
    label: 'Session replay',
    hint: 'Records page changes so visits can be played back; form inputs are masked. Uses more storage.',
  },
  {
    key: 'debug',
    label: 'Record visits from bots (testing)',
    hint: 'Counts automated browsers such as curl or headless Chrome instead of ignoring them, marked tm_debug=bot. For testing an installation; leave it off otherwise.',
  },
];

export default function Tracking({ site, reload }: SettingsTabProps) {
  const [settings, setSettings] = useState<WebsiteSettings>(site.settings);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit(async () => {
    setSaved(false);
    await put(`/api/websites/${site.id}/tracking`, {
      track_outbound_links: settings.track_outbound_links,
      track_downloads: settings.track_downloads,
      heatmaps: settings.heatmaps,
      session_replay: settings.session_replay,
      debug: settings.debug === true,
    });
    setSaved(true);
    reload();
  });
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        submit.run();
      }}
    >
      <fieldset class="plain-fieldset">
        <legend>What the snippet records besides pageviews</legend>
        {OPTIONS.map((o) => (
          <div class="check" key={o.key}>
            <input
              type="checkbox"
              id={`opt-${o.key}`}
              name={o.key}
              checked={settings[o.key] === true}
              aria-describedby={`opt-${o.key}-hint`}
              onChange={(e) => {
                setSaved(false);
                setSettings({ ...settings, [o.key]: e.currentTarget.checked });
              }}
            />
            <div>
              <label for={`opt-${o.key}`}>{o.label}</label>
              <p class="field-hint" id={`opt-${o.key}-hint`}>
                {o.hint}
              </p>
            </div>
          </div>
        ))}
      </fieldset>
      <FormError>{submit.error}</FormError>
      <div class="row">
        <Button type="submit" busy={submit.busy}>
          Save tracking options
        </Button>
        {saved && (
          <p class="saved-note" role="status">
            Saved. Pages opened from now on follow these options.
          </p>
        )}
      </div>
    </form>
  );
}
