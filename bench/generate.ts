// Bulk data generators shared by the read benchmarks (bench/stats.ts, bench/external.ts, later ones): they fill
// one website of a running bench service (bench/service.ts) through the bulk path — INSERT … SELECT … FROM
// numbers() in ClickHouse writing the columns the ingest writer writes, so the sessions materialized view fills
// as it would — plus, for the browser data, one multi-row INSERT of the matching error groups in PostgreSQL.
//
// Every generator derives a session's attributes from the session number `s` with the same hashes, so clicks,
// replays and errors belong to sessions that exist in `events`, at those sessions' times, with their visitor,
// landing page, device, browser and OS.
import { Client } from 'pg';
import { rollupCoverage } from '../lib/stats/coverage';
import { addDays, startOfDay } from '../lib/stats/time';
import { runCli, type Service, workerStarted } from './service';

const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', 'CA', 'NL', 'ES', 'IT', 'PL'];
const SOURCES = [
  'Google',
  'Direct / None',
  'Direct / None',
  'Twitter',
  'newsletter',
  'Bing',
  'Facebook',
  'Hacker News',
];
const BROWSERS = ['Chrome', 'Chrome', 'Safari', 'Firefox', 'Edge'];
const DEVICES = ['desktop', 'desktop', 'mobile', 'mobile', 'tablet'];
const OSES = ['Windows', 'macOS', 'iOS', 'Android', 'Linux'];

const lit = (xs: string[]) => `[${xs.map((x) => `'${x.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(',')}]`;
const pick = (xs: string[], hash: string) => `arrayElement(${lit(xs)}, ${hash} % ${xs.length} + 1)`;

// Per-session attributes, as the events generator assigns them (`s` is an SQL expression for the session number).
const SESSION = {
  /** Epoch ms of the session's first event plus `offsetMs` (event `pos` of a session is at `pos * 40000`). */
  startMs: (s: string, offsetMs = '0') =>
    `toInt64({start:Int64} + (cityHash64(${s}, 1) % (90 * 86400)) * 1000 + ${offsetMs})`,
  visitor: (s: string) => `toString(cityHash64(${s}, 7) % {visitors:UInt64})`,
  landing: (s: string) => `concat('/p/', toString(cityHash64(${s}, 2) % 40))`,
  device: (s: string) => pick(DEVICES, `cityHash64(${s}, 5)`),
  browser: (s: string) => pick(BROWSERS, `cityHash64(${s}, 6)`),
  os: (s: string) => pick(OSES, `cityHash64(${s}, 8)`),
};

const EVENT_NAMES = ['Signup', 'Newsletter', 'Download', 'Add to cart'];
const PLANS = ['free', 'pro', 'team'];
const METHODS = ['email', 'google', 'github'];

const INSERT_SETTINGS = { max_partitions_per_insert_block: '1000', max_insert_threads: '2' };

/** What generateEvents made; the browser-data generator attaches its rows to these sessions. */
export interface GeneratedEvents {
  /** Events stored for the website (count() after the insert). */
  events: number;
  /** Session numbers 0 … sessions-1 (session id = the number as a string). */
  sessions: number;
  visitors: number;
  /** Epoch ms: the data spans the 90 days from here. */
  start: number;
}

async function count(service: Service, table: string): Promise<number> {
  const [row] = await (
    await service.clickhouse.query({
      query: `SELECT count() AS n FROM ${table} WHERE website_id = {w:UUID}`,
      query_params: { w: service.website.id },
      format: 'JSONEachRow',
    })
  ).json<{ n: string }>();
  return Number(row.n);
}

/**
 * Generates about `events` events over the 90 days before now: sessions of 1 to 5 events, 4 of 5 pageviews.
 * 1/3 of sessions bounce (1 event), the rest have 5 (4 pageviews on 500 paths with 40 landing pages, 1 custom
 * event `Signup`): 11/3 events per session; 8 sources, 12 countries, 5 browsers, devices and OSes; 2.5 sessions
 * per visitor. 40 % of pageviews carry engagement_ms (1–121 s), so sessions' engagement and value scores vary.
 * The custom event is one of 4 names with props `plan` (3 values) and `method` (3 values).
 */
