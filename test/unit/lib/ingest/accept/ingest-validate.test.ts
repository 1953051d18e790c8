import { hashIp, primaryLanguage } from '../../../../../lib/ingest/accept/enrich';
import { DIRECT, sourceName } from '../../../../../lib/ingest/accept/source';
import { validateServerEvent } from '../../../../../lib/ingest/accept/validate';
import type { IdentityRecord } from '../../../../../lib/ingest/job/rows';
import { dedupToken } from '../../../../../lib/ingest/store/chWriter';
import { mergeIdentities } from '../../../../../lib/ingest/store/pgWriter';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const DAY = 24 * 3600_000;
const ctx = { now: NOW, activeGoals: new Set(['Signup']) };
const uuid = '3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b';
const pv = (over: Record<string, unknown>) => ({
  type: 'pageview',
  ts: NOW,
  sessionId: uuid,
  visitorId: uuid,
  props: { url: '/a' },
  ...over,
});

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
    expect(validateServerEvent({ type: 'x', consent: 'bad', ts: 'x' }, ctx)).toMatchObject({
      reason: 'invalid_event_type',
    });
    expect(validateServerEvent(pv({ consent: 'bad', ts: 'x' }), ctx)).toMatchObject({ reason: 'invalid_consent' });
    expect(validateServerEvent(pv({ consent: 'opt-out', ts: 'x' }), ctx)).toMatchObject({
      reason: 'consent_opted_out',
    });
    expect(validateServerEvent(pv({ ts: 'x', idempotencyKey: '' }), ctx)).toMatchObject({ reason: 'invalid_ts' });
    expect(validateServerEvent(pv({ idempotencyKey: '', visitorId: 'x' }), ctx)).toMatchObject({
      reason: 'invalid_idempotency_key',
    });
    expect(validateServerEvent(pv({ visitorId: 'x', sessionId: 'y' }), ctx)).toMatchObject({
      reason: 'invalid_visitor_id',
    });
    expect(validateServerEvent(pv({ sessionId: 'y', props: {} }), ctx)).toMatchObject({ reason: 'invalid_session_id' });
    expect(
      validateServerEvent({ type: 'purchase', ts: NOW, props: { amount: 'x', payment_provider: 'paypal' } }, ctx),
    ).toMatchObject({ reason: 'invalid_props' });
  });

  it('accepts UUIDs of any version and case but not the nil UUID', () => {
    expect(validateServerEvent(pv({ visitorId: uuid.toUpperCase() }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ visitorId: '00000000-0000-1000-8000-000000000000' }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ visitorId: '00000000-0000-0000-0000-000000000000' }), ctx)).toMatchObject({
      reason: 'invalid_visitor_id',
    });
    expect(validateServerEvent(pv({ visitorId: `${uuid}x` }), ctx)).toMatchObject({ reason: 'invalid_visitor_id' });
  });

  it('applies purchase defaults and keeps unknown props as custom properties', () => {
    const v = validateServerEvent({ type: 'purchase', ts: NOW, props: { amount: 12.5, coupon: 'X' } }, ctx);
    expect(v).toMatchObject({
      ok: true,
      event: {
        props: { amount: 12.5, currency: 'USD', payment_provider: 'server', status: 'succeeded' },
        custom: { coupon: 'X' },
      },
    });
  });

  it('limits props to 32 KiB of JSON exactly, however much escaping a value needs', () => {
    const MAX = 32 * 1024;
    const atLimit = { url: '/a', pad: '' };
    atLimit.pad = 'x'.repeat(MAX - JSON.stringify(atLimit).length);
    expect(JSON.stringify(atLimit).length).toBe(MAX);
    expect(validateServerEvent(pv({ props: atLimit }), ctx).ok).toBe(true);
    expect(validateServerEvent(pv({ props: { ...atLimit, pad: `${atLimit.pad}x` } }), ctx)).toMatchObject({
      reason: 'invalid_props',
      message: `props must be at most ${MAX} bytes of JSON`,
    });
    // Control characters become 6-character escapes: 5,500 of them are 33,000 characters of JSON.
    expect(
      validateServerEvent({ type: 'event', ts: NOW, props: { name: 'n', pad: '\u0001'.repeat(5_500) } }, ctx),
    ).toMatchObject({
      reason: 'invalid_props',
    });
    expect(
      validateServerEvent({ type: 'event', ts: NOW, props: { name: 'n', pad: '\u0001'.repeat(5_000) } }, ctx).ok,
    ).toBe(true);
    // Nested values are measured too.
    expect(
      validateServerEvent({ type: 'event', ts: NOW, props: { name: 'n', deep: { a: ['x'.repeat(MAX)] } } }, ctx),
    ).toMatchObject({
      reason: 'invalid_props',
    });
    expect(
      validateServerEvent(
        { type: 'event', ts: NOW, props: { name: 'n', deep: { a: ['x'.repeat(100)], n: 1e300 } } },
        ctx,
      ),
    ).toMatchObject({
      ok: true,
      event: { custom: { deep: { a: ['x'.repeat(100)], n: 1e300 } } },
    });
  });

  it('refuses props nested deeper than 8 levels as invalid_props, even thousands deep', () => {
    const nest = (levels: number) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = i % 2 ? { k: v } : [v];
      return v;
    };
    // props itself is the first level: a value of 7 levels makes 8.
    expect(validateServerEvent({ type: 'event', ts: NOW, props: { name: 'n', v: nest(7) } }, ctx).ok).toBe(true);
    expect(validateServerEvent({ type: 'event', ts: NOW, props: { name: 'n', v: nest(8) } }, ctx)).toMatchObject({
      ok: false,
      reason: 'invalid_props',
      message: 'props may nest objects and arrays at most 8 levels deep',
    });
    // JSON.stringify of this overflows the stack: it used to surface as internal_error.
    const deep = JSON.parse(`{"name":"n","v":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(validateServerEvent({ type: 'event', ts: NOW, props: deep }, ctx)).toMatchObject({
      ok: false,
      reason: 'invalid_props',
    });
  });

  it('refuses idempotency keys holding a lone surrogate, which Redis would store as U+FFFD', () => {
    for (const key of ['a\ud800', '\udc00b', 'x\udfffy\ud800']) {
      expect(validateServerEvent(pv({ idempotencyKey: key }), ctx)).toMatchObject({
        ok: false,
        reason: 'invalid_idempotency_key',
      });
    }
    // Paired surrogates (an emoji) and other Unicode are fine.
    expect(validateServerEvent(pv({ idempotencyKey: 'order-\ud83d\ude00-ü' }), ctx)).toMatchObject({
      ok: true,
      event: { idempotencyKey: 'order-😀-ü' },
    });
    // The key check keeps its place in the order: after ts, before visitorId.
    expect(validateServerEvent(pv({ ts: 'x', idempotencyKey: 'a\ud800' }), ctx)).toMatchObject({
      reason: 'invalid_ts',
    });
    expect(validateServerEvent(pv({ idempotencyKey: 'a\ud800', visitorId: 'x' }), ctx)).toMatchObject({
      reason: 'invalid_idempotency_key',
    });
  });

  it('matches goal names exactly against active goals', () => {
    expect(
      validateServerEvent({ type: 'goal', ts: NOW, visitorId: 'v', sessionId: 's', props: { name: 'Signup' } }, ctx).ok,
    ).toBe(true);
    expect(
      validateServerEvent({ type: 'goal', ts: NOW, visitorId: 'v', sessionId: 's', props: { name: 'signup' } }, ctx),
    ).toMatchObject({
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

  it('dedup tokens depend on the set of row names only', () => {
    const ids = ['b', 'a', 'c'].map((c) => `00000000-0000-4000-8000-00000000000${c}`);
    expect(dedupToken(ids)).toBe(dedupToken([...ids].reverse()));
    expect(dedupToken(ids)).not.toBe(dedupToken(ids.slice(1)));
    expect(dedupToken(['job:a', 'job:b'])).toBe(dedupToken(['job:b', 'job:a']));
    expect(dedupToken(['job:a', 'job:b'])).not.toBe(dedupToken(['job:a']));
  });

  it('merges identifies of one visitor: later fields win, attributes merge, seen times span', () => {
    const base = {
      event_id: uuid,
      website_id: uuid,
      visitor_id: 'v',
      email: null,
      name: null,
      customer_id: null,
      phone: null,
      company: null,
    };
    const merged = mergeIdentities([
      { ...base, name: 'Late', attributes: { b: 2 }, seen_at: '2026-11-22T12:00:00.000Z' },
      {
        ...base,
        email: 'a@example.com',
        name: 'Early',
        attributes: { a: 1, b: 1 },
        seen_at: '2026-11-22T10:00:00.000Z',
      },
    ] as IdentityRecord[]);
    expect(merged).toEqual([
      expect.objectContaining({
        email: 'a@example.com',
        name: 'Late',
        attributes: { a: 1, b: 2 },
        first_seen_at: '2026-11-22T10:00:00.000Z',
        last_seen_at: '2026-11-22T12:00:00.000Z',
      }),
    ]);
  });
});

describe('chTime', () => {
  it('formats like Date#toISOString for any instant, fractions and repeats of one second included', () => {
    const { chTime } =
      require('../../../../../lib/ingest/job/rows') as typeof import('../../../../../lib/ingest/job/rows');
    const samples = [0, 5, 70, 999, 1000, -1500, 1795333073007, 1795333073999.7, 1795333073573, 1795333073573];
    for (let i = 0; i < 2000; i++) samples.push(Math.random() * 4e12 - 1e12);
    for (const ms of samples)
      expect(chTime(ms)).toBe(new Date(Math.floor(ms)).toISOString().replace('T', ' ').replace('Z', ''));
  });
});

describe('the ingest job and its RowBinary payload', () => {
  const { EVENT_COLUMNS, JOB_HEAD_COLUMNS, ingestJobSchema } =
    require('../../../../../lib/ingest/job/rows') as typeof import('../../../../../lib/ingest/job/rows');
  const { EVENT_ROW_TYPES, ROW_BINARY_COLUMNS, decodeEventRows, eventRowSpans, keepRows, packJob } =
    require('../../../../../lib/ingest/job/rowBinary') as typeof import('../../../../../lib/ingest/job/rowBinary');
  // Every column a distinct value, so a column out of place cannot go unnoticed.
  const row = () =>
    Object.fromEntries(
      EVENT_COLUMNS.map((c, i) => [
        c,
        c === 'screen_width' ||
        c === 'screen_height' ||
        c === 'engagement_ms' ||
        c === 'scroll_depth' ||
        c === 'revenue'
          ? i
          : `v${i}`,
      ]),
    ) as unknown as import('../../../../../lib/ingest/job/rows').EventRow;
  const side = { identities: [], payments: [], interactions: [], errors: [], replays: [] };

  // An independent reader of RowBinary as ClickHouse defines it: LEB128 length + UTF-8 bytes for a String,
  // little-endian for the integers.
  function readRowBinary(payload: Buffer): unknown[][] {
    const rows: unknown[][] = [];
    let pos = 0;
    while (pos < payload.length) {
      const values: unknown[] = [];
      for (const type of EVENT_ROW_TYPES) {
        if (type === 'UInt8') {
          values.push(payload.readUInt8(pos));
          pos += 1;
        } else if (type === 'UInt16') {
          values.push(payload.readUInt16LE(pos));
          pos += 2;
        } else if (type === 'UInt32') {
          values.push(payload.readUInt32LE(pos));
          pos += 4;
        } else {
          let len = 0;
          for (let shift = 0; ; shift += 7) {
            const b = payload[pos++];
            len += (b & 0x7f) * 2 ** shift;
            if (b < 0x80) break;
          }
          values.push(payload.toString('utf8', pos, pos + len));
          pos += len;
        }
      }
      rows.push(values);
    }
    expect(pos).toBe(payload.length);
    return rows;
  }
  // What a row must read back as: its values in column order, texts well formed, the revenue as its text.
  const expected = (r: Record<string, unknown>) =>
    ROW_BINARY_COLUMNS.map((c) =>
      c === 'revenue' ? String(r[c]) : typeof r[c] === 'string' ? (r[c] as string).toWellFormed() : r[c],
    );
  // What the worker's decoder must give back: the row itself, its texts well formed.
  const wellFormed = (r: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? v.toWellFormed() : v]));

  it('a job holds its rows as RowBinary in its payload, the request’s columns encoded once, and counts them', () => {
    // Every column once: the request's first, the texts, then the integers.
    expect([...ROW_BINARY_COLUMNS].sort()).toEqual([...EVENT_COLUMNS].sort());
    expect(ROW_BINARY_COLUMNS.slice(0, JOB_HEAD_COLUMNS.length)).toEqual(JOB_HEAD_COLUMNS);
    expect(EVENT_ROW_TYPES.slice(-4)).toEqual(['UInt16', 'UInt16', 'UInt32', 'UInt8']);
    expect(EVENT_ROW_TYPES.slice(0, -4).every((t) => t === 'String')).toBe(true);
    const rows = [
      row(),
      { ...row(), event_id: 'second', url: 'other', ts: 'v0' },
      { ...row(), props: '{"a":"\n["}', ts: 'v9', revenue: 19.99 },
    ];
    const { data, payload } = packJob(uuid, rows, side);
    expect(data).toMatchObject({ v: 5, websiteId: uuid, rows: 3, tsRange: ['v0', 'v9'] });
    expect(readRowBinary(payload)).toEqual(rows.map(expected));
    expect(decodeEventRows(payload)).toEqual(rows.map(wellFormed));
    const spans = eventRowSpans(payload);
    expect(spans.map((s) => s.eventId)).toEqual(rows.map((r) => r.event_id));
    expect(readRowBinary(payload.subarray(spans[1].start, spans[1].end))).toEqual([expected(rows[1])]);
    expect(spans.at(-1)?.end).toBe(payload.length);
    expect(() => eventRowSpans(payload.subarray(0, payload.length - 1))).toThrow(/ends inside a row/);
    expect(() => decodeEventRows(payload.subarray(0, payload.length - 1))).toThrow(/ends inside a row/);
    expect(ingestJobSchema.safeParse(data).success).toBe(true);
    expect(ingestJobSchema.safeParse({ ...data, rows: -1 }).success).toBe(false);
    // Rows of different requests share no head: each row carries its own.
    const mixed = [row(), { ...row(), received_at: 'later' }];
    expect(readRowBinary(packJob(uuid, mixed, side).payload)).toEqual(mixed.map(expected));
    expect(decodeEventRows(packJob(uuid, mixed, side).payload)).toEqual(mixed.map(wellFormed));
    const empty = packJob(uuid, [], side);
    expect(empty.payload.length).toBe(0);
    expect(empty.data).toMatchObject({ rows: 0, tsRange: null });
  });

  it('a job keeps only the rows it is told to, with their side records', () => {
    const rows = ['e1', 'e2', 'e3'].map((id, i) => ({ ...row(), event_id: id, url: `u${i}` }));
    const record = (eventId: string) =>
      ({ event_id: eventId }) as unknown as import('../../../../../lib/ingest/job/rows').PaymentRecord;
    const identity = (eventId: string) =>
      ({ event_id: eventId }) as unknown as import('../../../../../lib/ingest/job/rows').IdentityRecord;
    const job = packJob(uuid, rows, { ...side, identities: [identity('e2')], payments: [record('e1'), record('e3')] });
    const kept = keepRows(job, [true, false, true]);
    expect(readRowBinary(kept.payload)).toEqual([expected(rows[0]), expected(rows[2])]);
    expect(kept.data).toMatchObject({
      v: 5,
      rows: 2,
      identities: [],
      payments: [{ event_id: 'e1' }, { event_id: 'e3' }],
    });
    expect(decodeEventRows(kept.payload)).toEqual([rows[0], rows[2]]);
    expect(readRowBinary(keepRows(job, [false, true, false]).payload)).toEqual([expected(rows[1])]);
  });

  it('one job format: the earlier layouts (other versions, rows inside the data) are malformed', () => {
    const { data } = packJob(uuid, [row()], side);
    for (const v of [1, 2, 3, 4, 6]) expect(ingestJobSchema.safeParse({ ...data, v }).success).toBe(false);
    const { rows: _rows, ...withoutRows } = data;
    const inline = { ...withoutRows, eventsText: '[]', eventIds: ['x'], keyed: [], eventsHead: null };
    for (const v of [2, 3, 5]) expect(ingestJobSchema.safeParse({ ...inline, v }).success).toBe(false);
  });

  it('writes lone surrogates as U+FFFD and leaves every other string as it is', () => {
    const samples = [
      'lone \ud800 high',
      '\udc00 low',
      'pair 😀 ok',
      'quote " and \\ backslash',
      'literal \\u0041',
      'nul \u0000 bell \u0007',
      'tab\tnew\nline',
      'ümlaut €',
    ];
    const rows = samples.map((text) => ({ ...row(), url: text, props: JSON.stringify({ note: text }) }));
    // RowBinary: the same well-formed texts, whatever their length (a length of 128+ bytes takes two bytes).
    const long = [
      'a'.repeat(127),
      'b'.repeat(128),
      'é'.repeat(42),
      'é'.repeat(43),
      '€'.repeat(50),
      `${'x'.repeat(200)}\ud800`,
      '😀'.repeat(21),
    ];
    // Mixed: a long text written on its own, then non-ASCII later in the same row (the row is rewritten).
    const mixed = [
      { ...row(), url: 'y'.repeat(200), props: 'ü' },
      { ...row(), url: 'ü', props: 'z'.repeat(300) },
      { ...row(), name: 'ß', website_id: 'ü' },
    ];
    const all = [...rows, ...long.map((text) => ({ ...row(), url: text, props: text })), ...mixed];
    const decoded = readRowBinary(packJob(uuid, all, side).payload);
    expect(decoded).toEqual(all.map(expected));
    expect(decodeEventRows(packJob(uuid, all, side).payload)).toEqual(all.map(wellFormed));
    expect(decoded[0][ROW_BINARY_COLUMNS.indexOf('url')]).toBe('lone \ufffd high');
  });
});

describe('path patterns', () => {
  it('match * across segments, literally otherwise, and in linear time on hostile input', () => {
    const { globMatch } =
      require('../../../../../lib/ingest/accept/exclusions') as typeof import('../../../../../lib/ingest/accept/exclusions');
    expect(globMatch('/admin/*', '/admin/users/7')).toBe(true);
    expect(globMatch('/admin/*', '/administrator')).toBe(false);
    expect(globMatch('*/print', '/docs/a/print')).toBe(true);
    expect(globMatch('/a.b', '/aXb')).toBe(false);
    expect(globMatch('/exact', '/exact')).toBe(true);
    expect(globMatch('/exact', '/exact/')).toBe(false);
    expect(globMatch('/*/*/edit', '/posts/12/edit')).toBe(true);
    const started = Date.now();
    expect(globMatch('/*a*a*a*a*a*a*a*b', `/${'a'.repeat(2048)}`)).toBe(false);
    expect(Date.now() - started).toBeLessThan(200);
  });
});
