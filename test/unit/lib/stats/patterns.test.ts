// Path patterns in SQL mean what they mean to path exclusions, and the `matches` filter's checks.
import { globMatch } from '../../../../lib/ingest/accept/exclusions';
import { pathPatternRegex, regexError } from '../../../../lib/stats/patterns';

describe('pathPatternRegex', () => {
  const patterns = ['/thank-you', '/docs/*', '/blog/*/comments', '*.pdf', '/a.b+(c)?[d]{1}|$^\\', '/x/**/y', '*'];
  const paths = [
    '/thank-you',
    '/thank-you/',
    '/thank-youX',
    '/docs/',
    '/docs/a/b',
    '/doc',
    '/blog/1/comments',
    '/blog/comments',
    '/files/a.pdf',
    '/files/apdf',
    '/a.b+(c)?[d]{1}|$^\\',
    '/aXb+(c)?[d]{1}|$^\\',
    '/x/y',
    '/x//y',
    '/x/1/2/y',
    '',
  ];
  it.each(patterns)('%s matches the paths the exclusion glob matches, and only those', (pattern) => {
    const re = new RegExp(pathPatternRegex(pattern), 'u');
    for (const path of paths)
      expect({ path, matched: re.test(path) }).toEqual({ path, matched: globMatch(pattern, path) });
  });
});

describe('regexError', () => {
  it.each(['^/blog/[0-9]+$', '(a|b)*c', '\\d{2,100}', '/p/(?:x|y)', '[^/]+'])('accepts %s', (re) => {
    expect(regexError(re)).toBeUndefined();
  });
  it.each([
    ['', /not empty/],
    ['a'.repeat(257), /at most 256/],
    ['(a)\\1', /back-references/],
    ['(?=a)b', /look-around/],
    ['(?<name>a)', /look-around|named/],
    ['a*+', /possessive/],
    ['a{101}', /up to 100/],
    ['a{1,500}', /up to 100/],
    ['(', /not a valid/],
  ])('refuses %s', (re, why) => {
    expect(regexError(re)).toMatch(why);
  });
});
