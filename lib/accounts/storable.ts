// What PostgreSQL can store in text and jsonb: no NUL character (refused by both) and no unpaired UTF-16
// surrogate (refused by jsonb). User text of the dashboard records is checked with these at the edge, so such
// input is a 400 naming the field instead of a failed write.
import type { z } from '../zod';

const NOT_STORABLE = 'must not contain NUL characters or unpaired surrogates';

export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/** A string schema refined to storable text. */
export const storable = <S extends z.ZodString>(schema: S) => schema.refine(isStorableText, NOT_STORABLE);

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
