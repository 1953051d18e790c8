// The webhook URL rules by install (production, WEBHOOK_ALLOW_PRIVATE), the resolved-address check, the
// signature format, and the delivery id's stability.
import { signatureHeader } from '../../../../lib/webhooks/signature';
import { deliveryIdFor } from '../../../../lib/webhooks/store';
import { type ResolveHost, resolveTarget, targetUrlProblem } from '../../../../lib/webhooks/target';
import { RETRY_DELAYS_MS } from '../../../../workers/webhooks';

const production = { allowPrivate: false, production: true };
const development = { allowPrivate: false, production: false };
const open = { allowPrivate: true, production: true };

describe('webhook targets', () => {
  it('requires https in production only, and keeps the other rules outside it', () => {
    expect(targetUrlProblem('http://hooks.example.com/in', production)).toBe('must be an https URL');
    expect(targetUrlProblem('http://hooks.example.com/in', development)).toBeUndefined();
    expect(targetUrlProblem('https://hooks.example.com/in', production)).toBeUndefined();
    expect(targetUrlProblem('http://127.0.0.1/in', development)).toBe(
      'must point at a public host, not a private or local one',
    );
    expect(targetUrlProblem('http://u:p@hooks.example.com/in', development)).toBe(
      'must not contain a user name or password',
    );
    expect(targetUrlProblem('ftp://hooks.example.com/in', development)).toBe('must be an http(s) URL');
    expect(targetUrlProblem('ftp://hooks.example.com/in', production)).toBe('must be an https URL');
    expect(targetUrlProblem('http://127.0.0.1:9000/in', open)).toBeUndefined();
  });

  it('refuses a name when any address it resolves to is private', async () => {
    const answers: Record<string, string[]> = {
      'public.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
      'half.example.com': ['93.184.216.34', '192.168.1.10'],
      'metadata.example.com': ['169.254.169.254'],
      'v6.example.com': ['fe80::1'],
    };
    const resolve: ResolveHost = async (h) =>
      (answers[h] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    await expect(resolveTarget('https://public.example.com/x', production, resolve)).resolves.toMatchObject({
      address: '93.184.216.34',
      family: 4,
    });
    for (const host of ['half', 'metadata', 'v6']) {
      await expect(resolveTarget(`https://${host}.example.com/x`, production, resolve)).rejects.toThrow(
        'url: the host resolves to a private, loopback or link-local address',
      );
    }
    await expect(resolveTarget('https://none.example.com/x', production, resolve)).rejects.toThrow(
      'url: the host name does not resolve',
    );
    await expect(resolveTarget('https://metadata.example.com/x', open, resolve)).resolves.toMatchObject({
      address: '169.254.169.254',
    });
  });
});

describe('signing and delivery ids', () => {
  it('signs "t.body" with HMAC-SHA256 (value from openssl dgst -sha256 -hmac)', () => {
    expect(signatureHeader('whsec_test_secret_123', '{"event":"goal.completed"}', 1_700_000_000)).toBe(
      't=1700000000,v1=218400abccc8e059a9647093bb00b683c5ea186cf559c6c36674b2c4373ddbf8',
    );
  });

  it('derives one UUID per (webhook, event key)', () => {
    const a = deliveryIdFor('4f0e0d36-1b8f-4bb7-9d55-5a4c7e5a0c11', 'evt-1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdFor('4f0e0d36-1b8f-4bb7-9d55-5a4c7e5a0c11', 'evt-1')).toBe(a);
    expect(deliveryIdFor('4f0e0d36-1b8f-4bb7-9d55-5a4c7e5a0c11', 'evt-2')).not.toBe(a);
    expect(deliveryIdFor('00000000-1b8f-4bb7-9d55-5a4c7e5a0c11', 'evt-1')).not.toBe(a);
  });
});

describe('the retry schedule', () => {
  it('makes 8 attempts over about 15.6 hours, the fifth more than an hour after the first', () => {
    expect(RETRY_DELAYS_MS.length + 1).toBe(8);
    const waitedBefore = (n: number) => RETRY_DELAYS_MS.slice(0, n - 1).reduce((a, b) => a + b, 0);
    expect(waitedBefore(5)).toBe((1 + 5 + 30 + 60) * 60_000); // 96 min: a receiver down for an hour still gets it
    expect(waitedBefore(8)).toBe(936 * 60_000); // 15.6 h
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) expect(RETRY_DELAYS_MS[i]).toBeGreaterThan(RETRY_DELAYS_MS[i - 1]);
  });
});
