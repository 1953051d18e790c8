// Ingestion fixtures: a paid team with a website and keys, a running worker, and helpers to post and wait.
import { randomUUID } from 'node:crypto';
import { startWorker } from '../../workers/main';
import { createApiKey, createWebsite, registerUser, type TestUser } from './accounts';
import type { TestContext } from './context';
import { client, type Reply } from './http';

export interface IngestFixture {
  user: TestUser;
  website: { id: string; tracking_code: string };
  key: string;
  post(
    events: unknown[],
    opts?: { headers?: Record<string, string>; key?: string; serverContext?: unknown; trackingCode?: string },
  ): Promise<Reply>;
}

export async function ingestFixture(
  ctx: TestContext,
  plan: 'pro' | 'scale' | 'enterprise' = 'enterprise',
): Promise<IngestFixture> {
  const user = await registerUser(ctx, plan, 'ingest');
  const website = await createWebsite(ctx, user, `shop-${randomUUID().slice(0, 8)}.example.com`);
  const { key } = await createApiKey(ctx, user);
  const call = client(ctx.baseUrl);
  return {
    user,
    website,
    key,
    post: (events, opts = {}) =>
      call('POST', '/api/v1/events', {
        token: opts.key ?? key,
        headers: opts.headers,
        body: {
          trackingCode: opts.trackingCode ?? website.tracking_code,
          events,
          ...(opts.serverContext ? { serverContext: opts.serverContext } : {}),
        },
      }),
  };
}

export function pageview(overrides: Record<string, unknown> = {}, props: Record<string, unknown> = {}) {
  return {
    type: 'pageview',
    ts: Date.now(),
    sessionId: randomUUID(),
    visitorId: randomUUID(),
    idempotencyKey: randomUUID(),
    props: { url: 'https://shop.example.com/pricing?utm_source=newsletter', ...props },
    ...overrides,
  };
}

export async function startTestWorker(ctx: TestContext) {
  return startWorker(ctx.config);
}

export async function countEvents(ctx: TestContext, where = '1'): Promise<number> {
  const rows = await (
    await ctx.clickhouse.query({ query: `SELECT count() AS n FROM events WHERE ${where}`, format: 'JSONEachRow' })
  ).json<{ n: string }>();
  return Number(rows[0].n);
}

export async function waitForEvents(
  ctx: TestContext,
  expected: number,
  where = '1',
  timeoutMs = 15_000,
): Promise<number> {
  const end = Date.now() + timeoutMs;
  let n = await countEvents(ctx, where);
  while (n < expected && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    n = await countEvents(ctx, where);
  }
  return n;
}

/** A desktop Chrome's User-Agent: browser ingestion records it (curl's and headless browsers' are bots). */
export const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
