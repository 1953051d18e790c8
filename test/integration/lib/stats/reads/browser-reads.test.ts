// Reads of browser-only data, fed through the real browser ingestion route and worker: heatmap pages and
// replay sessions from ClickHouse, error groups (list and triage) through the dashboard API.
import { randomUUID } from 'node:crypto';
import { errorFingerprint } from '../../../../../lib/ingest/accept/browser';
import { heatmapPages } from '../../../../../lib/stats/reads/heatmapPages';
import { replaySessions } from '../../../../../lib/stats/reads/replaySessions';
import { createWebsite, registerUser, type TestUser } from '../../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { client } from '../../../../helpers/http';
import { CHROME, startTestWorker, waitForEvents } from '../../../../helpers/ingest';

let ctx: TestContext;
let owner: TestUser;
let editor: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let call: ReturnType<typeof client>;

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'pro', 'reads-owner');
  editor = await registerUser(ctx, 'free', 'reads-editor');
  viewer = await registerUser(ctx, 'free', 'reads-viewer');
  outsider = await registerUser(ctx, 'pro', 'reads-outsider');
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker.stop();
  await ctx.close();
});

function event(host: string, over: Record<string, unknown> = {}) {
  return {
    event_type: 'pageview',
    session_id: `sess-${randomUUID()}`,
    url: `https://${host}/`,
    device_type: 'desktop',
    browser: 'Chrome',
    os: 'macOS',
    user_agent: CHROME,
    ...over,
  };
}

async function send(code: string, body: Record<string, unknown>, ua = CHROME) {
  const res = await call('POST', `/api/events/${code}`, { headers: { 'user-agent': ua }, body });
  expect(res.status).toBe(200);
  expect(res.body.data.type).toBe('event_recorded');
}

/** Heatmap clicks and replay chunks are collected only for websites that have them on (issue 19 item 5). */
async function enable(websiteId: string, settings: { heatmaps?: boolean; session_replay?: boolean }) {
  const res = await call('PUT', `/api/websites/${websiteId}/tracking`, { token: owner.token, body: settings });
  expect(res.status).toBe(200);
}

