import { validateServerEvent } from '../../lib/ingest/validate';
import { sourceName, DIRECT } from '../../lib/ingest/source';
import { hashIp, primaryLanguage } from '../../lib/ingest/enrich';
import { dedupToken } from '../../lib/ingest/chWriter';
import { mergeIdentities } from '../../lib/ingest/pgWriter';
import type { IdentityRecord } from '../../lib/ingest/rows';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const DAY = 24 * 3600_000;
const ctx = { now: NOW, activeGoals: new Set(['Signup']) };
const uuid = '3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b';
const pv = (over: Record<string, unknown>) => ({ type: 'pageview', ts: NOW, sessionId: uuid, visitorId: uuid, props: { url: '/a' }, ...over });

describe('validateServerEvent', () => {
  it('takes ts exactly 24 h away on either side and refuses 1 ms more', () => {
    expect(validateServerEvent(pv({ ts: NOW - DAY }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ ts: NOW + DAY }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ ts: NOW - DAY - 1 }), ctx)).toMatchObject({ ok: false, reason: 'invalid_ts' });
    expect(validateServerEvent(pv({ ts: NOW + DAY + 1 }), ctx)).toMatchObject({ ok: false, reason: 'invalid_ts' });
    expect(validateServerEvent(pv({ ts: Number.NaN }), ctx)).toMatchObject({ ok: false, reason: 'invalid_ts' });
    expect(validateServerEvent(pv({ ts: Infinity }), ctx)).toMatchObject({ ok: false, reason: 'invalid_ts' });
  });

  it('checks in the documented order: the first failure wins', () => {
    // Everything wrong at once: the type check comes first.
    expect(validateServerEvent({ type: 'x', consent: 'bad', ts: 'x' }, ctx)).toMatchObject({ reason: 'invalid_event_type' });
    expect(validateServerEvent(pv({ consent: 'bad', ts: 'x' }), ctx)).toMatchObject({ reason: 'invalid_consent' });
    expect(validateServerEvent(pv({ consent: 'opt-out', ts: 'x' }), ctx)).toMatchObject({ reason: 'consent_opted_out' });
    expect(validateServerEvent(pv({ ts: 'x', idempotencyKey: '' }), ctx)).toMatchObject({ reason: 'invalid_ts' });
    expect(validateServerEvent(pv({ idempotencyKey: '', visitorId: 'x' }), ctx)).toMatchObject({ reason: 'invalid_idempotency_key' });
    expect(validateServerEvent(pv({ visitorId: 'x', sessionId: 'y' }), ctx)).toMatchObject({ reason: 'invalid_visitor_id' });
    expect(validateServerEvent(pv({ sessionId: 'y', props: {} }), ctx)).toMatchObject({ reason: 'invalid_session_id' });
    expect(
      validateServerEvent({ type: 'purchase', ts: NOW, props: { amount: 'x', payment_provider: 'paypal' } }, ctx),
    ).toMatchObject({ reason: 'invalid_props' });
  });

  it('accepts UUIDs of any version and case but not the nil UUID', () => {
    expect(validateServerEvent(pv({ visitorId: uuid.toUpperCase() }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ visitorId: '00000000-0000-1000-8000-000000000000' }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ visitorId: '00000000-0000-0000-0000-000000000000' }), ctx)).toMatchObject({ reason: 'invalid_visitor_id' });
    expect(validateServerEvent(pv({ visitorId: `${uuid}x` }), ctx)).toMatchObject({ reason: 'invalid_visitor_id' });
  });

  it('applies purchase defaults and keeps unknown props as custom properties', () => {
    const v = validateServerEvent({ type: 'purchase', ts: NOW, props: { amount: 12.5, coupon: 'X' } }, ctx);
    expect(v).toMatchObject({
      ok: true,
      event: { props: { amount: 12.5, currency: 'USD', payment_provider: 'server', status: 'succeeded' }, custom: { coupon: 'X' } },
    });
  });

  it('matches goal names exactly against active goals', () => {
    expect(validateServerEvent({ type: 'goal', ts: NOW, visitorId: 'v', sessionId: 's', props: { name: 'Signup' } }, ctx).ok).toBe(true);
    expect(validateServerEvent({ type: 'goal', ts: NOW, visitorId: 'v', sessionId: 's', props: { name: 'signup' } }, ctx)).toMatchObject({
      reason: 'unknown_goal',
    });
  });
});

