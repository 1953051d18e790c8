// Form parts: labelled fields with their hint and error, and a submit helper that turns a failed request
// into words next to the form instead of an exception.
import type { ButtonHTMLAttributes, ComponentChildren, InputHTMLAttributes } from 'preact';
import { useState } from 'preact/hooks';

type InputProps = InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string; error?: string };

let fieldIds = 0;

export function Field({ label, hint, error, id, ...input }: InputProps) {
  const [fieldId] = useState(() => id ?? `f${++fieldIds}`);
  const described = [hint && `${fieldId}-hint`, error && `${fieldId}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <input id={fieldId} aria-describedby={described} aria-invalid={error ? true : undefined} {...input} />
      {hint && (
        <p class="field-hint" id={`${fieldId}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${fieldId}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A choice among a few options, named for screen readers (the options say what it is to sighted readers). */
export function Choice<T extends string>({
  label,
  value,
  options,
  onChange,
  class: className,
}: {
  label: string;
  value: T;
  options: readonly { id: T; label: string }[];
  onChange(value: T): void;
  class?: string;
}) {
  return (
    <label class={className}>
      <span class="visually-hidden">{label}</span>
      <select value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value as T)}>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A password being chosen: the server's rule (8 to 512 characters) stated and checked before sending. */
export function NewPasswordField({
  label = 'Password',
  name = 'password',
  hint = 'At least 8 characters.',
}: {
  label?: string;
  name?: string;
  hint?: string;
}) {
  return (
    <Field
      label={label}
      name={name}
      type="password"
      autocomplete="new-password"
      required
      minLength={8}
      maxLength={512}
      hint={hint}
    />
  );
}

export function Button({
  kind = 'primary',
  busy,
  children,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { kind?: 'primary' | 'secondary' | 'danger'; busy?: boolean }) {
  return (
    <button type="button" class={`button button-${kind}`} disabled={busy || rest.disabled} aria-busy={busy} {...rest}>
      {children}
    </button>
  );
}

/** Runs an async action for a form: busy while it runs, the error in words (`describe`) if it fails. */
export function useSubmit<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
  describe: (err: unknown) => string = (err) => (err as Error).message,
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

export function FormError({ children }: { children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <p class="form-error" role="alert">
      {children}
    </p>
  );
}

/** The values of a submitted form's named fields. */
export function formValues(e: Event): Record<string, string> {
  e.preventDefault();
  const data = new FormData(e.currentTarget as HTMLFormElement);
  const out: Record<string, string> = {};
  for (const [k, v] of data.entries()) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * A 400's message names the field it is about first ("domain: must be a domain name…", "allowed_domains.2: …"):
 * the field, the list position if any, and the words after it; field null when the message names none.
 */
export function splitFieldError(message: string | null): { field: string | null; index: number | null; text: string } {
  if (!message) return { field: null, index: null, text: '' };
  const m = /^([a-z_]+)(?:\.(\d+))?: (.+)$/s.exec(message);
  return m
    ? { field: m[1], index: m[2] ? Number(m[2]) : null, text: m[3] }
    : { field: null, index: null, text: message };
}
