// Inputs that used to answer 500 (issue 19 items 7, 8, 9 and 13): corrupt compressed bodies, undecodable or NUL
// path parameters, Stats ranges at 1970, an unreachable store, props nested thousands deep, idempotency keys with
// lone surrogates. Each is now a 4xx (or 503) in the error envelope, or a per-event reason.

import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createApp } from '../../../api/app';
import { createClickHouse } from '../../../lib/clickhouse/client';
import { createLogger } from '../../../lib/log';
import { createMetrics } from '../../../lib/metrics';
import { createTestContext, storeUrl, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type IngestFixture, ingestFixture, pageview } from '../../helpers/ingest';
import { checkAgainstOpenApi } from '../../helpers/openapiValidate';
import { insertDstFixture } from '../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let ingest: IngestFixture;
let siteId: string;
let trackingCode: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  ingest = await ingestFixture(ctx, 'enterprise');
  siteId = ingest.website.id;
  trackingCode = ingest.website.tracking_code;
  await insertDstFixture(ctx.clickhouse, siteId);
});
afterAll(() => ctx.close());

/** A request with a raw (binary) body, answered as status and parsed JSON. */
async function send(method: string, path: string, headers: Record<string, string>, body?: Buffer, base = ctx.baseUrl) {
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  checkAgainstOpenApi(method, path, res.status, json); // API answers must be documented ones
  return {
    status: res.status,
    headers: res.headers,
    body: json as { success: boolean; error: { code: string; message: string } },
  };
}

const envelope = (code: string) => ({
  success: false,
  error: { code, message: expect.any(String), timestamp: expect.any(String) },
});

describe('corrupt Content-Encoding (item 7)', () => {
  const json = Buffer.from(JSON.stringify({ email: 'nobody@example.com', password: 'password-123' }));
  const corrupt: [string, Buffer][] = [
    ['gzip', Buffer.from('this is not gzip data')],
    ['gzip', gzipSync(json).subarray(0, 12)], // truncated
    ['deflate', Buffer.from('this is not deflate data')],
    ['br', Buffer.from('this is not brotli data')],
  ];
  const routes = (): { path: string; headers: Record<string, string> }[] => [
    { path: '/api/v1/events', headers: { authorization: `Bearer ${ingest.key}`, 'content-type': 'application/json' } },
    { path: `/api/events/${trackingCode}`, headers: { 'content-type': 'text/plain' } },
    { path: '/api/auth/login', headers: { 'content-type': 'application/json' } },
    { path: '/api/external/v1/websites', headers: { 'x-api-key': ingest.key, 'content-type': 'application/json' } },
  ];

  it('answers 400 VALIDATION_ERROR on server ingestion, browser ingestion, a dashboard and an External API route', async () => {
    for (const route of routes()) {
      for (const [encoding, body] of corrupt) {
        const res = await send('POST', route.path, { ...route.headers, 'content-encoding': encoding }, body);
        expect({ path: route.path, encoding, status: res.status, body: res.body }).toEqual({
          path: route.path,
          encoding,
          status: 400,
          body: envelope('VALIDATION_ERROR'),
        });
        expect(res.body.error.message).toBe('Request body could not be decompressed');
      }
    }
  });

  it('still reads well-formed compressed bodies', async () => {
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['br', brotliCompressSync(json)],
    ] as const) {
      const res = await send(
        'POST',
        '/api/auth/login',
        { 'content-type': 'application/json', 'content-encoding': encoding },
        body,
      );
      expect({ encoding, status: res.status }).toEqual({ encoding, status: 401 }); // read and judged: no such account
    }
  });

  it('answers an unsupported Content-Encoding 415 in the envelope', async () => {
    for (const route of routes()) {
      const res = await send(
        'POST',
        route.path,
        { ...route.headers, 'content-encoding': 'compress' },
        Buffer.from('{}'),
      );
      expect({ path: route.path, status: res.status, body: res.body }).toEqual({
        path: route.path,
        status: 415,
        body: envelope('UNSUPPORTED_MEDIA_TYPE'),
      });
    }
  });
});

