// The `matches` filter's checks of regular expressions.
import { regexError } from '../../../../lib/stats/patterns';

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
