// Load generator for the ingestion benchmark (bench/ingest.ts starts it as its own process, so the server
// never shares a CPU-bound event loop with the load). It posts batches of realistic server events to
// POST /api/v1/events over keep-alive loopback connections, as fast as possible or at a fixed event rate.
//
//   node dist/bench/ingest-load.js --url http://127.0.0.1:3000 --key tm_… --code <tracking code>
//        [--duration 20] [--concurrency 6] [--rate 0] [--batch 1000] [--probe-every 0] [--templates 96]
//
// Output on stdout, one JSON object per line:
//   {"type":"started","t":<epoch ms>}                                     when the timed part begins
//   {"type":"probe","id":<visitor id>,"sentAt":…,"acceptedAt":…}           per accepted probe (freshness)
//   {"type":"result", …}                                                  once, at the end
//
// Request bodies are built before timing from pre-serialised templates; at send time only the fresh
// idempotency keys and timestamps are spliced in (string concatenation), so the generator is cheap.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

export interface LoadResult {
  type: 'result';
  startedAt: number;
  endedAt: number;
  seconds: number;
  targetRate: number;
  concurrency: number;
  batchSize: number;
  batchesSent: number;
  batchesOk: number;
  eventsSent: number;
  eventsAccepted: number;
  eventsDeduped: number;
  eventsRejected: number;
  rejectedReasons: Record<string, number>;
  acceptedPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; mean: number };
  errorsByStatus: Record<string, number>;
  lateBatches: number;
  probes: number;
  bodyBytesMean: number;
  generatorCpuMs: number;
  generatorMaxRssMb: number;
}

// ---------------------------------------------------------------------------------------------------------
// Realistic events

const PATHS = [
  '/',
  '/pricing',
  '/features',
  '/features/analytics',
  '/features/reports',
  '/blog',
  '/blog/launch-week',
  '/blog/privacy-first-analytics',
  '/blog/how-we-scaled',
  '/docs',
  '/docs/getting-started',
  '/docs/api',
  '/docs/api/events',
  '/docs/tracker',
  '/about',
  '/careers',
  '/contact',
  '/login',
  '/signup',
  '/checkout',
  '/checkout/success',
  '/products/widget-pro',
  '/products/widget-lite',
  '/products/gadget',
  '/cart',
  '/account',
  '/account/settings',
  '/changelog',
  '/customers',
  '/customers/acme',
  '/integrations',
  '/integrations/shopify',
  '/integrations/wordpress',
  '/security',
  '/terms',
  '/privacy',
  '/status',
  '/search',
  '/category/tools',
  '/category/books',
];
const REFERRERS = [
  '',
  '',
  '',
  '',
  'https://www.google.com/',
  'https://www.google.de/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://news.ycombinator.com/',
  'https://www.reddit.com/r/webdev/',
  'https://t.co/abc123',
  'https://www.facebook.com/',
  'https://www.linkedin.com/feed/',
  'https://github.com/',
  'https://blog.example.org/post/analytics-tools',
];
const UTMS: Record<string, string>[] = [
  { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring_sale' },
  { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'brand', utm_term: 'web analytics' },
  { utm_source: 'twitter', utm_medium: 'social', utm_campaign: 'launch' },
  { utm_source: 'partner', utm_medium: 'referral', utm_campaign: 'q3_partners', utm_content: 'banner_a' },
];
const CUSTOM_EVENTS = ['signup_click', 'add_to_cart', 'video_play', 'download', 'newsletter_subscribe', 'search'];
// Public addresses from several regions (routable, none from documentation ranges) for geo enrichment.
const IPS = [
  '81.2.69.142',
  '8.8.8.8',
  '1.1.1.1',
  '185.60.216.35',
  '151.101.1.69',
  '104.16.132.229',
  '52.95.110.1',
  '46.101.12.34',
  '89.160.20.112',
  '212.58.244.20',
  '193.0.6.139',
  '200.160.2.3',
  '41.203.64.1',
  '117.18.232.200',
  '2a00:1450:4001:80b::200e',
  '2001:4860:4860::8888',
  '78.46.120.5',
];
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 Edg/125.0.0.0',
];
const LANGUAGES = [
  'en-US,en;q=0.9',
  'de-DE,de;q=0.9,en;q=0.8',
  'fr-FR,fr;q=0.8',
  'es-ES,es;q=0.9',
  'ja-JP',
  'pt-BR,pt;q=0.9',
];
const SCREENS = [
  [1920, 1080],
  [1440, 900],
  [390, 844],
  [412, 915],
  [1366, 768],
  [2560, 1440],
  [820, 1180],
];

