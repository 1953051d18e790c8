// What PostgreSQL can store in text and jsonb: no NUL character (refused by both, also as a bound parameter of
// a lookup) and no unpaired UTF-16 surrogate (refused by jsonb; silently turned into U+FFFD in text). Every
// free-text request field that reaches PostgreSQL starts from `text()`, so such input is a 400 naming the field
// instead of a failed write or lookup.
import { z } from '../zod';

const NOT_STORABLE = 'must not contain NUL characters or unpaired surrogates';

export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/** A string schema refusing what PostgreSQL cannot store; chain the field's own checks after it. */
export const text = () => z.string().refine(isStorableText, NOT_STORABLE);

/** Why a JSON value cannot be stored as given (a key or string that is not storable, nesting past `maxDepth`). */
export function jsonProblem(value: unknown, maxDepth: number, depth = 0): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : `strings ${NOT_STORABLE}`;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return `may be nested at most ${maxDepth} levels deep`;
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    if (!isStorableText(key)) return `keys ${NOT_STORABLE}`;
    const problem = jsonProblem(child, maxDepth, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}
