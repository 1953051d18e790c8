// Where a webhook may send (docs/webhooks.md "Where a webhook may point"). The URL's rules (lib/accounts/
// webhookUrl.ts) judge what is written; the addresses its host resolves to are judged here, at registration and
// again before every attempt, and the request then connects to the very address that was judged: a name whose
// DNS answer changes between the check and the connection (rebinding) cannot reach a private network.
import dns from 'node:dns';
import net from 'node:net';
import { isPrivateHost, webhookUrlProblem } from '../accounts/webhookUrl';

/** dns.lookup's shape with `all: true`; tests pass a resolver they control. */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: ResolveHost = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface TargetRules {
  /** WEBHOOK_ALLOW_PRIVATE: private and loopback addresses allowed, and http:// too. */
  allowPrivate: boolean;
  /** NODE_ENV=production: https only (unless allowPrivate). */
  production: boolean;
}

/** Why a URL is refused as written, or undefined. Never repeats the URL (it may hold a token). */
export function targetUrlProblem(value: string, rules: TargetRules): string | undefined {
  // Outside production http is allowed (a receiver on a developer's machine); the other rules hold.
  const problem = webhookUrlProblem(value, rules.allowPrivate);
  if (problem !== 'must be an https URL' || rules.production) return problem;
  if (!/^http:/i.test(value.trim())) return 'must be an http(s) URL';
  return webhookUrlProblem(`https:${value.trim().slice(5)}`, false);
}

export interface ResolvedTarget {
  url: URL;
  /** The checked address the request must connect to. */
  address: string;
  family: 4 | 6;
}

export class TargetRefused extends Error {}

/**
 * The URL's host resolved and judged: refuses when any address it resolves to is private (unless allowed), so
 * a name cannot mix a public address with a private one and win a race. Throws TargetRefused with the reason.
 */
export async function resolveTarget(value: string, rules: TargetRules, resolve: ResolveHost): Promise<ResolvedTarget> {
  const problem = targetUrlProblem(value, rules);
  if (problem) throw new TargetRefused(`url: ${problem}`);
  const url = new URL(value);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new TargetRefused('url: the host name does not resolve');
    }
  }
  if (addresses.length === 0) throw new TargetRefused('url: the host name does not resolve');
  if (!rules.allowPrivate && addresses.some((a) => isPrivateHost(a.address))) {
    throw new TargetRefused('url: the host resolves to a private, loopback or link-local address');
  }
  const first = addresses[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
