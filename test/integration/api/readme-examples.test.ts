// The README's example requests run as they stand (bash and curl against a running web role and worker) and
// are accepted; the bot rule they describe holds, and the website's debug setting records bot traffic marked.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../../lib/paths';
import { createApiKey, createWebsite, registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { startTestWorker, waitForEvents } from '../../helpers/ingest';

const run = promisify(execFile);
const README = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

/** The fenced block that follows `<!-- example: name -->`. */
function example(name: string): string {
  const marker = `<!-- example: ${name} -->`;
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README has no ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  if (!block) throw new Error(`no sh block after ${marker}`);
  return block[1];
}

/** Every top-level JSON object a script printed (curl prints replies back to back). */
function replies(out: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' && depth++ === 0) start = i;
    else if (c === '}' && --depth === 0) found.push(JSON.parse(out.slice(start, i + 1)));
  }
  return found;
}

let ctx: TestContext;
let env: Record<string, string>;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let websiteId: string;
let token: string;

beforeAll(async () => {
  ctx = await createTestContext();
  worker = await startTestWorker(ctx);
  const user = await registerUser(ctx, 'pro', 'readme');
  const website = await createWebsite(ctx, user, 'example.com');
  const { key } = await createApiKey(ctx, user);
  websiteId = website.id;
  token = user.token;
  env = {
    PATH: process.env.PATH ?? '',
    TIDEMARK: ctx.baseUrl,
    TOKEN: user.token,
    WEBSITE: website.id,
    API_KEY: key,
    CODE: website.tracking_code,
  };
});
afterAll(async () => {
  await worker.stop();
  await ctx.close();
});

it('the server example: one event of each type, all accepted, then all deduplicated', async () => {
  const first = replies((await run('bash', ['-euo', 'pipefail', '-c', example('server-events')], { env })).stdout);
  expect(first.at(-1)).toEqual({ acceptedCount: 5, dedupedCount: 0, rejectedCount: 0, errors: [] });
  const again = replies((await run('bash', ['-euo', 'pipefail', '-c', example('server-events')], { env })).stdout);
  expect(again.at(-1)).toEqual({ acceptedCount: 0, dedupedCount: 5, rejectedCount: 0, errors: [] });
  await waitForEvents(ctx, 5, `website_id = '${websiteId}'`);
});

it('the browser example is recorded', async () => {
  const [reply] = replies((await run('bash', ['-euo', 'pipefail', '-c', example('browser-event')], { env })).stdout);
  expect(reply).toMatchObject({
    success: true,
    data: { type: 'event_recorded', event_type: 'custom', event_name: 'Newsletter signup' },
  });
});

describe('bots, as the README says', () => {
  // The browser example with curl's default User-Agent instead of Safari's.
  const asCurl = () => example('browser-event').replace(/ -H 'user-agent: [^']*'/, '');

  it("curl's default User-Agent is ignored as a bot", async () => {
    const [reply] = replies((await run('bash', ['-euo', 'pipefail', '-c', asCurl()], { env })).stdout);
    expect(reply).toMatchObject({ success: true, data: { type: 'event_ignored', reason: 'bot' } });
  });

  it("with the website's debug setting on, bot traffic is recorded and marked tm_debug=bot", async () => {
    const call = client(ctx.baseUrl);
    expect((await call('PUT', `/api/websites/${websiteId}/tracking`, { token, body: { debug: true } })).status).toBe(
      200,
    );
    const [reply] = replies((await run('bash', ['-euo', 'pipefail', '-c', asCurl()], { env })).stdout);
    expect(reply).toMatchObject({ success: true, data: { type: 'event_recorded' } });
    const where = `website_id = '${websiteId}' AND name = 'Newsletter signup'`;
    await waitForEvents(ctx, 2, where);
    const rows = await (
      await ctx.clickhouse.query({
        query: `SELECT JSONExtractString(props, 'tm_debug') AS mark FROM events WHERE ${where} ORDER BY ts`,
        format: 'JSONEachRow',
      })
    ).json<{ mark: string }>();
    expect(rows.map((r) => r.mark).sort()).toEqual(['', 'bot']);
    expect((await call('PUT', `/api/websites/${websiteId}/tracking`, { token, body: { debug: false } })).status).toBe(
      200,
    );
    const [off] = replies((await run('bash', ['-euo', 'pipefail', '-c', asCurl()], { env })).stdout);
    expect(off).toMatchObject({ data: { type: 'event_ignored', reason: 'bot' } });
  });
});