async function scalar(sql: string, params: Record<string, unknown>): Promise<number> {
  const rows = await (await ctx.clickhouse.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<{
    n: string;
  }>();
  return Number(rows[0].n);
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Keeps duplicate rows of a ReplacingMergeTree un-collapsed, so reads must dedupe them themselves. */
async function stopMerges(table: string) {
  await ctx.clickhouse.command({ query: `SYSTEM STOP MERGES ${ctx.config.CLICKHOUSE_DATABASE}.${table}` });
}

describe('heatmapPages', () => {
  it('counts distinct clicks per path (not pageviews, not other websites), sorted by count then path, with the latest click time', async () => {
    const site = await createWebsite(ctx, owner, 'heat.example.com');
    const other = await createWebsite(ctx, owner, 'heat-other.example.com');
    await enable(site.id, { heatmaps: true });
    await enable(other.id, { heatmaps: true });
    await stopMerges('interactions');
    const click = (path: string, over: Record<string, unknown> = {}) =>
      event('heat.example.com', {
        event_type: 'click',
        url: `https://heat.example.com${path}`,
        x: 10,
        y: 20,
        viewport_width: 1280,
        viewport_height: 800,
        page_height: 2000,
        selector: 'a.cta',
        ...over,
      });

    const t0 = Date.now();
    // /pricing 3 (one with a query string: the url is the path), /alpha 2, /beta 2, /zeta 1.
    for (const path of ['/beta', '/pricing', '/alpha', '/pricing?plan=pro', '/beta', '/zeta', '/alpha']) {
      await send(site.tracking_code, click(path));
      await sleep(5);
    }
    const beforeLast = Date.now();
    await sleep(20);
    await send(site.tracking_code, click('/pricing#faq'));
    const t1 = Date.now();
    // Pageviews and another website's clicks never count.
    await send(site.tracking_code, event('heat.example.com', { url: 'https://heat.example.com/zeta' }));
    await send(site.tracking_code, event('heat.example.com', { url: 'https://heat.example.com/zeta' }));
    await send(
      other.tracking_code,
      event('heat-other.example.com', {
        event_type: 'click',
        url: 'https://heat-other.example.com/zeta',
        x: 1,
        y: 1,
        viewport_width: 1,
        viewport_height: 1,
        page_height: 1,
        selector: 'a',
      }),
    );

    const q = 'SELECT count() AS n FROM interactions WHERE website_id = {w:UUID}';
    await waitUntil(
      async () => (await scalar(q, { w: site.id })) === 8 && (await scalar(q, { w: other.id })) === 1,
      'clicks',
    );
    await waitForEvents(ctx, 2, `website_id = '${site.id}' AND type = 'pageview'`);

    // A retried click that reached the table twice (same event id, a second insert) is one interaction.
    const [copy] = await (
      await ctx.clickhouse.query({
        query: `SELECT * FROM interactions WHERE website_id = {w:UUID} AND pathname = '/zeta'`,
        query_params: { w: site.id },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    await ctx.clickhouse.insert({
      table: 'interactions',
      values: [copy],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: `test-${randomUUID()}` },
    });
    expect(await scalar(q, { w: site.id })).toBe(9);

    const data = await heatmapPages(ctx.clickhouse, site.id, 20);
    expect(data.pages.map((p) => [p.url, p.total_interactions])).toEqual([
      ['/pricing', 3],
      ['/alpha', 2],
      ['/beta', 2],
      ['/zeta', 1],
    ]);
    const pricing = Date.parse(data.pages[0].last_updated);
    expect(data.pages[0].last_updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(pricing).toBeGreaterThanOrEqual(beforeLast);
    expect(pricing).toBeLessThanOrEqual(t1);
    for (const p of data.pages.slice(1)) {
      expect(Date.parse(p.last_updated)).toBeGreaterThanOrEqual(t0);
      expect(Date.parse(p.last_updated)).toBeLessThan(pricing);
    }
    // The second /alpha click came after the second /beta one.
    expect(Date.parse(data.pages[1].last_updated)).toBeGreaterThan(Date.parse(data.pages[2].last_updated));

    expect((await heatmapPages(ctx.clickhouse, site.id, 2)).pages.map((p) => p.url)).toEqual(['/pricing', '/alpha']);
    expect((await heatmapPages(ctx.clickhouse, other.id, 20)).pages).toEqual([
      expect.objectContaining({ url: '/zeta', total_interactions: 1 }),
    ]);
    expect((await heatmapPages(ctx.clickhouse, randomUUID(), 20)).pages).toEqual([]);

    // Once merges have collapsed the copies (one part per partition, read without merging), nothing changes.
    await ctx.clickhouse.command({ query: `SYSTEM START MERGES ${ctx.config.CLICKHOUSE_DATABASE}.interactions` });
    await ctx.clickhouse.command({ query: 'OPTIMIZE TABLE interactions FINAL' });
    expect(await scalar(q, { w: site.id })).toBe(8);
    expect(await heatmapPages(ctx.clickhouse, site.id, 20)).toEqual(data);
  });
});

describe('replaySessions', () => {
  it('one per recorded session, newest first, with session details, rrweb event counts and offset pagination', async () => {
    const host = 'replay.example.com';
    const site = await createWebsite(ctx, owner, host);
    const other = await createWebsite(ctx, owner, 'replay-other.example.com');
    await enable(site.id, { session_replay: true });
    await enable(other.id, { session_replay: true });
    await stopMerges('replay_chunks');
    const chunk = (session: string, seq: number, data: string, path = '/') =>
      event(host, { event_type: 'replay', session_id: session, seq, data, url: `https://${host}${path}` });
    const [a, b, c] = [`sess-a-${randomUUID()}`, `sess-b-${randomUUID()}`, `sess-c-${randomUUID()}`];

    // A: desktop Chrome; seq 1 arrives before seq 0, so the starting page is seq 0's, not the first to arrive.
    const tA0 = Date.now();
    await send(site.tracking_code, event(host, { session_id: a, url: `https://${host}/landing` }));
    await send(site.tracking_code, chunk(a, 1, '[{"type":3},{"type":3}]', '/second'));
    await sleep(250);
    await send(site.tracking_code, chunk(a, 0, '[{"type":4},{"type":2},{"type":3}]', '/landing?ref=x'));
    const tA1 = Date.now();
    await sleep(20);
    // B: no other events (no session row); chunks whose data is not an array count one event each.
    await send(site.tracking_code, chunk(b, 0, 'not json at all', '/b'));
    await send(site.tracking_code, chunk(b, 1, '{"type":2}', '/b'));
    await sleep(20);
    // C: mobile Safari; seq 0 is sent twice (a tracker retry) and must count once.
    await send(site.tracking_code, event(host, { session_id: c, url: `https://${host}/c` }), IPHONE);
    await send(site.tracking_code, chunk(c, 0, '[{"type":4},{"type":2}]', '/c'), IPHONE);
    await send(site.tracking_code, chunk(c, 0, '[{"type":4},{"type":2}]', '/c'), IPHONE);
    await sleep(20);
    await send(site.tracking_code, chunk(c, 1, '[{"type":3}]', '/c'), IPHONE);
    // Another website's recording is not listed.
    await send(
      other.tracking_code,
      event('replay-other.example.com', {
        event_type: 'replay',
        seq: 0,
        data: '[{}]',
        url: 'https://replay-other.example.com/',
      }),
    );

    const distinctChunks =
      'SELECT count() AS n FROM (SELECT DISTINCT session_id, seq FROM replay_chunks WHERE website_id = {w:UUID})';
    await waitUntil(async () => (await scalar(distinctChunks, { w: site.id })) === 6, 'replay chunks');
    // The worker may have collapsed the retried chunk within one insert; a retry written by a second insert
    // stays a second row until a merge, which reads must not count twice.
    const [copy] = await (
      await ctx.clickhouse.query({
        query: 'SELECT * FROM replay_chunks WHERE session_id = {s:String} AND seq = 0 LIMIT 1',
        query_params: { s: c },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    await ctx.clickhouse.insert({
      table: 'replay_chunks',
      values: [copy],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: `test-${randomUUID()}` },
    });
    expect(
      await scalar('SELECT count() AS n FROM replay_chunks WHERE session_id = {s:String}', { s: c }),
    ).toBeGreaterThanOrEqual(3);
    await waitForEvents(ctx, 2, `website_id = '${site.id}' AND type = 'pageview'`);

    const all = await replaySessions(ctx.clickhouse, site.id, { limit: 10, offset: 0 });
    expect(all.pagination).toEqual({ limit: 10, offset: 0, has_more: false });
    expect(all.sessions.map((s) => s.session_id)).toEqual([c, b, a]);
    const [sc, sb, sa] = all.sessions;

    expect(sa).toMatchObject({
      id: a,
      session_id: a,
      page_url: '/landing',
      device_type: 'desktop',
      browser: 'Chrome',
      os: 'macOS',
      country_code: null,
      event_count: 5,
    });
    expect(sb).toMatchObject({
      id: b,
      page_url: '/b',
      device_type: '',
      browser: '',
      os: '',
      country_code: null,
      event_count: 2,
    });
    expect(sc).toMatchObject({
      id: c,
      page_url: '/c',
      device_type: 'mobile',
      browser: 'Safari',
      os: 'iOS',
      event_count: 3,
    });

    for (const s of all.sessions) {
      expect(s.started_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(s.duration_seconds).toBeCloseTo((Date.parse(s.ended_at) - Date.parse(s.started_at)) / 1000, 6);
    }
    // A's chunks were ≥ 250 ms apart, within the window the test measured; fractional seconds are kept.
    expect(Date.parse(sa.started_at)).toBeGreaterThanOrEqual(tA0);
    expect(Date.parse(sa.ended_at)).toBeLessThanOrEqual(tA1);
    expect(sa.duration_seconds).toBeGreaterThanOrEqual(0.25);
    expect(sa.duration_seconds).toBeLessThan(5);
    expect(Date.parse(sb.started_at)).toBeGreaterThan(Date.parse(sa.started_at));
    expect(Date.parse(sc.started_at)).toBeGreaterThan(Date.parse(sb.started_at));

    const first = await replaySessions(ctx.clickhouse, site.id, { limit: 2, offset: 0 });
    expect(first.sessions.map((s) => s.id)).toEqual([c, b]);
    expect(first.pagination).toEqual({ limit: 2, offset: 0, has_more: true });
    const second = await replaySessions(ctx.clickhouse, site.id, { limit: 2, offset: 2 });
    expect(second.sessions.map((s) => s.id)).toEqual([a]);
    expect(second.pagination).toEqual({ limit: 2, offset: 2, has_more: false });
    expect((await replaySessions(ctx.clickhouse, site.id, { limit: 3, offset: 0 })).pagination.has_more).toBe(false);
    expect((await replaySessions(ctx.clickhouse, site.id, { limit: 5, offset: 3 })).sessions).toEqual([]);

    const others = await replaySessions(ctx.clickhouse, other.id, { limit: 10, offset: 0 });
    expect(others.sessions).toHaveLength(1);
    expect(others.sessions[0]).toMatchObject({ event_count: 1, duration_seconds: 0 });

    // Later retried copies of both of A's chunks: A now starts at the copies' time (the latest copy of each
    // seq is the one that counts), so it is the newest recording and leads the first page.
    const aChunks = await (
      await ctx.clickhouse.query({
        query: 'SELECT * FROM replay_chunks WHERE session_id = {s:String} ORDER BY seq',
        query_params: { s: a },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    expect(aChunks.map((r) => r.seq)).toEqual([0, 1]);
    const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    const late = Date.parse(sc.ended_at) + 1000;
    await ctx.clickhouse.insert({
      table: 'replay_chunks',
      values: aChunks.map((r, i) => ({ ...r, ts: chTime(late + i * 100) })),
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: `test-${randomUUID()}` },
    });
    const reordered = await replaySessions(ctx.clickhouse, site.id, { limit: 1, offset: 0 });
    expect(reordered.pagination).toEqual({ limit: 1, offset: 0, has_more: true });
    expect(reordered.sessions).toEqual([
      expect.objectContaining({
        id: a,
        page_url: '/landing',
        device_type: 'desktop',
        event_count: 5,
        started_at: new Date(late).toISOString(),
        ended_at: new Date(late + 100).toISOString(),
        duration_seconds: 0.1,
      }),
    ]);
    expect((await replaySessions(ctx.clickhouse, site.id, { limit: 10, offset: 1 })).sessions.map((s) => s.id)).toEqual(
      [c, b],
    );
  });
});

describe('error groups', () => {
  const host = 'errors.example.com';
  let site: { id: string; tracking_code: string };
  let sibling: { id: string; tracking_code: string };
  const errs = {
    one: {
      error_type: 'TypeError',
      message: 'x is undefined',
      stack: 'TypeError: x\n    at a (https://errors.example.com/app.js:1:2)',
    },
    two: {
      error_type: 'RangeError',
      message: 'bad length',
      stack: 'RangeError: bad\n    at b (https://errors.example.com/app.js:3:4)',
    },
    three: {
      error_type: 'Error',
      message: 'boom',
      stack: 'Error: boom\n    at c (https://errors.example.com/app.js:5:6)',
    },
  };
  const ids: Record<keyof typeof errs, string> = { one: '', two: '', three: '' };
  const base = () => `/api/websites/${site.id}/errors`;
  const list = (query = '', user: TestUser = owner) => call('GET', `${base()}${query}`, { token: user.token });
  const put = (groupId: string, body: unknown, user: TestUser = owner) =>
    call('PUT', `${base()}/${groupId}`, { token: user.token, body });

  async function occur(name: keyof typeof errs, visitor?: string) {
    await send(
      site.tracking_code,
      event(host, { event_type: 'error', ...errs[name], ...(visitor ? { visitor_id: visitor } : {}) }),
    );
  }
  async function waitOccurrences(total: number) {
    await waitUntil(async () => {
      const r = await ctx.pool.query<{ n: string | null }>(
        'SELECT sum(occurrence_count) AS n FROM error_groups WHERE website_id = $1',
        [site.id],
      );
      return Number(r.rows[0].n ?? 0) === total;
    }, `${total} error occurrences`);
  }

  beforeAll(async () => {
    site = await createWebsite(ctx, owner, host);
    sibling = await createWebsite(ctx, owner, 'errors-sibling.example.com');
    for (const [u, role] of [
      [editor, 'editor'],
      [viewer, 'viewer'],
    ] as const) {
      const res = await call('POST', `/api/websites/${site.id}/team-members`, {
        token: owner.token,
        body: { email: u.email, role },
      });
      expect(res.status).toBe(201);
    }
    // last_seen order after this: one (seen again last), three, two.
    for (const [name, visitor] of [
      ['one', 'v-1'],
      ['two', 'v-1'],
      ['three', 'v-2'],
      ['one', 'v-2'],
    ] as const) {
      await occur(name, visitor);
      await sleep(15);
    }
    await waitOccurrences(4);
    await send(sibling.tracking_code, event('errors-sibling.example.com', { event_type: 'error', ...errs.one }));
    await waitUntil(
      async () =>
        (await ctx.pool.query('SELECT 1 FROM error_groups WHERE website_id = $1', [sibling.id])).rowCount === 1,
      'sibling group',
    );
    const rows = await ctx.pool.query<{ id: string; fingerprint: string }>(
      'SELECT id, fingerprint FROM error_groups WHERE website_id = $1',
      [site.id],
    );
    for (const name of Object.keys(errs) as (keyof typeof errs)[]) {
      ids[name] = rows.rows.find((r) => r.fingerprint === errorFingerprint(errs[name]))!.id;
    }
  });

  it('lists groups by last_seen_at descending with numbers, ISO times and the total; viewers may read', async () => {
    const res = await list('', viewer);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.total).toBe(3);
    const groups = res.body.data.error_groups;
    expect(groups.map((g: { id: string }) => g.id)).toEqual([ids.one, ids.three, ids.two]);
    expect(groups[0]).toEqual({
      id: ids.one,
      fingerprint: errorFingerprint(errs.one),
      message: 'x is undefined',
      type: 'TypeError',
      status: 'unresolved',
      occurrence_count: 2,
      first_seen_at: expect.stringMatching(/Z$/),
      last_seen_at: expect.stringMatching(/Z$/),
      affected_users_count: 2,
    });
    expect(Date.parse(groups[0].last_seen_at)).toBeGreaterThan(Date.parse(groups[0].first_seen_at));
    expect(Date.parse(groups[1].last_seen_at)).toBeGreaterThan(Date.parse(groups[2].last_seen_at));
    // The page is cut by limit; total still counts every group.
    const page = await list('?limit=1');
    expect(page.body.data).toMatchObject({ total: 3, error_groups: [expect.objectContaining({ id: ids.one })] });
    // The sibling website's group (same fingerprint) is not listed here.
    expect(groups.every((g: { id: string }) => Object.values(ids).includes(g.id))).toBe(true);
  });

  it('PUT moves a group between statuses (editor), bumps updated_at, and the status filter and total follow', async () => {
    const before = await ctx.pool.query<{ updated_at: Date }>('SELECT updated_at FROM error_groups WHERE id = $1', [
      ids.three,
    ]);
    const res = await put(ids.three, { status: 'resolved' }, editor);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.timestamp).toBe('string');
    expect(res.body.data.error_group).toMatchObject({
      id: ids.three,
      status: 'resolved',
      occurrence_count: 1,
      type: 'Error',
    });
    const after = await ctx.pool.query<{ updated_at: Date }>('SELECT updated_at FROM error_groups WHERE id = $1', [
      ids.three,
    ]);
    expect(after.rows[0].updated_at.getTime()).toBeGreaterThan(before.rows[0].updated_at.getTime());

    expect((await put(ids.two, { status: 'ignored' })).body.data.error_group.status).toBe('ignored');

    const resolved = await list('?status=resolved');
    expect(resolved.body.data).toMatchObject({
      total: 1,
      error_groups: [expect.objectContaining({ id: ids.three, status: 'resolved' })],
    });
    const unresolved = await list('?status=unresolved');
    expect(unresolved.body.data.total).toBe(1);
    expect(unresolved.body.data.error_groups.map((g: { id: string }) => g.id)).toEqual([ids.one]);
    expect((await list('?status=ignored')).body.data.error_groups.map((g: { id: string }) => g.id)).toEqual([ids.two]);
    expect((await list()).body.data.total).toBe(3);

    // Back again: ignored → unresolved.
    expect((await put(ids.two, { status: 'unresolved' })).body.data.error_group.status).toBe('unresolved');
    const back = await list('?status=unresolved&limit=1');
    expect(back.body.data.total).toBe(2);
    expect(back.body.data.error_groups.map((g: { id: string }) => g.id)).toEqual([ids.one]);
    expect((await list('?status=ignored')).body.data).toEqual({ error_groups: [], total: 0 });
  });

  it('a new occurrence reopens a resolved group; an ignored group stays ignored', async () => {
    expect((await put(ids.three, { status: 'resolved' })).status).toBe(200);
    expect((await put(ids.two, { status: 'ignored' })).status).toBe(200);
    await occur('three', 'v-3');
    await occur('two', 'v-3');
    await waitOccurrences(6);
    const all = (await list()).body.data.error_groups as { id: string; status: string; occurrence_count: number }[];
    expect(all.map((g) => g.id)).toEqual([ids.two, ids.three, ids.one]);
    expect(all.find((g) => g.id === ids.three)).toMatchObject({ status: 'unresolved', occurrence_count: 2 });
    expect(all.find((g) => g.id === ids.two)).toMatchObject({ status: 'ignored', occurrence_count: 2 });
    expect((await list('?status=resolved')).body.data.total).toBe(0);
  });

  it("refuses bad input (400), viewers changing status (403), and anything not this website's (404)", async () => {
    for (const body of [{ status: 'done' }, {}, { status: 1 }]) {
      const res = await put(ids.one, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await call('PUT', `${base()}/${ids.one}`, { token: owner.token, rawBody: '"resolved"' })).status).toBe(400);
    for (const q of ['?status=bogus', '?limit=0', '?limit=201', '?limit=abc']) {
      const res = await list(q);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }

    const denied = await put(ids.one, { status: 'resolved' }, viewer);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');

    const siblingGroup = (
      await ctx.pool.query<{ id: string }>('SELECT id FROM error_groups WHERE website_id = $1', [sibling.id])
    ).rows[0].id;
    for (const groupId of [randomUUID(), 'not-a-uuid', siblingGroup]) {
      const res = await put(groupId, { status: 'resolved' });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await ctx.pool.query('SELECT status FROM error_groups WHERE id = $1', [siblingGroup])).rows[0].status).toBe(
      'unresolved',
    );

    expect((await call('GET', `/api/websites/${randomUUID()}/errors`, { token: owner.token })).status).toBe(404);
    expect((await list('', outsider)).status).toBe(404);
    expect((await put(ids.one, { status: 'resolved' }, outsider)).status).toBe(404);
    expect((await call('GET', base())).status).toBe(401);
    // Nothing above changed the group.
    expect((await list('?status=unresolved')).body.data.error_groups.map((g: { id: string }) => g.id)).toContain(
      ids.one,
    );
  });
});