export async function generateEvents(service: Service, events: number): Promise<GeneratedEvents> {
  // The bulk insert keeps the embedded store from answering a starting worker's check.
  await workerStarted(service);
  const sessions = Math.ceil((events * 3) / 11);
  const visitors = Math.round(sessions / 2.5);
  const start = Date.now() - 90 * 86_400_000;
  await service.clickhouse.command({
    query: `INSERT INTO events (website_id, event_id, type, name, source, ts, received_at, session_id, visitor_id, url,
        hostname, pathname, referrer_domain, source_name, utm_source, device_type, browser, os, country_code,
        ip_hash, engagement_ms, props, expire_at)
      SELECT {w:UUID}, generateUUIDv4(), type, if(type = 'event', ${pick(EVENT_NAMES, 'cityHash64(s, 12)')}, ''), 'server', t, t, toString(s),
        ${SESSION.visitor('s')}, concat('https://shop.example.com', path), 'shop.example.com', path,
        '', src, if(src = 'newsletter', 'newsletter', ''), dev, br, os_, country, 'unknown', engagement,
        if(type = 'event', concat('{"plan":"', ${pick(PLANS, 'cityHash64(s, 13)')}, '","method":"', ${pick(METHODS, 'cityHash64(s, 14)')}, '"}'), '{}'),
        toDateTime('2035-01-01 00:00:00')
      FROM (
        SELECT intDiv(number, 5) AS s, number % 5 AS pos,
          cityHash64(s) % 3 = 0 AS bounce,
          if(pos = 4, 'event', 'pageview') AS type,
          fromUnixTimestamp64Milli(${SESSION.startMs('s', 'pos * 40000')}, 'UTC') AS t,
          concat('/p/', toString(if(pos = 0, cityHash64(s, 2) % 40, cityHash64(number, 3) % 500))) AS path,
          ${pick(SOURCES, 'cityHash64(s, 4)')} AS src,
          ${SESSION.device('s')} AS dev,
          ${SESSION.browser('s')} AS br,
          ${SESSION.os('s')} AS os_,
          ${pick(COUNTRIES, 'cityHash64(s, 9)')} AS country,
          toUInt32(if(type = 'pageview' AND cityHash64(number, 10) % 5 < 2, 1000 + cityHash64(number, 11) % 120000, 0)) AS engagement
        FROM numbers({n:UInt64})
        WHERE NOT (bounce AND pos > 0)
      )`,
    query_params: { w: service.website.id, visitors, start, n: sessions * 5 },
    clickhouse_settings: INSERT_SETTINGS,
  });
  return { events: await count(service, 'events'), sessions, visitors, start };
}

/**
 * Purchases for 3 % of the sessions that do not bounce, 200 s after the session began: 9.99 to 199.99, one in
 * ten in EUR (the rest USD), one in twenty refunded. Returns how many were stored.
 */
export async function generatePurchases(service: Service, gen: GeneratedEvents): Promise<number> {
  await service.clickhouse.command({
    query: `INSERT INTO events (website_id, event_id, type, name, source, ts, received_at, session_id, visitor_id,
        revenue, currency, props, expire_at)
      SELECT {w:UUID}, generateUUIDv4(), 'purchase', '', 'server', t, t, toString(s), ${SESSION.visitor('s')},
        toDecimal64(9.99 + cityHash64(s, 16) % 191, 4), if(cityHash64(s, 17) % 10 = 0, 'EUR', 'USD'),
        concat('{"payment_provider":"server","status":"', if(cityHash64(s, 18) % 20 = 0, 'refunded', 'succeeded'), '"}'),
        toDateTime('2035-01-01 00:00:00')
      FROM (
        SELECT number AS s, fromUnixTimestamp64Milli(${SESSION.startMs('s', '200000')}, 'UTC') AS t FROM numbers({n:UInt64})
        WHERE cityHash64(s) % 3 != 0 AND cityHash64(s, 15) % 100 < 3
      )`,
    query_params: { w: service.website.id, visitors: gen.visitors, start: gen.start, n: gen.sessions },
    clickhouse_settings: INSERT_SETTINGS,
  });
  const [row] = await (
    await service.clickhouse.query({
      query: "SELECT count() AS n FROM events WHERE website_id = {w:UUID} AND type = 'purchase'",
      query_params: { w: service.website.id },
      format: 'JSONEachRow',
    })
  ).json<{ n: string }>();
  return Number(row.n);
}

/** Stats benchmark's entry point: generates the events and returns how many were stored. */
export async function generate(service: Service, events: number): Promise<number> {
  return (await generateEvents(service, events)).events;
}

