// Loading, empty and error states: each says what is happening or what to do next.
import type { ComponentChildren } from 'preact';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <p class="state-title">{title}</p>
      {children && <div class="state-hint">{children}</div>}
    </div>
  );
}

export function ErrorNote({ error, retry }: { error: Error | string; retry?: () => void }) {
  const message = typeof error === 'string' ? error : error.message;
  return (
    <div class="state state-error" role="alert">
      <p>{message}</p>
      {retry && (
        <button type="button" class="button button-small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}