// Small deterministic PRNG so a run's event mix is the same every time.
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One event as pieces: JSON = head + ts + mid + idempotencyKey + tail. `ageMs` is how far in the past its
 * ts lies relative to the send time (visits span a few minutes).
 */
interface EventPieces {
  head: string;
  ageMs: number;
  mid: string;
  tail: string;
}

export interface Template {
  prefix: string; // {"trackingCode":…,"serverContext":…,"events":[
  events: EventPieces[];
}

function eventPieces(type: string, ageMs: number, rest: Record<string, unknown>): EventPieces {
  // rest is serialised once; its leading "{" is replaced by the spliced fields.
  const restJson = JSON.stringify(rest).slice(1);
  return { head: `{"type":"${type}","ts":`, ageMs, mid: ',"idempotencyKey":"', tail: `",${restJson}` };
}

export function buildTemplates(count: number, batchSize: number, trackingCode: string, seed = 42): Template[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const returning: string[] = [];
  const templates: Template[] = [];
  for (let t = 0; t < count; t++) {
    // One batch = what a backend forwards for one client context (serverContext is per batch).
    const serverContext = {
      clientIp: IPS[t % IPS.length],
      userAgent: USER_AGENTS[t % USER_AGENTS.length],
      acceptLanguage: LANGUAGES[t % LANGUAGES.length],
    };
    const prefix = `{"trackingCode":${JSON.stringify(trackingCode)},"serverContext":${JSON.stringify(serverContext)},"events":[`;
    const events: EventPieces[] = [];
    while (events.length < batchSize) {
      // A visit: 1–8 pageviews, now and then a custom event, ts increasing by 5–90 s.
      const visitorId = returning.length > 50 && rnd() < 0.3 ? pick(returning) : randomUUID();
      if (returning.length < 5000) returning.push(visitorId);
      const sessionId = randomUUID();
      const pages = 1 + Math.floor(rnd() * 8);
      const utm = rnd() < 0.2 ? pick(UTMS) : undefined;
      const referrer = pick(REFERRERS);
      const [sw, sh] = pick(SCREENS);
      let age = 60_000 + Math.floor(rnd() * 600_000);
      for (let p = 0; p < pages && events.length < batchSize; p++) {
        const path = pick(PATHS);
        const query = p === 0 && utm ? `?${new URLSearchParams(utm).toString()}` : '';
        const props: Record<string, unknown> = { url: `https://shop.example.com${path}${query}` };
        if (p === 0 && referrer) props.referrer = referrer;
        else if (p > 0) props.referrer = 'https://shop.example.com/';
        if (rnd() < 0.5) {
          props.screen_width = sw;
          props.screen_height = sh;
        }
        events.push(eventPieces('pageview', age, { sessionId, visitorId, props }));
        age -= 5_000 + Math.floor(rnd() * 85_000);
        if (age < 0) age = 0;
        if (rnd() < 0.12 && events.length < batchSize) {
          const name = pick(CUSTOM_EVENTS);
          const custom: Record<string, unknown> = { name, path };
          if (name === 'add_to_cart')
            Object.assign(custom, { sku: `SKU-${Math.floor(rnd() * 500)}`, price: Math.round(rnd() * 20000) / 100 });
          if (name === 'search') custom.query = pick(['pricing', 'api key', 'export csv', 'refund', 'gdpr']);
          events.push(eventPieces('event', age, { sessionId, visitorId, props: custom }));
        }
      }
    }
    templates.push({ prefix, events });
  }
  return templates;
}

function probeEvent(id: string, ts: number): string {
  return JSON.stringify({
    type: 'pageview',
    ts,
    idempotencyKey: randomUUID(),
    sessionId: randomUUID(),
    visitorId: id,
    props: { url: 'https://shop.example.com/bench-probe', referrer: 'https://www.google.com/' },
  });
}

