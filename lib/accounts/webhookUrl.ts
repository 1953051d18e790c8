// Where a notification webhook may point. The server itself will POST to this URL, so by default it must be
// https on a public host: a private, loopback or link-local address would let a team member make the server
// call into its own network. Only literal hosts and local names can be judged here; whatever sends to the URL
// must check the address it actually connects to as well (a public name can resolve to a private address).
import net from 'node:net';

const PRIVATE_V4: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3], // multicast, reserved and broadcast
];
const PRIVATE_V6: [string, number][] = [
  ['::', 96], // unspecified, loopback and IPv4-compatible
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
];

const blocked = new net.BlockList();
for (const [base, bits] of PRIVATE_V4) blocked.addSubnet(base, bits, 'ipv4');
for (const [base, bits] of PRIVATE_V6) blocked.addSubnet(base, bits, 'ipv6');

const LOCAL_NAME = /(^|\.)(localhost|local|internal|lan|home\.arpa)$/;

/** True for a hostname (as URL.hostname spells it) that names this machine or a private network. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (net.isIPv4(host)) return blocked.check(host, 'ipv4');
  if (net.isIPv6(host)) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    // WHATWG URL spells a mapped IPv4 address in hex (::ffff:7f00:1).
    const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
    if (hex) {
      const n = (Number.parseInt(hex[1], 16) << 16) | Number.parseInt(hex[2], 16);
      return blocked.check([24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.'), 'ipv4');
    }
    return blocked.check(host, 'ipv6');
  }
  // A single label ("intranet") only resolves through a local search domain.
  return !host.includes('.') || LOCAL_NAME.test(host);
}

/**
 * Why a webhook URL is refused, or undefined when it is acceptable. The messages never repeat the URL: it is a
 * secret, and error messages end up in logs.
 */
export function webhookUrlProblem(value: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return allowPrivate ? 'must be an http(s) URL' : 'must be an https URL';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (!allowPrivate && isPrivateHost(url.hostname)) return 'must point at a public host, not a private or local one';
  return undefined;
}