export interface BrowserDataOptions {
  /** Heatmap clicks (`interactions` rows) over 500 paths; default 1,000,000 per 10M events, at least 20,000. */
  interactions?: number;
  /** Replayed sessions, 2–10 chunks each (~6); default 20,000 per 10M events, at least 500. */
  replaySessions?: number;
  /** `error_events` rows; default 200,000 per 10M events, at least 5,000. */
  errors?: number;
  /** Error groups (fingerprints); default 300. */
  errorGroups?: number;
}

export interface GeneratedBrowserData {
  interactions: number;
  replaySessions: number;
  replayChunks: number;
  errors: number;
  errorGroups: number;
}

const SELECTORS = [
  'a.nav-link',
  'button.add-to-cart',
  'header .logo',
  'input#search',
  'div.product-card > a',
  'footer a',
  'button.checkout',
  'img.hero',
  'nav > ul > li:nth-child(3) > a',
  'form.newsletter button',
];
// Error kinds: the type and a message template ({g} = the group number).
const ERROR_TYPES = ['TypeError', 'ReferenceError', 'Error', 'TypeError', 'RangeError', 'SyntaxError', 'Error'];
const ERROR_MESSAGES = [
  "Cannot read properties of undefined (reading 'item{g}')",
  'renderWidget{g} is not defined',
  'Request to /api/cart/{g} failed',
  "undefined is not an object (evaluating 'state.step{g}')",
  'Maximum call stack size exceeded in Carousel{g}',
  "Unexpected token '<' in chunk-{g}.js",
  'ResizeObserver loop limit exceeded ({g})',
];

/**
 * Fills, for the same website and the sessions of `gen`: `interactions` (heatmap clicks, skewed over 500 paths),
 * `replay_chunks` (replayed sessions with several chunks, `data` a small JSON array of rrweb-like events),
 * `error_events` over `errorGroups` fingerprints, and PostgreSQL `error_groups` with those fingerprints' counts,
 * affected visitors, first and last seen, statuses mixed (60 % unresolved, 20 % resolved, 20 % ignored).
 * Size defaults scale with the number of events (the figures are for 10M).
 */
