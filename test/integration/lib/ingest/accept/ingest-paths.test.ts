// The two ingestion paths (POST /api/v1/events and the browser endpoint) parse a page and its referrer the
// same way and share one instance of the services a web process builds once (lib/ingest/accept/services.ts).
// Rows are read where the web role leaves them: the queued jobs' payloads, through the job's one decoder.
import { randomUUID } from 'node:crypto';
import { decodeEventRows } from '../../../../../lib/ingest/job/rowBinary';
import type { EventRow } from '../../../../../lib/ingest/job/rows';
import { ingestPayloadKey } from '../../../../../lib/queue/ingest';
import { QUEUE_NAMES } from '../../../../../lib/queue/queues';
import { bullPrefix } from '../../../../../lib/redis';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { client } from '../../../../helpers/http';
import { type IngestFixture, ingestFixture, pageview } from '../../../../helpers/ingest';

let ctx: TestContext;
let fx: IngestFixture;
let domain: string;

beforeAll(async () => {
  ctx = await createTestContext();
  fx = await ingestFixture(ctx);
  domain = (await ctx.pool.query<{ domain: string }>('SELECT domain FROM websites WHERE id = $1', [fx.website.id]))
    .rows[0].domain;
});
afterAll(async () => {
  await ctx.close();
});

const PAGE_COLUMNS = [
  'url',
  'hostname',
  'pathname',
  'referrer',
  'referrer_domain',
  'source_name',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
] as const;

/** Every queued row of the test's website, by session id. */
async function queuedRows(): Promise<Map<string, EventRow>> {
  const prefix = ingestPayloadKey(`${bullPrefix(ctx.config.REDIS_PREFIX)}:${QUEUE_NAMES.ingest}`, '');
  const rows = new Map<string, EventRow>();
  for (const key of await ctx.redis.keys(`${prefix}*`)) {
    for (const row of decodeEventRows((await ctx.redis.getBuffer(key)) ?? Buffer.alloc(0)))
      rows.set(row.session_id, row);
  }
  return rows;
}

const pick = (row: EventRow | undefined) =>
  row ? Object.fromEntries(PAGE_COLUMNS.map((c) => [c, row[c]])) : undefined;

describe('one page parsing for both paths', () => {
  // [what, url, referrer]: the url and referrer are templates, `HOST` standing for the website's domain.
  const cases: [string, string, string][] = [
    [
      'UTM values in the query, a known referrer',
      'https://HOST/pricing?utm_source=news&utm_medium=email&utm_campaign=spring',
      'https://www.google.co.uk/search?q=x',
    ],
    ['a referrer from the page itself is not a source', 'https://HOST/docs/start', 'https://HOST/'],
    [
      'an encoded path is decoded, a mixed-case host lowered',
      'https://WWW.HOST/caf%C3%A9/men%C3%BC?utm_term=%C3%A9t%C3%A9',
      'https://News.YCombinator.com/item?id=1',
    ],
    ['a relative URL is a page of the website', '/pricing?utm_source=partner', ''],
    ['a relative URL with a referrer from the website', '/checkout', 'https://HOST/cart'],
    [
      'a URL that does not parse keeps its path, and the referrer of the own site is still no source',
      'http://[bad/path?utm_source=x#frag',
      'https://HOST/',
    ],
    ['a referrer that is not a URL', 'https://HOST/a', 'android-app://com.google.android.gm'],
  ];

  it.each(cases)('%s', async (_what, urlTemplate, referrerTemplate) => {
    const url = urlTemplate.replaceAll('HOST', domain);
    const referrer = referrerTemplate.replaceAll('HOST', domain);
    const serverSession = randomUUID();
    const browserSession = `sess-${randomUUID()}`;
    const server = await fx.post([pageview({ sessionId: serverSession }, { url, ...(referrer ? { referrer } : {}) })]);
    expect(server.body).toMatchObject({ acceptedCount: 1 });
    const browser = await client(ctx.baseUrl)('POST', `/api/events/${fx.website.tracking_code}`, {
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
      body: {
        event_type: 'pageview',
        session_id: browserSession,
        url,
        ...(referrer ? { referrer } : {}),
        device_type: 'desktop',
        browser: 'Firefox',
        os: 'Linux',
        user_agent: 'test',
      },
    });
    expect(browser.body.data).toMatchObject({ type: 'event_recorded' });

    const rows = await queuedRows();
    const fromServer = pick(rows.get(serverSession));
    expect(fromServer).toBeDefined();
    expect(pick(rows.get(browserSession))).toEqual(fromServer);
  });

  it('what the shared parsing makes of a relative URL and of one that does not parse', async () => {
    const rows = [...(await queuedRows()).values()];
    const relative = rows.find((r) => r.url === '/pricing?utm_source=partner');
    expect(relative).toMatchObject({
      hostname: domain,
      pathname: '/pricing',
      utm_source: 'partner',
      source_name: 'partner',
    });
    const own = rows.find((r) => r.url === '/checkout');
    expect(own).toMatchObject({ hostname: domain, referrer_domain: domain, source_name: 'Direct / None' });
    const bad = rows.find((r) => r.url.startsWith('http://[bad'));
    expect(bad).toMatchObject({
      hostname: '',
      pathname: 'http://[bad/path',
      utm_source: '',
      source_name: 'Direct / None',
    });
  });
});

describe('services built once per process', () => {
  it('both paths hash addresses with the one salt cache of the app', async () => {
    const forTime = jest.spyOn(ctx.ingest.salts, 'forTime');
    try {
      expect((await fx.post([pageview()])).body).toMatchObject({ acceptedCount: 1 });
      expect(forTime).toHaveBeenCalledTimes(1);
      const browser = await client(ctx.baseUrl)('POST', `/api/events/${fx.website.tracking_code}`, {
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
        body: {
          event_type: 'pageview',
          session_id: `sess-${randomUUID()}`,
          url: `https://${domain}/`,
          device_type: 'desktop',
          browser: 'Firefox',
          os: 'Linux',
          user_agent: 'test',
        },
      });
      expect(browser.body.data).toMatchObject({ type: 'event_recorded' });
      expect(forTime).toHaveBeenCalledTimes(2);
    } finally {
      forTime.mockRestore();
    }
  });
});
