// Matching of IP and path exclusions and of allowed domains, during the request only. A website's rules are
// compiled once per cached site config (siteCache.ts), so an event pays only for the matching itself.
import net from 'node:net';

/** Longest path pattern accepted, in characters (the schema refuses longer ones with 400). */
export const MAX_PATTERN_LENGTH = 200;
/** At most this many `*` in a path pattern (the schema refuses more). */
export const MAX_PATTERN_STARS = 8;
/** Exclusions one website may hold, per kind; adding past them is answered 409. */
export const MAX_IP_EXCLUSIONS = 100;
export const MAX_PATH_EXCLUSIONS = 100;

export type Matcher<T> = (value: T) => boolean;

const never = () => false;

/** A valid exclusion rule: an IPv4/IPv6 address or CIDR range. */
export function isIpRule(rule: string): boolean {
  const [base, bits, extra] = rule.split('/');
  if (extra !== undefined) return false;
  const v4 = net.isIPv4(base);
  if (!v4 && !net.isIPv6(base)) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n >= 0 && n <= (v4 ? 32 : 128);
}

/** One BlockList for all of a website's address rules; true when an address equals or falls in one. */
export function compileIpRules(rules: readonly string[]): Matcher<string | undefined> {
  const list = new net.BlockList();
  let added = 0;
  for (const rule of rules) {
    if (!isIpRule(rule)) continue; // rows written before validation tightened: skipped, never thrown
    const [base, bits] = rule.split('/');
    const family = net.isIPv4(base) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base, family);
    else list.addSubnet(base, Number(bits), family);
    added++;
  }
  if (added === 0) return never;
  return (ip) => {
    if (!ip) return false;
    const addr = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
    const family = net.isIPv4(addr) ? 'ipv4' : net.isIPv6(addr) ? 'ipv6' : undefined;
    return family !== undefined && list.check(addr, family);
  };
}

/**
 * A path pattern: `*` matches any run of characters (also across `/`); everything else is literal. With only
 * `*` wildcards, greedy leftmost placement is exact: the text before the first `*` must be a prefix, the text
 * after the last a suffix, and each literal in between is taken at its first occurrence after the previous one
 * (an earlier end never leaves less room). No backtracking: one startsWith, one endsWith and one forward
 * indexOf per literal, so time is linear in the path whatever the pattern.
 */
export function compileGlob(pattern: string): Matcher<string> {
  const parts = pattern.split('*');
  if (parts.length === 1) return (path) => path === pattern;
  const head = parts[0];
  const tail = parts[parts.length - 1];
  const middle = parts.slice(1, -1).filter((s) => s.length > 0);
  const minLength = head.length + tail.length + middle.reduce((n, s) => n + s.length, 0);
  return (path) => {
    if (path.length < minLength || !path.startsWith(head) || !path.endsWith(tail)) return false;
    const end = path.length - tail.length;
    let at = head.length;
    for (const literal of middle) {
      const found = path.indexOf(literal, at);
      if (found === -1 || found + literal.length > end) return false;
      at = found + literal.length;
    }
    return true;
  };
}

export function globMatch(pattern: string, path: string): boolean {
  return compileGlob(pattern)(path);
}

/** All of a website's path patterns as one test: exact paths by set lookup, the rest one glob each. */
export function compilePathRules(patterns: readonly string[]): Matcher<string> {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns.filter((p) => p.includes('*')).map(compileGlob);
  if (exact.size === 0 && globs.length === 0) return never;
  return (path) => exact.has(path) || globs.some((match) => match(path));
}

/** With a non-empty allow list, a hostname must be one of the domains or a subdomain of one. */
export function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return allowed.some((d) => {
    const domain = d.toLowerCase().replace(/:\d+$/, '');
    return host === domain || host.endsWith(`.${domain}`);
  });
}