describe('undecodable and NUL path parameters (item 8)', () => {
  const badParams = ['%00', 'abc%00def', '%C0%AF', '%ED%A0%80', '%E0%80', '%'];

  it('answer 400 in the envelope on every family of routes with a parameter', async () => {
    const user = ingest.user;
    const routes: { method: string; path: (p: string) => string; token?: string; apiKey?: string }[] = [
      { method: 'GET', path: (p) => `/api/websites/${p}`, token: user.token },
      { method: 'PUT', path: (p) => `/api/websites/${p}/general`, token: user.token },
      { method: 'GET', path: (p) => `/api/websites/${siteId}/goals/${p}`, token: user.token },
      { method: 'GET', path: (p) => `/api/teams/${p}/api-keys`, token: user.token },
      { method: 'DELETE', path: (p) => `/api/teams/${user.teamId}/api-keys/${p}`, token: user.token },
      { method: 'GET', path: (p) => `/api/external/v1/websites/${p}`, apiKey: ingest.key },
      { method: 'GET', path: (p) => `/api/external/v1/analytics/${p}/visitors`, apiKey: ingest.key },
      { method: 'POST', path: (p) => `/api/events/${p}` },
      { method: 'POST', path: (p) => `/e/${p}` },
      { method: 'GET', path: (p) => `/api/events/${p}/config` },
    ];
    for (const route of routes) {
      for (const param of badParams) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (route.token) headers.authorization = `Bearer ${route.token}`;
        if (route.apiKey) headers['x-api-key'] = route.apiKey;
        const path = route.path(param);
        const res = await send(
          route.method,
          path,
          headers,
          route.method === 'GET' || route.method === 'DELETE' ? undefined : Buffer.from('{}'),
        );
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 400,
          body: envelope('VALIDATION_ERROR'),
        });
      }
    }
  });

  it('the Stats API’s site_id (a query parameter) answers VALIDATION_ERROR', async () => {
    for (const param of badParams) {
      const res = await send('GET', `/api/external/v1/stats/aggregate?site_id=${param}&period=7d&metrics=visitors`, {
        'x-api-key': ingest.key,
      });
      expect({ param, status: res.status, body: res.body }).toEqual({
        param,
        status: 400,
        body: envelope('VALIDATION_ERROR'),
      });
    }
  });

  it('leaves well-formed encoded parameters alone', async () => {
    // An encoded character that decodes fine still reaches the route, which judges it (404: no such code).
    const res = await send('GET', '/api/events/tm-%C3%BC/config', {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual(envelope('NOT_FOUND'));
  });
});

describe('Stats ranges at the edge of the supported dates (item 9)', () => {
  const get = (endpoint: string, params: Record<string, string>, version = 'v1') =>
    call(
      'GET',
      `/api/external/${version}/stats/${endpoint}?${new URLSearchParams({ site_id: siteId, metrics: 'visitors,pageviews', ...params })}`,
      {
        apiKey: ingest.key,
      },
    );

  it('answers a range touching 1970-01-01 with 400 and the spec code, on every endpoint', async () => {
    // The website is in UTC: local midnight of 1970-01-01 is the instant 0, which ClickHouse could not bind.
    for (const endpoint of ['aggregate', 'timeseries', 'breakdown']) {
      const extra: Record<string, string> = endpoint === 'breakdown' ? { property: 'visit:country' } : {};
      const custom = await get(endpoint, { period: 'custom:1969-12-31,1970-01-01', ...extra });
      expect({ endpoint, status: custom.status, body: custom.body }).toEqual({
        endpoint,
        status: 400,
        body: envelope('INVALID_CUSTOM_PERIOD'),
      });
      const day = await get(endpoint, { period: 'day', date: '1970-01-01', ...extra });
      expect({ endpoint, status: day.status, body: day.body }).toEqual({
        endpoint,
        status: 400,
        body: envelope('VALIDATION_ERROR'),
      });
    }
    const hourly = await get('timeseries', { period: 'day', date: '1970-01-01', interval: 'hour' });
    expect(hourly.status).toBe(400);
    const compared = await get('aggregate', { period: 'month', date: '2000-01-15', compare: 'previous_period' }, 'v2');
    expect(compared.status).toBe(400);
    expect(compared.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers the first and last supported days correctly', async () => {
    const first = await get('timeseries', { period: 'custom:2000-01-01,2000-01-02' });
    expect(first.status).toBe(200);
    expect(first.body.data.results).toEqual([
      { date: '2000-01-01', visitors: 0, pageviews: 0 },
      { date: '2000-01-02', visitors: 0, pageviews: 0 },
    ]);
    expect(first.body.data.meta.period_start).toBe('2000-01-01T00:00:00.000Z');
    const last = await get('aggregate', { period: 'day', date: '2099-12-31' });
    expect(last.status).toBe(200);
    expect(last.body.data.meta.period_end).toBe('2100-01-01T00:00:00.000Z');
    expect((await get('aggregate', { period: 'day', date: '2100-01-01' })).status).toBe(400);
    // Data inside the range is still counted (the DST fixture, read in UTC).
    const fixture = await get('aggregate', { period: 'custom:2026-03-28,2026-03-30' });
    expect(fixture.body.data.results.pageviews.value).toBe(6);
  });
});

describe('an unreachable store (item 13a)', () => {
  /** Serves an app whose ClickHouse client is `clickhouse`, logging into `lines`. */
  async function appWith(clickhouse: ReturnType<typeof createClickHouse>, lines: string[]) {
    const logger = createLogger(
      'warn',
      'test',
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const app = createApp({ ...ctx, clickhouse, logger, metrics: createMetrics('test') });
    const server = await new Promise<HttpServer>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async close() {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await clickhouse.close();
      },
    };
  }

  const reads = () => [
    `/api/external/v1/analytics/${siteId}?range=7d`,
    `/api/external/v1/analytics/${siteId}/visitors`,
    `/api/external/v1/stats/aggregate?site_id=${siteId}&period=7d&metrics=visitors`,
    `/api/external/v1/stats/timeseries?site_id=${siteId}&period=day&interval=hour&metrics=visitors`,
  ];

  async function expectUnavailable(clickhouse: ReturnType<typeof createClickHouse>) {
    const lines: string[] = [];
    const s = await appWith(clickhouse, lines);
    try {
      for (const path of reads()) {
        const res = await client(s.url)('GET', path, { apiKey: ingest.key });
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 503,
          body: envelope('SERVICE_UNAVAILABLE'),
        });
        expect(res.headers.get('retry-after')).toBe('5');
      }
      expect(lines.join('')).toMatch(/backing store unreachable/);
      expect(lines.join('')).not.toMatch(/"stack"/);
    } finally {
      await s.close();
    }
  }

  it('answers 503 with Retry-After when ClickHouse refuses connections', async () => {
    await expectUnavailable(createClickHouse({ url: 'http://127.0.0.1:1', database: ctx.config.CLICKHOUSE_DATABASE }));
  });

  it('answers 503 when ClickHouse hangs past the request timeout, or drops the connection', async () => {
    const held: import('node:net').Socket[] = [];
    const hang: Server = createServer((socket) => held.push(socket)).listen(0, '127.0.0.1');
    const drop: Server = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await Promise.all([hang, drop].map((s) => new Promise((r) => s.once('listening', r))));
    try {
      const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      await expectUnavailable(createClickHouse({ url: url(hang), database: 'x' }, { requestTimeoutMs: 300 }));
      await expectUnavailable(createClickHouse({ url: url(drop), database: 'x' }));
    } finally {
      for (const s of held) s.destroy();
      await Promise.all([hang, drop].map((s) => new Promise((r) => s.close(r))));
    }
  });

  it('keeps a ClickHouse exception a logged 500', async () => {
    const lines: string[] = [];
    // The store answers, with an exception: this database does not exist.
    const s = await appWith(createClickHouse({ url: storeUrl(), database: 'no_such_database_here' }), lines);
    try {
      const res = await client(s.url)('GET', `/api/external/v1/analytics/${siteId}?range=7d`, { apiKey: ingest.key });
      expect(res.status).toBe(500);
      expect(res.body).toEqual(envelope('INTERNAL_ERROR'));
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
      expect(logged).toMatchObject({ level: 50, err: { type: 'ClickHouseError', code: expect.any(String) } });
    } finally {
      await s.close();
    }
  });
});

