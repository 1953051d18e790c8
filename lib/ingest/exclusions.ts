// Matching of IP and path exclusions and of allowed domains, during the request only.
import net from 'node:net';

/** True when `ip` equals an excluded address or falls in an excluded CIDR range. */
export function ipExcluded(ip: string | undefined, rules: readonly string[]): boolean {
  if (!ip || rules.length === 0) return false;
  const addr = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const family = net.isIPv4(addr) ? 'ipv4' : net.isIPv6(addr) ? 'ipv6' : undefined;
  if (!family) return false;
  const list = new net.BlockList();
  for (const rule of rules) {
    const [base, bits] = rule.split('/');
    const ruleFamily = net.isIPv4(base) ? 'ipv4' : net.isIPv6(base) ? 'ipv6' : undefined;
    if (!ruleFamily) continue;
    if (bits === undefined) list.addAddress(base, ruleFamily);
    else list.addSubnet(base, Number(bits), ruleFamily);
  }
  return list.check(addr, family);
}

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

/** At most this many `*` in a path pattern (the schema refuses more). */
export const MAX_PATTERN_STARS = 8;

/**
 * Path patterns: `*` matches any run of characters (also across `/`); everything else is literal. Matched
 * without regular expressions: `.*` groups backtrack exponentially on hostile patterns, this loop does not
 * (greedy match with one saved backtrack point, at most pattern × path steps).
 */
export function globMatch(pattern: string, path: string): boolean {
  let p = 0;
  let s = 0;
  let star = -1;
  let mark = 0;
  while (s < path.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === path[s]) {
      p++;
      s++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = s;
    } else if (star !== -1) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

export function pathExcluded(pathname: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globMatch(p, pathname));
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
