// CSV export (issue 22 point 6): Stats v2 timeseries and breakdowns as CSV, and the whole-site ZIP export,
// on the DST fixture of test/helpers/statsFixture.ts (Europe/Berlin, 29 March 2026) and a site whose campaign
// names are hostile to spreadsheets.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseExportParams, siteExport } from '../../../../lib/export/site';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { parseCsv } from '../../../helpers/csv';
import { client } from '../../../helpers/http';
import { checkAgainstOpenApi } from '../../../helpers/openapiValidate';
import { eventRow, insertDstFixture, storeRows } from '../../../helpers/statsFixture';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;
let key: string;
let siteId: string;
let evilId: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-export-'));

// Campaign names as a visitor's utm_campaign can set them: formulas, a comma, quotes.
const CAMPAIGNS = ['spring sale', "=cmd|' /C calc'!A0", '+1 555', '-2', '@SUM(A1)', 'a,b', 'say "hi"'];

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'csv');
  const res = await call('POST', '/api/websites', {
    token: owner.token,
    body: { domain: 'shop.example.com', name: 'Shop', timezone: 'Europe/Berlin' },
  });
  siteId = res.body.data.website.id;
  evilId = (await createWebsite(ctx, owner, 'evil.example.com')).id;
  key = (await createApiKey(ctx, owner)).key;
  await insertDstFixture(ctx.clickhouse, siteId);
  for (const body of [{ name: 'Signup' }, { kind: 'page', path: '/c' }]) {
    const goal = await call('POST', `/api/websites/${siteId}/goals`, { token: owner.token, body });
    if (goal.status !== 201) throw new Error(`goal: ${goal.status} ${goal.text}`);
  }
  await storeRows(
    ctx.clickhouse,
    CAMPAIGNS.map((utm_campaign, i) =>
      eventRow(evilId, {
        visitor_id: `v${i}`,
        session_id: `s${i}`,
        pathname: '/landing',
        utm_campaign,
        ts: '2026-03-29T10:00:00Z',
      }),
    ),
  );
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await ctx.close();
});

const q = (params: Record<string, string>, site = siteId) =>
  new URLSearchParams({ site_id: site, ...params }).toString();
// As the signed-in owner (no API rate limit: this file makes many requests); API keys where the key matters.
const v2 = (p: string, headers: Record<string, string> = {}) =>
  call('GET', `/api/external/v2/stats/${p}`, { token: owner.token, headers });
const signedIn = () => ({ authorization: `Bearer ${owner.token}` });
const DAY = { period: 'day', date: '2026-03-29' };

