// Path patterns in SQL (page goals, funnel steps: the path exclusions' patterns, `*` any run of characters,
// also across `/`, the rest literal) and the regular expressions `matches` filters accept. ClickHouse runs
// those with RE2, in linear time, so none can backtrack catastrophically; what is refused here is what RE2
// would reject at run time (a 500) and what would make its compiled program large.

/** Longest `matches` expression accepted. */
export const MAX_REGEX = 256;

/**
 * The LIKE pattern a path pattern stands for (`*` → `%`, LIKE's own `%`, `_` and `\\` escaped); bind it, never
 * paste it. LIKE rather than a regular expression: a prefix pattern becomes a prefix test, far cheaper per row.
 */
export function pathPatternLike(pattern: string): string {
  return pattern.replace(/[%_\\]/g, '\\$&').replaceAll('*', '%');
}

/** Whether a path pattern is a plain path (no wildcard): then an equality test answers it. */
export const isPlainPath = (pattern: string): boolean => !pattern.includes('*');

/**
 * Why a `matches` expression is refused, or undefined. Accepted: RE2's common syntax up to MAX_REGEX
 * characters. Refused: what RE2 lacks (back-references, look-around, possessive or atomic groups, named
 * groups in the (?<name>) form), counted repetitions above 100 (they multiply the compiled program), and
 * anything JavaScript cannot compile either.
 */
export function regexError(re: string): string | undefined {
  if (re.length === 0) return 'a regular expression is not empty';
  if (re.length > MAX_REGEX) return `a regular expression is at most ${MAX_REGEX} characters`;
  if (/\\[1-9]|\\k</.test(re)) return 'back-references are not supported';
  if (/\(\?[=!<>]/.test(re)) return 'look-around and atomic groups are not supported';
  if (/[*+?}]\+/.test(re)) return 'possessive quantifiers are not supported';
  for (const m of re.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) {
    if (Number(m[1]) > 100 || (m[2] && Number(m[2]) > 100)) return 'counted repetitions go up to 100';
  }
  try {
    new RegExp(re, 'u');
  } catch {
    return 'not a valid regular expression';
  }
  return undefined;
}
