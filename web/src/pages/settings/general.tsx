// General settings: name, domain, time zone, primary colour and the domains whose pages may count
// (PUT /api/websites/:id/general). A refused field is named next to that field, in words.
import { useState } from 'preact/hooks';
import { put } from '../../lib/api';
import { Button, Field, FormError, splitFieldError, useSubmit } from '../../ui/form';
import { TimezoneField } from '../../ui/timezone';
import { domainOf } from '../newSite';
import type { SettingsTabProps } from './tab';
import '../sites.css';

const FIELD_NAMES: Record<string, string> = {
  name: 'Name',
  domain: 'Domain',
  timezone: 'Time zone',
  primary_color: 'Primary colour',
  allowed_domains: 'Allowed domains:',
};

const HEX = /^#[0-9a-f]{6}$/i;

export default function General({ site, reload }: SettingsTabProps) {
  const [name, setName] = useState(site.name);
  const [domain, setDomain] = useState(site.domain);
  const [timezone, setTimezone] = useState(site.timezone);
  const [colour, setColour] = useState(site.primary_color ?? '');
  const [allowed, setAllowed] = useState(site.allowed_domains.join('\n'));
  const [saved, setSaved] = useState(false);
  const allowedList = () =>
    allowed
      .split(/[\s,]+/)
      .map(domainOf)
      .filter(Boolean);
  const submit = useSubmit(async () => {
    setSaved(false);
    await put(`/api/websites/${site.id}/general`, {
      name: name.trim(),
      domain: domainOf(domain),
      timezone,
      primary_color: colour.trim() || null,
      allowed_domains: allowedList(),
    });
    setSaved(true);
    reload();
  });
  const problem = splitFieldError(submit.error);
  const errorFor = (field: string) => {
    if (problem.field !== field) return undefined;
    const which = field === 'allowed_domains' && problem.index !== null ? allowedList()[problem.index] : undefined;
    return `${FIELD_NAMES[field]}${which ? ` “${which}”` : ''} ${problem.text}`;
  };
  const general = problem.field && FIELD_NAMES[problem.field] ? null : submit.error;
  const allowedError = errorFor('allowed_domains');
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        submit.run();
      }}
      onInput={() => setSaved(false)}
    >
      <Field
        label="Name"
        name="name"
        required
        maxLength={200}
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        error={errorFor('name')}
      />
      <Field
        label="Domain"
        name="domain"
        required
        maxLength={253}
        spellcheck={false}
        value={domain}
        onInput={(e) => setDomain(e.currentTarget.value)}
        hint="Changing it keeps the snippet and the data collected so far."
        error={errorFor('domain')}
      />
      <TimezoneField
        value={timezone}
        onChange={setTimezone}
        hint="Days in the reports start at midnight in this zone."
        error={errorFor('timezone')}
      />
      <div class="field">
        <label for="primary-colour">Primary colour</label>
        <div class="colour-row">
          <input
            id="primary-colour"
            type="text"
            name="primary_color"
            maxLength={7}
            placeholder="#2456c9"
            spellcheck={false}
            value={colour}
            aria-describedby={`primary-colour-hint${errorFor('primary_color') ? ' primary-colour-error' : ''}`}
            aria-invalid={errorFor('primary_color') ? true : undefined}
            onInput={(e) => setColour(e.currentTarget.value)}
          />
          <input
            type="color"
            aria-label="Pick the primary colour"
            value={HEX.test(colour) ? colour : '#2456c9'}
            onInput={(e) => setColour(e.currentTarget.value)}
          />
        </div>
        <p class="field-hint" id="primary-colour-hint">
          A hex colour such as #2456c9 for this site’s charts; empty for the default.
        </p>
        {errorFor('primary_color') && (
          <p class="field-error" id="primary-colour-error">
            {errorFor('primary_color')}
          </p>
        )}
      </div>
      <div class="field">
        <label for="allowed-domains">Allowed domains</label>
        <textarea
          id="allowed-domains"
          name="allowed_domains"
          rows={3}
          spellcheck={false}
          value={allowed}
          aria-describedby={`allowed-domains-hint${allowedError ? ' allowed-domains-error' : ''}`}
          aria-invalid={allowedError ? true : undefined}
          onInput={(e) => setAllowed(e.currentTarget.value)}
        />
        <p class="field-hint" id="allowed-domains-hint">
          One per line. When any are listed, only pages on these domains (and their subdomains) are counted; leave empty
          to count pages on every domain.
        </p>
        {allowedError && (
          <p class="field-error" id="allowed-domains-error">
            {allowedError}
          </p>
        )}
      </div>
      <FormError>{general}</FormError>
      <div class="row">
        <Button type="submit" busy={submit.busy}>
          Save changes
        </Button>
        {saved && (
          <p class="saved-note" role="status">
            Saved.
          </p>
        )}
      </div>
    </form>
  );
}
