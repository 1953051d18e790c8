// Exclusion matching: path globs in time linear in the path (issue 19 item 3), checked against a regular
// expression reference on small random inputs; address rules compiled once.
import fc from 'fast-check';
import {
  compileGlob,
  compileIpRules,
  compilePathRules,
  globMatch,
  MAX_PATH_EXCLUSIONS,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_STARS,
} from '../../../../../lib/ingest/accept/exclusions';

/** The reference: `*` → any run of characters, the rest literal, anchored (backtracking is fine this small). */
function reference(pattern: string, path: string): boolean {
  const source = pattern
    .split('*')
    .map((lit) => lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${source}$`).test(path);
}

const elapsedMs = (fn: () => void) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};

describe('globMatch', () => {
  it.each([
    ['/admin/*', '/admin/users/7', true],
    ['/admin/*', '/administrator', false],
    ['/admin/*', '/admin/', true],
    ['*/print', '/docs/a/print', true],
    ['*/print', '/docs/a/printer', false],
    ['/a.b', '/aXb', false],
    ['/exact', '/exact', true],
    ['/exact', '/exact/', false],
    ['/*/*/edit', '/posts/12/edit', true],
    ['/*/*/edit', '/posts/edit', false],
    ['*', '', true],
    ['**', '/x', true],
    ['/ab*ba', '/aba', false], // prefix and suffix may not overlap
    ['/ab*ba', '/abba', true],
    ['*aa*aa', '/aaa', false],
    ['*aa*aa', '/aaaa', true],
    ['/*.pdf', '/files/a.pdf', true],
    ['/*.pdf', '/files/a.pdf?x', false],
  ])('%s on %s → %s', (pattern, path, expected) => {
    expect(globMatch(pattern, path)).toBe(expected);
    expect(reference(pattern, path)).toBe(expected);
  });

  it('agrees with the regular-expression reference on random small patterns and paths', () => {
    const pattern = fc.string({ unit: fc.constantFrom('a', 'b', '/', '*'), maxLength: 10 });
    const path = fc.string({ unit: fc.constantFrom('a', 'b', '/'), maxLength: 14 });
    fc.assert(
      fc.property(pattern, path, (p, s) => {
        expect(globMatch(p, s)).toBe(reference(p, s));
      }),
      { numRuns: 5000 },
    );
  });

  it('a website rule set matches when any pattern does (exact paths by lookup)', () => {
    const patterns = fc.array(fc.string({ unit: fc.constantFrom('a', '/', '*'), maxLength: 6 }), { maxLength: 6 });
    const path = fc.string({ unit: fc.constantFrom('a', '/'), maxLength: 10 });
    fc.assert(
      fc.property(patterns, path, (ps, s) => {
        expect(compilePathRules(ps)(s)).toBe(ps.some((p) => reference(p, s)));
      }),
      { numRuns: 3000 },
    );
  });

  it('a 200-character *a*a*…b pattern on a 2 KB path is fast and correct', () => {
    const starry = `${'*a'.repeat(99)}*b`; // 200 characters, 100 wildcards (more than the schema allows)
    expect(starry).toHaveLength(MAX_PATTERN_LENGTH);
    const path = `/${'a'.repeat(2047)}`;
    let result = true;
    expect(elapsedMs(() => (result = globMatch(starry, path)))).toBeLessThan(20);
    expect(result).toBe(false);
    expect(globMatch(starry, `${path}b`)).toBe(true);
    expect(globMatch(starry, `/${'a'.repeat(98)}b`)).toBe(false); // 98 a's: one short
    expect(globMatch(starry, `/${'a'.repeat(99)}b`)).toBe(true);
  });

  it('the worst case of the old matcher (*aaa…b on a run of a) stays linear: 20 events × 100 rules well under a second', () => {
    // The old loop cost pattern × path per rule: 100 such rules on a 2 KB path took seconds per 20 events.
    const patterns = Array.from(
      { length: MAX_PATH_EXCLUSIONS },
      (_, i) => `*${'a'.repeat(MAX_PATTERN_LENGTH - 2 - (i % 50))}b`,
    );
    const path = `/${'a'.repeat(2047)}`;
    let matched = 0;
    const ms = elapsedMs(() => {
      for (let event = 0; event < 20; event++) for (const p of patterns) if (globMatch(p, path)) matched++;
    });
    expect(matched).toBe(0);
    expect(ms).toBeLessThan(250);
  });

  it('compiled rules stay within a few milliseconds per event for hostile literal shapes', () => {
    const path = `/${'a'.repeat(2047)}`;
    const shapes = [
      (i: number) => `*${'a'.repeat(150 + (i % 40))}b*`, // long literal, nearly matching everywhere
      (i: number) => `*${'a'.repeat(2 + (i % 5))}b`.repeat(MAX_PATTERN_STARS), // many short literals
      (i: number) => `/${'*a'.repeat(MAX_PATTERN_STARS - 1)}*${'a'.repeat(i % 60)}b`,
    ];
    for (const shape of shapes) {
      const rules = compilePathRules(Array.from({ length: MAX_PATH_EXCLUSIONS }, (_, i) => shape(i)));
      rules(path); // warm up
      const events = 20;
      let hits = 0;
      const ms = elapsedMs(() => {
        for (let i = 0; i < events; i++) if (rules(path)) hits++;
      });
      expect(hits).toBe(0);
      expect(ms / events).toBeLessThan(10); // about 1 ms measured idle; generous for a loaded machine
    }
  });

  it('compileGlob without a wildcard is an exact comparison', () => {
    expect(compileGlob('/a')('/a')).toBe(true);
    expect(compileGlob('/a')('/a/')).toBe(false);
  });
});

describe('compileIpRules', () => {
  const rules = compileIpRules(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1', 'not-an-ip', '10.0.0.0/99']);

  it.each([
    ['10.20.30.40', true],
    ['::ffff:10.1.2.3', true], // mapped IPv4 counts as IPv4
    ['11.0.0.1', false],
    ['192.168.1.7', true],
    ['192.168.1.8', false],
    ['2001:db8:1::5', true],
    ['2001:db9::1', false],
    ['::1', true],
    ['garbage', false],
    [undefined, false],
  ])('%s → %s', (ip, expected) => {
    expect(rules(ip)).toBe(expected);
  });

  it('no valid rule excludes nothing', () => {
    expect(compileIpRules([])('10.0.0.1')).toBe(false);
    expect(compileIpRules(['nope'])('10.0.0.1')).toBe(false);
  });
});
