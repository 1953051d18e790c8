// A time zone picker: the browser's list of IANA zones, with the given value (and UTC) always present, since
// some browsers leave zones out of Intl.supportedValuesOf. The server checks the zone either way.
import { useMemo, useState } from 'preact/hooks';

let fieldIds = 0;

/** The browser's own time zone, or UTC when it names none. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

function zones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

export function TimezoneField({
  name = 'timezone',
  value,
  onChange,
  hint,
  error,
}: {
  name?: string;
  value: string;
  onChange(value: string): void;
  hint?: string;
  error?: string;
}) {
  const [id] = useState(() => `tz${++fieldIds}`);
  const options = useMemo(() => {
    const list = zones();
    for (const extra of ['UTC', value]) if (extra && !list.includes(extra)) list.unshift(extra);
    return list;
  }, [value]);
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>Time zone</label>
      <select
        id={id}
        name={name}
        value={value}
        aria-describedby={described}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        {options.map((tz) => (
          <option key={tz} value={tz}>
            {tz.replace(/_/g, ' ')}
          </option>
        ))}
      </select>
      {hint && (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