export async function generateBrowserData(
  service: Service,
  gen: GeneratedEvents,
  opts: BrowserDataOptions = {},
): Promise<GeneratedBrowserData> {
  const f = gen.events / 10_000_000;
  const nClicks = opts.interactions ?? Math.max(20_000, Math.round(1_000_000 * f));
  const nReplays = Math.min(gen.sessions, opts.replaySessions ?? Math.max(500, Math.round(20_000 * f)));
  const nErrors = opts.errors ?? Math.max(5_000, Math.round(200_000 * f));
  const nGroups = opts.errorGroups ?? 300;
  const params = { w: service.website.id, visitors: gen.visitors, start: gen.start, sessions: gen.sessions };
  const ch = service.clickhouse;

  // Heatmap clicks: a random session each, within its first ~3 minutes; path rank skewed (p² × 500), positions
  // inside the viewport of the session's device, y skewed towards the top of the page.
  await ch.command({
    query: `INSERT INTO interactions (website_id, event_id, ts, session_id, visitor_id, pathname, x, y, viewport_width,
        viewport_height, page_height, selector, device_type, expire_at)
      SELECT {w:UUID}, generateUUIDv4(), fromUnixTimestamp64Milli(${SESSION.startMs('s', 'cityHash64(number, 22) % 160000')}, 'UTC'),
        toString(s), ${SESSION.visitor('s')}, path, cityHash64(number, 23) % vw,
        toUInt32(pow((cityHash64(number, 24) % 1000000) / 1000000, 1.5) * ph), vw, vh, ph,
        ${pick(SELECTORS, 'cityHash64(path, number % 4)')}, dev, toDateTime('2035-01-01 00:00:00')
      FROM (
        SELECT number, cityHash64(number, 20) % {sessions:UInt64} AS s,
          concat('/p/', toString(toUInt32(pow((cityHash64(number, 21) % 1000000) / 1000000, 2) * 500))) AS path,
          ${SESSION.device('s')} AS dev,
          toUInt32(multiIf(dev = 'mobile', 390, dev = 'tablet', 820, 1440)) AS vw,
          toUInt32(multiIf(dev = 'mobile', 844, dev = 'tablet', 1180, 900)) AS vh,
          vh * (2 + cityHash64(path) % 6) AS ph
        FROM numbers({n:UInt64})
      )`,
    query_params: { ...params, n: nClicks },
    clickhouse_settings: INSERT_SETTINGS,
  });

  // Replays: sessions spread evenly over all session numbers, 2–10 chunks 10 s apart from the session's start.
  // Chunk 0 holds a Meta and a FullSnapshot event, later ones mouse moves, a scroll and a click (IncrementalSnapshot).
  const MAX_CHUNKS = 10;
  await ch.command({
    query: `INSERT INTO replay_chunks (website_id, session_id, seq, ts, visitor_id, pathname, data, expire_at)
      SELECT {w:UUID}, toString(s), seq, fromUnixTimestamp64Milli(t, 'UTC'), ${SESSION.visitor('s')}, path,
        if(seq = 0,
          concat('[{"type":4,"data":{"href":"https://shop.example.com', path, '","width":1440,"height":900},"timestamp":', toString(t),
            '},{"type":2,"data":{"node":{"type":0,"childNodes":[{"type":1,"name":"html","publicId":"","systemId":"","id":2},',
            '{"type":2,"tagName":"html","attributes":{"lang":"en"},"childNodes":[],"id":3}],"id":1},"initialOffset":{"left":0,"top":0}},"timestamp":',
            toString(t), '}]'),
          concat('[{"type":3,"data":{"source":1,"positions":[{"x":', toString(x), ',"y":', toString(y), ',"id":', toString(node),
            ',"timeOffset":-480}]},"timestamp":', toString(t), '},{"type":3,"data":{"source":3,"id":1,"x":0,"y":', toString(y * 3),
            '},"timestamp":', toString(t + 1500), '},{"type":3,"data":{"source":2,"type":2,"id":', toString(node), ',"x":', toString(x),
            ',"y":', toString(y), '},"timestamp":', toString(t + 4200), '}]')),
        toDateTime('2035-01-01 00:00:00')
      FROM (
        SELECT intDiv(number, ${MAX_CHUNKS}) AS k, toUInt32(number % ${MAX_CHUNKS}) AS seq,
          intDiv(k * {sessions:UInt64}, {replays:UInt64}) AS s,
          ${SESSION.startMs('s', 'seq * 10000')} AS t,
          ${SESSION.landing('s')} AS path,
          cityHash64(number, 31) % 1400 AS x, cityHash64(number, 32) % 880 AS y, 4 + cityHash64(number, 33) % 300 AS node
        FROM numbers({n:UInt64})
        WHERE seq < 2 + cityHash64(k, 30) % ${MAX_CHUNKS - 1}
      )`,
    query_params: { ...params, replays: nReplays, n: nReplays * MAX_CHUNKS },
    clickhouse_settings: INSERT_SETTINGS,
  });

  // Errors: group g skewed (p² × groups), each group on one page with one type and message; a random session each.
  await ch.command({
    query: `INSERT INTO error_events (website_id, event_id, ts, session_id, visitor_id, pathname, fingerprint, error_type,
        message, stack, browser, os, device_type, expire_at)
      SELECT {w:UUID}, generateUUIDv4(), fromUnixTimestamp64Milli(${SESSION.startMs('s', 'cityHash64(number, 43) % 160000')}, 'UTC'),
        toString(s), ${SESSION.visitor('s')}, path, lower(hex(MD5(concat('bench-error-', toString(g))))), type, message,
        concat(type, ': ', message, '\\n    at handler', toString(g), ' (https://shop.example.com/assets/app.3f9c2e.js:',
          toString(1 + cityHash64(g, 45) % 900), ':', toString(1 + cityHash64(g, 46) % 80), ')\\n    at HTMLButtonElement.onclick (https://shop.example.com',
          path, ':1:1)'),
        ${SESSION.browser('s')}, ${SESSION.os('s')}, ${SESSION.device('s')}, toDateTime('2035-01-01 00:00:00')
      FROM (
        SELECT number, cityHash64(number, 42) % {sessions:UInt64} AS s,
          toUInt32(pow((cityHash64(number, 41) % 1000000) / 1000000, 2) * {groups:UInt32}) AS g,
          concat('/p/', toString(cityHash64(g, 44) % 500)) AS path,
          ${pick(ERROR_TYPES, 'g')} AS type,
          replaceOne(${pick(ERROR_MESSAGES, 'g')}, '{g}', toString(g)) AS message
        FROM numbers({n:UInt64})
      )`,
    query_params: { ...params, groups: nGroups, n: nErrors },
    clickhouse_settings: INSERT_SETTINGS,
  });

  // The matching error groups, as the ingest worker would have counted them.
  const groups = await (
    await ch.query({
      query: `SELECT fingerprint, any(error_type) AS type, any(message) AS message, count() AS n, uniqExact(visitor_id) AS users,
          toUnixTimestamp64Milli(min(ts)) AS first_ms, toUnixTimestamp64Milli(max(ts)) AS last_ms
        FROM error_events WHERE website_id = {w:UUID} GROUP BY fingerprint ORDER BY fingerprint`,
      query_params: { w: service.website.id },
      format: 'JSONEachRow',
    })
  ).json<{
    fingerprint: string;
    type: string;
    message: string;
    n: string;
    users: string;
    first_ms: string;
    last_ms: string;
  }>();
  const statuses = [
    'unresolved',
    'unresolved',
    'unresolved',
    'unresolved',
    'unresolved',
    'unresolved',
    'resolved',
    'resolved',
    'ignored',
    'ignored',
  ];
  const values: unknown[] = [];
  const rows = groups.map((g, i) => {
    values.push(
      service.website.id,
      g.fingerprint,
      g.message,
      g.type,
      statuses[parseInt(g.fingerprint.slice(0, 8), 16) % statuses.length],
      g.n,
      g.users,
      new Date(Number(g.first_ms)),
      new Date(Number(g.last_ms)),
    );
    const b = i * 9;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}, $${b + 9})`;
  });
  if (rows.length) {
    const pg = new Client({ connectionString: service.env.DATABASE_URL });
    await pg.connect();
    try {
      await pg.query(
        `INSERT INTO error_groups (website_id, fingerprint, message, type, status, occurrence_count, affected_users_count, first_seen_at, last_seen_at)
         VALUES ${rows.join(', ')}`,
        values,
      );
    } finally {
      await pg.end();
    }
  }

  const [replay] = await (
    await ch.query({
      query:
        'SELECT uniqExact(session_id) AS sessions, count() AS chunks FROM replay_chunks WHERE website_id = {w:UUID}',
      query_params: { w: service.website.id },
      format: 'JSONEachRow',
    })
  ).json<{ sessions: string; chunks: string }>();
  return {
    interactions: await count(service, 'interactions'),
    replaySessions: Number(replay.sessions),
    replayChunks: Number(replay.chunks),
    errors: await count(service, 'error_events'),
    errorGroups: rows.length,
  };
}

/** Runs `tidemark rollup` against the service: what the clock does for closed days in a live deployment. */
export async function rollUp(service: Service): Promise<string> {
  return runCli(service.env, ['rollup']);
}

/**
 * Hours of a range ending now that are read raw: since the end of the last rolled-up day (UTC). A day is
 * rolled up provisionally ~40 minutes after it ends (jobs/rollups/), so this runs from under 1 to
 * about 25 over a day. Printed with the figures.
 */
export async function rawTailHours(service: Service, now = Date.now()): Promise<number> {
  const coverage = await rollupCoverage(service.clickhouse, service.website.id, 'UTC');
  const since = coverage ? startOfDay(addDays(coverage.last, 1), 'UTC') : now - 90 * 86_400_000;
  return Math.round((now - since) / 3600_000);
}

/**
 * Waits (at most `timeoutMs`) until ClickHouse has no merge or mutation running for the run's tables, three
 * polls in a row. A bulk load of millions of rows in a minute leaves minutes of merging behind it, which a
 * deployment receiving the same rows over 90 days never sees; read timings are meant for the settled state.
 * Answers the seconds waited and whether it settled.
 */
export async function settleMerges(
  service: Service,
  timeoutMs = 300_000,
): Promise<{ seconds: number; settled: boolean }> {
  const started = Date.now();
  let quiet = 0;
  while (Date.now() - started < timeoutMs) {
    const [row] = await (
      await service.clickhouse.query({
        query: `SELECT (SELECT count() FROM system.merges WHERE database = currentDatabase())
                     + (SELECT count() FROM system.mutations WHERE database = currentDatabase() AND NOT is_done) AS busy`,
        format: 'JSONEachRow',
      })
    ).json<{ busy: string }>();
    quiet = Number(row.busy) === 0 ? quiet + 1 : 0;
    if (quiet >= 3) return { seconds: Math.round((Date.now() - started) / 1000), settled: true };
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { seconds: Math.round((Date.now() - started) / 1000), settled: false };
}
