// The Node.js versions package.json's `engines` accepts, checked when a process starts so an unsupported
// runtime fails with one line instead of an obscure error later.
import { NODE_RANGE } from '../version';

type Version = [number, number, number];

function parse(v: string): Version {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);
  return [a, b, c];
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** `range` in the subset of semver ranges engines uses: `||` of space-separated comparators (>=, >, <=, <, =). */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .every((comparator) => {
        const m = /^(>=|<=|>|<|=)?\s*v?(\d+(?:\.\d+){0,2})$/.exec(comparator);
        if (!m) return false;
        const d = compare(v, parse(m[2]));
        switch (m[1]) {
          case '>=':
            return d >= 0;
          case '>':
            return d > 0;
          case '<=':
            return d <= 0;
          case '<':
            return d < 0;
          default:
            return d === 0;
        }
      }),
  );
}

/** Why this Node.js cannot run Tidemark, or undefined when it can. */
export function unsupportedNode(version = process.version): string | undefined {
  const range = NODE_RANGE;
  if (!range || satisfies(version, range)) return undefined;
  return `Node.js ${version} is not supported: Tidemark needs node ${range} (package.json engines)`;
}