/** A request body with fresh idempotency keys and timestamps relative to now. */
export function renderBody(tpl: Template, now: number, probe: string | undefined): string {
  const parts: string[] = [tpl.prefix];
  const evs = tpl.events;
  let start = 0;
  if (probe) {
    parts.push(probe);
    start = 1;
  }
  for (let i = start; i < evs.length; i++) {
    const e = evs[i];
    if (i > 0) parts.push(',');
    parts.push(e.head, String(now - e.ageMs), e.mid, randomUUID(), e.tail);
  }
  parts.push(']}');
  return parts.join('');
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

interface Reply {
  status: number;
  body: string;
}

function post(agent: http.Agent, url: URL, key: string, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/v1/events',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${key}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      code: { type: 'string' },
      duration: { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '6' },
      rate: { type: 'string', default: '0' },
      batch: { type: 'string', default: '1000' },
      'probe-every': { type: 'string', default: '0' },
      templates: { type: 'string', default: '96' },
    },
  });
  if (!values.url || !values.key || !values.code) {
    process.stderr.write(
      'usage: ingest-load --url URL --key KEY --code TRACKING_CODE [--duration s] [--concurrency n] [--rate events/s] [--batch n] [--probe-every n]\n',
    );
    process.exit(2);
  }
  const url = new URL(values.url);
  const durationMs = Number(values.duration) * 1000;
  const concurrency = Math.max(1, Number(values.concurrency));
  const rate = Math.max(0, Number(values.rate));
  const batchSize = Math.min(1000, Math.max(1, Number(values.batch)));
  const probeEvery = Math.max(0, Number(values['probe-every']));
  const templates = buildTemplates(Math.max(1, Number(values.templates)), batchSize, values.code);

  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const emit = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);

  const latencies: number[] = [];
  const errorsByStatus: Record<string, number> = {};
  const rejectedReasons: Record<string, number> = {};
  let batchesSent = 0;
  let batchesOk = 0;
  let eventsSent = 0;
  let accepted = 0;
  let deduped = 0;
  let rejected = 0;
  let late = 0;
  let probes = 0;
  let bodyBytes = 0;
  let next = 0;

  const cpuBefore = process.cpuUsage();
  const startedAt = Date.now();
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  const intervalMs = rate > 0 ? (batchSize / rate) * 1000 : 0;
  emit({ type: 'started', t: startedAt });

  async function loop(): Promise<void> {
    for (;;) {
      const i = next++;
      if (rate > 0) {
        const due = t0 + i * intervalMs;
        if (due >= deadline) return;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        else if (wait < -intervalMs) late++;
      } else if (performance.now() >= deadline) {
        return;
      }
      const now = Date.now();
      const probeId = probeEvery > 0 && i % probeEvery === 0 ? randomUUID() : undefined;
      const body = renderBody(templates[i % templates.length], now, probeId ? probeEvent(probeId, now) : undefined);
      bodyBytes += body.length;
      const sentAt = Date.now();
      const started = performance.now();
      batchesSent++;
      eventsSent += batchSize;
      try {
        const reply = await post(agent, url, values.key!, body);
        const ms = performance.now() - started;
        latencies.push(ms);
        if (reply.status === 200) {
          batchesOk++;
          const r = JSON.parse(reply.body) as {
            acceptedCount: number;
            dedupedCount: number;
            rejectedCount: number;
            errors: { reason: string }[];
          };
          accepted += r.acceptedCount;
          deduped += r.dedupedCount;
          rejected += r.rejectedCount;
          for (const e of r.errors) rejectedReasons[e.reason] = (rejectedReasons[e.reason] ?? 0) + 1;
          if (probeId && !r.errors.some((e) => (e as { index?: number }).index === 0)) {
            probes++;
            emit({ type: 'probe', id: probeId, sentAt, acceptedAt: Date.now() });
          }
        } else {
          errorsByStatus[String(reply.status)] = (errorsByStatus[String(reply.status)] ?? 0) + 1;
          if (errorsByStatus[String(reply.status)] <= 3)
            process.stderr.write(`HTTP ${reply.status}: ${reply.body.slice(0, 300)}\n`);
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        errorsByStatus[code] = (errorsByStatus[code] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 50)); // a refused connection must not spin
      }
    }
  }

  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const cpu = process.cpuUsage(cpuBefore);
  const result: LoadResult = {
    type: 'result',
    startedAt,
    endedAt: Date.now(),
    seconds: round(seconds, 3),
    targetRate: rate,
    concurrency,
    batchSize,
    batchesSent,
    batchesOk,
    eventsSent,
    eventsAccepted: accepted,
    eventsDeduped: deduped,
    eventsRejected: rejected,
    rejectedReasons,
    acceptedPerSecond: round(accepted / seconds, 0),
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1] ?? NaN),
      mean: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)),
    },
    errorsByStatus,
    lateBatches: late,
    probes,
    bodyBytesMean: Math.round(bodyBytes / Math.max(1, batchesSent)),
    generatorCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    generatorMaxRssMb: round(process.resourceUsage().maxRSS / 1024),
  };
  emit(result);
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`ingest-load failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
