// Parts the goals, funnels, team and API-key tabs share: the role order, errors in words, a delete that asks
// first, and a copy button for a secret shown once.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from '../../lib/api';
import { useData } from '../../lib/useData';
import { useSubmit } from '../../ui/form';
import type { Role, TeamPermissions } from './types';

// The server's order (lib/plans.ts ROLE_RANK); the browser takes only types from lib/.
const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3, owner: 4 };

export const hasRole = (role: Role, needed: Role) => RANK[role] >= RANK[needed];

export const ROLE_LABELS: Record<Role, string> = {
  viewer: 'Viewer — reads dashboards',
  editor: 'Editor — also changes site settings, goals and funnels',
  admin: 'Admin — also manages members, invites and API keys',
  owner: 'Owner — everything, including owners',
};

/** The caller's role and the plan's limits in a team (any active member may read them). */
export function usePermissions(teamId: string) {
  return useData((signal) => get<TeamPermissions>(`/api/teams/${teamId}/permissions`, { signal }), [teamId]);
}

/** A failed request in words, with what the reader can do about plan limits and conflicts. */
export function explain(err: unknown): string {
  if (!(err instanceof ApiError)) return (err as Error).message;
  if (err.status === 402 || err.code === 'PLAN_LIMIT_REACHED' || err.code === 'API_PAID_PLAN_REQUIRED')
    return `Your plan does not allow this: ${err.message}.`;
  if (err.status === 409) return `${err.message}. Choose another name, or change the existing one.`;
  if (err.status === 403) return `Your role does not allow this: ${err.message}.`;
  return err.message;
}

/** A delete that asks before it acts; the question names what goes. */
export function ConfirmDelete({
  label,
  question,
  confirmLabel = 'Delete',
  onConfirm,
}: {
  /** The button's accessible name, e.g. "Delete goal Signup". */
  label: string;
  question: ComponentChildren;
  confirmLabel?: string;
  onConfirm: () => Promise<void>;
}) {
  const [asking, setAsking] = useState(false);
  const { busy, error, run } = useSubmit(onConfirm, explain);
  // Keyboard users land on the safe answer when the question appears.
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button
        type="button"
        class="button button-secondary button-small"
        aria-label={label}
        onClick={() => setAsking(true)}
      >
        {confirmLabel}
      </button>
    );
  return (
    <div class="confirm">
      <span>{question}</span>
      <button
        type="button"
        class="button button-danger button-small"
        disabled={busy}
        aria-busy={busy}
        onClick={() => void run()}
      >
        Yes, {confirmLabel.toLowerCase()}
      </button>
      <button type="button" ref={cancel} class="button button-secondary button-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A read-only value (a one-time secret or link) with a Copy button; selects the text if copying fails. */
export function CopyField({ label, value, id }: { label: string; value: string; id: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select it for Ctrl+C instead.
      input.current?.select();
      setState('failed');
    }
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input
          id={id}
          ref={input}
          class="copy-value"
          readOnly
          value={value}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" class="button button-secondary" onClick={copy}>
          {state === 'copied' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p class="field-hint" aria-live="polite">
        {state === 'copied'
          ? 'Copied to the clipboard.'
          : state === 'failed'
            ? 'The browser refused the clipboard: the text is selected, press Ctrl+C (⌘C) to copy it.'
            : ''}
      </p>
    </div>
  );
}