describe('server ingestion edge cases (item 13b, 13c)', () => {
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('refuses props nested 10,000 deep as invalid_props and keeps the rest of the batch', async () => {
    const ok = pageview();
    const body = `{"trackingCode":"${trackingCode}","events":[${JSON.stringify(ok)},{"type":"event","ts":${Date.now()},"props":{"name":"n","v":${deep(10_000)}}}]}`;
    const res = await send(
      'POST',
      '/api/v1/events',
      { authorization: `Bearer ${ingest.key}`, 'content-type': 'application/json' },
      Buffer.from(body),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      acceptedCount: 1,
      rejectedCount: 1,
      errors: [{ index: 1, reason: 'invalid_props' }],
    });
  });

  it('reads a whole body nested 10,000 deep without failing the request', async () => {
    // Deep where the batch shape is checked: a 400, not a stack overflow.
    const context = `{"trackingCode":"${trackingCode}","events":[${JSON.stringify(pageview())}],"serverContext":${deep(10_000)}}`;
    const res = await send(
      'POST',
      '/api/v1/events',
      { authorization: `Bearer ${ingest.key}`, 'content-type': 'application/json' },
      Buffer.from(context),
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: envelope('VALIDATION_ERROR') });
    // Deep in an unknown field of an event: the field is not kept, the event is.
    const extra = `{"trackingCode":"${trackingCode}","events":[${JSON.stringify(pageview()).slice(0, -1)},"extra":${deep(10_000)}}]}`;
    const kept = await send(
      'POST',
      '/api/v1/events',
      { authorization: `Bearer ${ingest.key}`, 'content-type': 'application/json' },
      Buffer.from(extra),
    );
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ acceptedCount: 1, rejectedCount: 0 });
  });

  it('refuses idempotency keys with lone surrogates instead of letting two of them collide', async () => {
    // Both keys are "k" + U+FFFD once encoded as UTF-8; before, the second was answered deduped.
    const res = await ingest.post([
      pageview({ idempotencyKey: 'k\ud800' }),
      pageview({ idempotencyKey: 'k\udbff' }),
      pageview({ idempotencyKey: 'k\ud83d\ude00' }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      acceptedCount: 1,
      dedupedCount: 0,
      rejectedCount: 2,
      errors: [
        { index: 0, reason: 'invalid_idempotency_key' },
        { index: 1, reason: 'invalid_idempotency_key' },
      ],
    });
  });
});
