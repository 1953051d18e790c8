// The verification mark on the browser ingestion path: one UPDATE while a website is unverified, none once it
// is verified, and never in the way of the event (a slow or failing UPDATE neither delays nor fails it).

import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { type BrowserDeps, ingestBrowserEvent } from '../../../../../lib/ingest/accept/browser';
import { browserEventSchema } from '../../../../../lib/ingest/accept/browserSchemas';
import { DailySalts } from '../../../../../lib/ingest/accept/salt';
import { SiteConfigCache } from '../../../../../lib/ingest/accept/siteCache';
import { createLogger } from '../../../../../lib/log';
import { createWebsite, registerUser, type TestUser } from '../../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../../helpers/context';
import { CHROME } from '../../../../helpers/ingest';

let ctx: TestContext;
let owner: TestUser;

const MARK = "verification_status = 'verified'";

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await registerUser(ctx, 'enterprise', 'verification');
});
afterAll(() => ctx.close());

/** The test database, with the verification UPDATE counted and, when asked, replaced. */
function watchedPool(replace?: () => Promise<never>) {
  const seen = { marks: 0 };
  const pool = new Proxy(ctx.pool, {
    get(target, prop) {
      if (prop !== 'query') return Reflect.get(target, prop, target);
      return (...args: Parameters<Pool['query']>) => {
        if (typeof args[0] === 'string' && args[0].includes(MARK)) {
          seen.marks++;
          if (replace) return replace();
        }
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { pool, seen };
}

function deps(sites: SiteConfigCache): BrowserDeps {
  return {
    sites,
    salts: new DailySalts(ctx.redis, ctx.config.REDIS_PREFIX),
    redis: ctx.redis,
    redisPrefix: ctx.config.REDIS_PREFIX,
    enrichers: {},
    enqueue: async () => undefined,
  };
}

const pageview = (code: string, url: string, i: number) => ({
  trackingCode: code,
  event: browserEventSchema.parse({
    event_type: 'pageview',
    session_id: `sess-${randomUUID()}`,
    url,
    device_type: 'desktop',
    browser: 'Chrome',
    os: 'macOS',
    user_agent: CHROME,
  }),
  ip: `203.0.113.${i % 250}`,
  userAgentHeader: CHROME,
  gpc: false,
  now: Date.now(),
});

const verifiedAt = async (id: string) =>
  (await ctx.pool.query('SELECT verified_at FROM websites WHERE id = $1', [id])).rows[0].verified_at as Date | null;

async function until(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await check()) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return check();
}

it('one UPDATE for a burst of events while unverified, none after', async () => {
  const site = await createWebsite(ctx, owner, 'burst.example.com');
  const { pool, seen } = watchedPool();
  const browser = deps(new SiteConfigCache(pool as Pool));
  const burst = (n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        ingestBrowserEvent(browser, pageview(site.tracking_code, 'https://burst.example.com/', i)),
      ),
    );
  const first = await burst(40);
  expect(first.every((o) => o.kind === 'recorded')).toBe(true);
  expect(await until(async () => (await verifiedAt(site.id)) !== null)).toBe(true);
  expect(seen.marks).toBe(1);
  await burst(40);
  expect(seen.marks).toBe(1);
});

it('a hanging or failing UPDATE neither delays nor fails the event, and a failure is logged', async () => {
  const site = await createWebsite(ctx, owner, 'slow.example.com');
  const hanging = watchedPool(() => new Promise<never>(() => undefined));
  const outcome = await ingestBrowserEvent(
    deps(new SiteConfigCache(hanging.pool as Pool)),
    pageview(site.tracking_code, 'https://slow.example.com/', 1),
  );
  expect(outcome).toEqual({ kind: 'recorded' });
  expect(hanging.seen.marks).toBe(1);

  const lines: string[] = [];
  const logger = createLogger('warn', 'test', { write: (line: string) => void lines.push(line) });
  const failing = watchedPool(() => Promise.reject(new Error('database is down')));
  const again = await ingestBrowserEvent(
    deps(new SiteConfigCache(failing.pool as Pool, logger)),
    pageview(site.tracking_code, 'https://slow.example.com/pricing', 2),
  );
  expect(again).toEqual({ kind: 'recorded' });
  expect(await until(async () => lines.length > 0)).toBe(true);
  expect(lines[0]).toContain('domain verification not recorded');
  expect(lines[0]).toContain(site.id);
  expect(await verifiedAt(site.id)).toBeNull();
});