describe('enrichment helpers', () => {
  it('names sources: utm first, then known referrers, then the domain, else Direct', () => {
    expect(sourceName('newsletter', 'google.com', 'shop.example.com')).toBe('newsletter');
    expect(sourceName(undefined, 'google.co.uk', 'shop.example.com')).toBe('Google');
    expect(sourceName(undefined, 'news.ycombinator.com', 'x.com')).toBe('Hacker News');
    expect(sourceName(undefined, 'blog.partner.io', 'shop.example.com')).toBe('blog.partner.io');
    expect(sourceName(undefined, '', 'shop.example.com')).toBe(DIRECT);
    expect(sourceName(undefined, 'shop.example.com', 'shop.example.com')).toBe(DIRECT);
  });

  it('hashes the address with the salt and website, never returning it', () => {
    const a = hashIp('salt-1', 'site', '203.0.113.9');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(hashIp('salt-2', 'site', '203.0.113.9'));
    expect(a).not.toBe(hashIp('salt-1', 'other', '203.0.113.9'));
    expect(hashIp('salt-1', 'site', undefined)).toBe('unknown');
    expect(primaryLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de-DE');
    expect(primaryLanguage('<script>')).toBe('');
  });

  it('dedup tokens depend on the set of event ids only', () => {
    const ids = ['b', 'a', 'c'].map((c) => `00000000-0000-4000-8000-00000000000${c}`);
    expect(dedupToken(ids)).toBe(dedupToken([...ids].reverse()));
    expect(dedupToken(ids)).not.toBe(dedupToken(ids.slice(1)));
  });

  it('merges identifies of one visitor: later fields win, attributes merge, seen times span', () => {
    const base = { event_id: uuid, website_id: uuid, visitor_id: 'v', email: null, name: null, customer_id: null, phone: null, company: null };
    const merged = mergeIdentities([
      { ...base, name: 'Late', attributes: { b: 2 }, seen_at: '2026-11-22T12:00:00.000Z' },
      { ...base, email: 'a@example.com', name: 'Early', attributes: { a: 1, b: 1 }, seen_at: '2026-11-22T10:00:00.000Z' },
    ] as IdentityRecord[]);
    expect(merged).toEqual([
      expect.objectContaining({ email: 'a@example.com', name: 'Late', attributes: { a: 1, b: 2 }, first_seen_at: '2026-11-22T10:00:00.000Z', last_seen_at: '2026-11-22T12:00:00.000Z' }),
    ]);
  });
});

describe('chTime', () => {
  it('formats like Date#toISOString for any instant, fractions and repeats of one second included', () => {
    const { chTime } = require('../../lib/ingest/rows') as typeof import('../../lib/ingest/rows');
    const samples = [0, 5, 70, 999, 1000, -1500, 1795333073007, 1795333073999.7, 1795333073573, 1795333073573];
    for (let i = 0; i < 2000; i++) samples.push(Math.random() * 4e12 - 1e12);
    for (const ms of samples) expect(chTime(ms)).toBe(new Date(Math.floor(ms)).toISOString().replace('T', ' ').replace('Z', ''));
  });
});

describe('path patterns', () => {
  it('match * across segments, literally otherwise, and in linear time on hostile input', () => {
    const { globMatch } = require('../../lib/ingest/exclusions') as typeof import('../../lib/ingest/exclusions');
    expect(globMatch('/admin/*', '/admin/users/7')).toBe(true);
    expect(globMatch('/admin/*', '/administrator')).toBe(false);
    expect(globMatch('*/print', '/docs/a/print')).toBe(true);
    expect(globMatch('/a.b', '/aXb')).toBe(false);
    expect(globMatch('/exact', '/exact')).toBe(true);
    expect(globMatch('/exact', '/exact/')).toBe(false);
    expect(globMatch('/*/*/edit', '/posts/12/edit')).toBe(true);
    const started = Date.now();
    expect(globMatch('/*a*a*a*a*a*a*a*b', '/' + 'a'.repeat(2048))).toBe(false);
    expect(Date.now() - started).toBeLessThan(200);
  });
});