describe('Stats v2 as CSV', () => {
  it('answers a breakdown as CSV with the JSON answer’s rows', async () => {
    const params = q({ ...DAY, metrics: 'visitors,pageviews,bounce_rate', property: 'visit:country' });
    const csv = await call('GET', `/api/external/v2/stats/breakdown?${params}&format=csv`, { apiKey: key });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(
      'attachment; filename="shop.example.com-breakdown-country-2026-03-29-2026-03-29.csv"',
    );
    // DE: C1 (one pageview that day, not a bounce: its visit goes on past midnight); US: B1 (bounce), B2.
    expect(csv.text).toBe('country,visitors,pageviews,bounce_rate\r\nDE,1,1,0\r\nUS,1,2,50\r\n');
    const json = await v2(`breakdown?${params}`);
    expect(parseCsv(csv.text).slice(1)).toEqual(
      json.body.data.results.map((r: Record<string, unknown>) =>
        ['country', 'visitors', 'pageviews', 'bounce_rate'].map((c) => String(r[c])),
      ),
    );
  });

  it('answers a timeseries as CSV, one line per bucket, zero-filled', async () => {
    const params = q({ period: '7d', date: '2026-03-29', metrics: 'visitors,pageviews' });
    const csv = await v2(`timeseries?${params}`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toBe(
      'attachment; filename="shop.example.com-timeseries-day-2026-03-23-2026-03-29.csv"',
    );
    // 28th: A1's two pageviews; 29th: B (B1, B2) and C (C1's first pageview).
    expect(csv.text).toBe(
      [
        'date,visitors,pageviews',
        '2026-03-23,0,0',
        '2026-03-24,0,0',
        '2026-03-25,0,0',
        '2026-03-26,0,0',
        '2026-03-27,0,0',
        '2026-03-28,1,2',
        '2026-03-29,2,3',
        '',
      ].join('\r\n'),
    );
    const json = await v2(`timeseries?${params}`);
    expect(parseCsv(csv.text).slice(1)).toEqual(
      json.body.data.results.map((r: Record<string, unknown>) => [r.date, String(r.visitors), String(r.pageviews)]),
    );
  });

  it('keeps the page of a paginated breakdown and the metrics in the order asked', async () => {
    const csv = await v2(
      `breakdown?${q({ ...DAY, metrics: 'pageviews,visitors', property: 'visit:country', limit: '1', page: '2' })}&format=csv`,
    );
    expect(csv.text).toBe('country,pageviews,visitors\r\nUS,2,1\r\n');
  });

  it('quotes per RFC 4180 and defuses formulas', async () => {
    const csv = await v2(`breakdown?${q({ ...DAY, metrics: 'visitors', property: 'visit:utm_campaign' }, evilId)}`, {
      accept: 'text/csv',
    });
    expect(csv.status).toBe(200);
    // One visitor each: ties ordered by the value ('+' < '-' < '=' < '@' < 'a' < 's').
    expect(csv.text).toBe(
      [
        'utm_campaign,visitors',
        "'+1 555,1",
        "'-2,1",
        "'=cmd|' /C calc'!A0,1",
        "'@SUM(A1),1",
        '"a,b",1',
        '"say ""hi""",1',
        'spring sale,1',
        '',
      ].join('\r\n'),
    );
  });

  it('chooses the format: format over Accept, JSON by default, aggregate always JSON', async () => {
    const params = q({ ...DAY, metrics: 'visitors', property: 'visit:country' });
    const isJson = (r: { headers: Headers }) => r.headers.get('content-type')?.startsWith('application/json');
    expect(isJson(await v2(`breakdown?${params}`))).toBe(true);
    expect(isJson(await v2(`breakdown?${params}`, { accept: 'text/html' }))).toBe(true);
    expect(isJson(await v2(`breakdown?${params}&format=json`, { accept: 'text/csv' }))).toBe(true);
    const csv = await v2(`breakdown?${params}&format=csv`, { accept: 'application/json' });
    expect(csv.text).toBe('country,visitors\r\nDE,1\r\nUS,1\r\n');
    const preferred = await v2(`breakdown?${params}`, { accept: 'text/csv, application/json;q=0.5' });
    expect(preferred.text).toBe(csv.text);
    expect(csv.headers.get('vary')).toMatch(/Accept/);

    const agg = await v2(`aggregate?${q({ ...DAY, metrics: 'visitors' })}`, { accept: 'text/csv' });
    expect(agg.body.data.results).toEqual({ visitors: { value: 2 } });
    const aggCsv = await v2(`aggregate?${q({ ...DAY, metrics: 'visitors' })}&format=csv`);
    expect([aggCsv.status, aggCsv.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const bad = await v2(`breakdown?${params}&format=xml`);
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('answers errors as JSON envelopes even when CSV is asked for', async () => {
    const missing = await v2(`breakdown?${q({ ...DAY, property: 'visit:country' })}&format=csv`, {
      accept: 'text/csv',
    });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
    expect(missing.body.error.code).toBe('MISSING_METRICS');
    const other = await registerUser(ctx, 'pro', 'csv-other');
    const theirs = await createWebsite(ctx, other, 'theirs.example.com');
    const hidden = await v2(`timeseries?${q({ ...DAY, metrics: 'visitors' }, theirs.id)}&format=csv`);
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('leaves v1 as the spec has it: no format, no CSV', async () => {
    const params = q({ ...DAY, metrics: 'visitors', property: 'visit:country' });
    const plain = await call('GET', `/api/external/v1/stats/breakdown?${params}`, { apiKey: key });
    const asked = await call('GET', `/api/external/v1/stats/breakdown?${params}&format=csv`, {
      apiKey: key,
      headers: { accept: 'text/csv' },
    });
    expect(asked.status).toBe(200);
    expect(asked.headers.get('content-type')).toMatch(/^application\/json/);
    expect(asked.body.data).toEqual(plain.body.data);
  });
});

// ---- the whole-site export ---------------------------------------------------------------------------

interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json?: { success: boolean; error?: { code: string } };
}

async function download(p: string, headers: Record<string, string>): Promise<Download> {
  const res = await fetch(ctx.baseUrl + p, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type');
  const json = type?.startsWith('application/json') ? JSON.parse(bytes.toString('utf8')) : undefined;
  checkAgainstOpenApi('GET', p, res.status, json, type);
  return { status: res.status, headers: res.headers, bytes, json };
}

/** The archive's entries as [name, text], after unzip and Python's zipfile have tested it. */
function unzip(bytes: Buffer): [string, string][] {
  const file = path.join(dir, `${randomUUID()}.zip`);
  fs.writeFileSync(file, bytes);
  expect(execFileSync('unzip', ['-t', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
  execFileSync('python3', ['-m', 'zipfile', '-t', file]);
  const read = `import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps([[n, z.read(n).decode('utf-8')] for n in z.namelist()]))`;
  return JSON.parse(execFileSync('python3', ['-c', read, file], { encoding: 'utf8' }));
}

// Each file of the archive and the breakdown property it is the answer of (timeseries by day: none).
const FILES: [string, string | undefined][] = [
  ['visitors.csv', undefined],
  ['pages.csv', 'event:page'],
  ['entry_pages.csv', 'visit:entry_page'],
  ['exit_pages.csv', 'visit:exit_page'],
  ['channels.csv', 'visit:channel'],
  ['sources.csv', 'visit:source'],
  ['referrers.csv', 'visit:referrer'],
  ['utm_sources.csv', 'visit:utm_source'],
  ['utm_mediums.csv', 'visit:utm_medium'],
  ['utm_campaigns.csv', 'visit:utm_campaign'],
  ['countries.csv', 'visit:country'],
  ['regions.csv', 'visit:region'],
  ['cities.csv', 'visit:city'],
  ['devices.csv', 'visit:device'],
  ['browsers.csv', 'visit:browser'],
  ['operating_systems.csv', 'visit:os'],
  ['conversions.csv', 'event:goal'],
  ['custom_events.csv', 'event:name'],
];

/** A JSON answer's value as its CSV cell: money ({value, currency}) is its value. */
const cell = (v: unknown) => String(v !== null && typeof v === 'object' ? (v as { value: number }).value : v);

describe('GET /api/external/v2/export', () => {
  const WEEK = { period: '7d', date: '2026-03-29' };

  it('streams a ZIP of CSVs, each the JSON answer of its breakdown or timeseries', async () => {
    const res = await download(`/api/external/v2/export?${q(WEEK)}`, { 'x-api-key': key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(
      'attachment; filename="shop.example.com-2026-03-23-2026-03-29.zip"',
    );
    expect(res.headers.get('content-length')).toBeNull(); // streamed, not built first
    const entries = unzip(res.bytes);
    expect(entries.map(([name]) => name)).toEqual([...FILES.map(([name]) => name), 'custom_props.csv']);
    const files = new Map(entries);

    // By hand: the week has A (DE, Chrome; 28th), B (US, Firefox) and C (DE, Chrome) on the 29th.
    const visitorsCol = (name: string) => parseCsv(files.get(name)!).map((r) => [r[0], r[1]]);
    expect(visitorsCol('countries.csv')).toEqual([
      ['country', 'visitors'],
      ['DE', '2'],
      ['US', '1'],
    ]);
    expect(visitorsCol('browsers.csv')).toEqual([
      ['browser', 'visitors'],
      ['Chrome', '2'],
      ['Firefox', '1'],
    ]);
    expect(visitorsCol('pages.csv')).toEqual([
      ['page', 'visitors'],
      ['/a', '3'],
      ['/b', '1'],
      ['/c', '1'],
    ]);
    expect(parseCsv(files.get('visitors.csv')!).slice(-2)).toEqual([
      ['2026-03-28', '1', '2', '2', expect.any(String), expect.any(String)],
      ['2026-03-29', '2', '3', '4', expect.any(String), expect.any(String)], // events: 3 pageviews + Signup
    ]);
    // Goals: B sent Signup and viewed /c (the page goal "Visit /c"), 1 of the week's 3 visitors: 33.33 %;
    // custom events: Signup. No purchases.
    expect(parseCsv(files.get('conversions.csv')!)).toEqual([
      ['goal', 'visitors', 'events', 'conversion_rate', 'total_revenue', 'average_revenue'],
      ['Signup', '1', '1', '33.33', '0', '0'],
      ['Visit /c', '1', '1', '33.33', '0', '0'],
    ]);
    expect(parseCsv(files.get('custom_events.csv')!)).toEqual([
      ['name', 'visitors', 'events', 'conversion_rate'],
      ['Signup', '1', '1', '33.33'],
    ]);
    expect(parseCsv(files.get('utm_campaigns.csv')!)).toEqual([
      ['utm_campaign', 'visitors', 'pageviews', 'bounce_rate', 'visit_duration'],
    ]);

    for (const [name, property] of FILES) {
      const [header, ...rows] = parseCsv(files.get(name)!);
      const metrics = header.slice(1).join(',');
      const answer = property
        ? await v2(`breakdown?${q({ ...WEEK, metrics, property, limit: '1000' })}`)
        : await v2(`timeseries?${q({ ...WEEK, metrics, interval: 'day' })}`);
      expect([name, rows]).toEqual([
        name,
        answer.body.data.results.map((r: Record<string, unknown>) => header.map((c) => cell(r[c]))),
      ]);
    }
  });

  it('applies filters to every file', async () => {
    const filters = JSON.stringify([['is', 'country', ['US']]]);
    const files = new Map(
      unzip((await download(`/api/external/v2/export?${q({ ...WEEK, filters })}`, signedIn())).bytes),
    );
    expect(parseCsv(files.get('countries.csv')!).map((r) => r.slice(0, 2))).toEqual([
      ['country', 'visitors'],
      ['US', '1'],
    ]);
    expect(parseCsv(files.get('pages.csv')!).map((r) => r.slice(0, 3))).toEqual([
      ['page', 'visitors', 'pageviews'],
      ['/a', '1', '1'],
      ['/c', '1', '1'],
    ]);
  });

  it('defuses formulas in the archive too', async () => {
    const files = new Map(unzip((await download(`/api/external/v2/export?${q(DAY, evilId)}`, signedIn())).bytes));
    const campaigns = parseCsv(files.get('utm_campaigns.csv')!).map((r) => r[0]);
    expect(campaigns).toEqual([
      'utm_campaign',
      "'+1 555",
      "'-2",
      "'=cmd|' /C calc'!A0",
      "'@SUM(A1)",
      'a,b',
      'say "hi"',
      'spring sale',
    ]);
  });

  it('exports custom properties: per key of the period, its props breakdown', async () => {
    const site = (await createWebsite(ctx, owner, 'props.example.com')).id;
    const custom = (v: string, name: string, props: object) =>
      eventRow(site, {
        visitor_id: v,
        session_id: `s-${v}`,
        type: 'event',
        name,
        props: JSON.stringify(props),
        ts: '2026-03-29T10:00:00Z',
      });
    await storeRows(ctx.clickhouse, [
      custom('p1', 'Download', { file: 'a.pdf', kind: 'pdf' }),
      custom('p2', 'Download', { file: 'a.pdf' }),
      custom('p2', 'Download', { file: '=HYPERLINK("x")' }),
      custom('p3', 'Signup', { plan: 'pro' }),
    ]);
    const entries = unzip((await download(`/api/external/v2/export?${q(DAY, site)}`, signedIn())).bytes);
    expect(entries.map(([name]) => name)).toEqual([...FILES.map(([name]) => name), 'custom_props.csv']);
    const rows = parseCsv(new Map(entries).get('custom_props.csv')!);
    // Keys by use (file 3, then kind and plan once each), values as each key's breakdown orders them.
    expect(rows).toEqual([
      ['property', 'value', 'visitors', 'events'],
      ['file', 'a.pdf', '2', '2'],
      ['file', `'=HYPERLINK("x")`, '1', '1'],
      ['kind', 'pdf', '1', '1'],
      ['plan', 'pro', '1', '1'],
    ]);
    for (const key of ['file', 'kind', 'plan']) {
      const answer = await v2(
        `breakdown?${q({ ...DAY, metrics: 'visitors,events', property: `event:props:${key}` }, site)}`,
      );
      expect(rows.filter((r) => r[0] === key).map((r) => [r[2], r[3]])).toEqual(
        answer.body.data.results.map((r: Record<string, number>) => [String(r.visitors), String(r.events)]),
      );
    }
  });

  it('serves a signed-in member; another team gets 404; bad input a 400 envelope', async () => {
    const mine = await download(`/api/external/v2/export?${q(WEEK)}`, signedIn());
    expect(mine.status).toBe(200);
    expect(unzip(mine.bytes).map(([n]) => n)).toEqual([...FILES.map(([n]) => n), 'custom_props.csv']);

    const other = await registerUser(ctx, 'pro', 'export-other');
    const otherKey = (await createApiKey(ctx, other)).key;
    const strangers: Record<string, string>[] = [{ 'x-api-key': otherKey }, { authorization: `Bearer ${other.token}` }];
    for (const headers of strangers) {
      const hidden = await download(`/api/external/v2/export?${q(WEEK)}`, headers);
      expect([hidden.status, hidden.json?.error?.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect((await download(`/api/external/v2/export?${q(WEEK)}`, {})).status).toBe(401);

    const cases: [Record<string, string>, string][] = [
      [{ period: '7d' }, 'MISSING_SITE_ID'],
      [{ site_id: siteId }, 'MISSING_PERIOD'],
      [{ site_id: siteId, period: 'week' }, 'INVALID_PERIOD'],
      [{ site_id: siteId, period: 'custom:2026-01-01,2027-06-01' }, 'PERIOD_TOO_LONG'],
      [{ site_id: siteId, period: '7d', date: 'yesterday' }, 'VALIDATION_ERROR'],
      [{ site_id: siteId, period: '7d', filters: '[["is","planet",["Mars"]]]' }, 'UNKNOWN_FILTER_KEY'],
      [{ site_id: 'not-a-uuid', period: '7d' }, 'VALIDATION_ERROR'],
    ];
    for (const [params, code] of cases) {
      const bad = await download(`/api/external/v2/export?${new URLSearchParams(params)}`, signedIn());
      expect([bad.status, bad.json?.error?.code]).toEqual([400, code]);
    }
    const twice = await download(`/api/external/v2/export?${q(WEEK)}&period=30d`, signedIn());
    expect([twice.status, twice.json?.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('survives a client that leaves mid-download, and cancels what is left', async () => {
    const controller = new AbortController();
    const res = await fetch(`${ctx.baseUrl}/api/external/v2/export?${q(WEEK)}`, {
      headers: signedIn(),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    controller.abort();
    await expect(res.arrayBuffer()).rejects.toThrow();
    // The server goes on answering.
    const after = await download(`/api/external/v2/export?${q(WEEK)}`, signedIn());
    expect(unzip(after.bytes)).toHaveLength(FILES.length + 1);

    // In the library: an aborted export runs no further query, and the one under way is cancelled.
    const params = parseExportParams({ site_id: siteId, ...WEEK });
    if ('error' in params) throw new Error(params.error.message);
    const stop = new AbortController();
    const entries = siteExport(ctx.clickhouse, { id: siteId, timezone: 'Europe/Berlin' }, params, stop.signal);
    expect((await entries.next()).value?.name).toBe('visitors.csv');
    stop.abort();
    await expect(entries.next()).rejects.toThrow(/abort/i);
    const running = new AbortController();
    const started = siteExport(ctx.clickhouse, { id: siteId, timezone: 'Europe/Berlin' }, params, running.signal);
    const first = started.next();
    running.abort(); // while the first query is in flight
    await expect(first).rejects.toThrow(/abort/i);
  });
});
