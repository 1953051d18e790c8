// X-Tidemark-Signature (DESIGN §3): t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>. The timestamp
// is signed with the body so a captured delivery cannot be replayed later than the receiver's window.
import { createHmac, randomBytes } from 'node:crypto';

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** A new webhook's secret when the caller gave none: 32 random bytes, shown once. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
