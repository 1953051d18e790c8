// The webhooks API of issue 26: register, list, change, delete, roles, validation, the URL rules (SSRF at
// registration, by what a name resolves to as well), the deliveries log, and the signed test delivery.

import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import vm from 'node:vm';
import { createApp } from '../../../api/app';
import { createMetrics } from '../../../lib/metrics';
import { PROJECT_ROOT } from '../../../lib/paths';
import type { ResolveHost } from '../../../lib/webhooks/target';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type Receiver, startReceiver, verifySignature } from '../../helpers/webhookReceiver';

let ctx: TestContext;
let owner: TestUser;
let editor: TestUser;
let strictServer: Server;
let openServer: Server;
/** WEBHOOK_ALLOW_PRIVATE=false (the default), names resolved by DNS_ANSWERS. */
let strict: ReturnType<typeof client>;
/** WEBHOOK_ALLOW_PRIVATE=true: the loopback receiver is allowed. */
let open: ReturnType<typeof client>;
let receiver: Receiver;

const DNS_ANSWERS: Record<string, string> = {
  'hooks.example.com': '93.184.216.34',
  'sneaky.example.com': '127.0.0.1',
  'mixed.example.com': '10.0.0.7',
};
const resolve: ResolveHost = async (host) => {
  const address = DNS_ANSWERS[host];
  if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return [{ address, family: 4 }];
};

async function serve(allowPrivate: boolean): Promise<[Server, ReturnType<typeof client>]> {
  const app = createApp({
    ...ctx,
    config: { ...ctx.config, WEBHOOK_ALLOW_PRIVATE: allowPrivate },
    metrics: createMetrics('test'),
    webhookResolve: resolve,
  });
  const server = await new Promise<Server>((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  return [server, client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)];
}

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await registerUser(ctx, 'enterprise', 'hooks-owner');
  editor = await registerUser(ctx, 'free', 'hooks-editor');
  [strictServer, strict] = await serve(false);
  [openServer, open] = await serve(true);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  for (const s of [strictServer, openServer]) {
    s.closeAllConnections();
    await new Promise((done) => s.close(done));
  }
  await ctx.close();
});

/** The `verified` function of the README's receiver snippet, run as it stands. */
function readmeVerifier(): (secret: string, header: string, body: string) => boolean {
  const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('<!-- example: verify-webhook -->');
  const code = /```js\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (at < 0 || !code) throw new Error('README has no verify-webhook example');
  const sandbox = { require, Buffer, Date, Math, Number, Object, result: undefined as unknown };
  vm.runInNewContext(`${code}\nresult = verified;`, sandbox);
  return sandbox.result as (secret: string, header: string, body: string) => boolean;
}

const hooks = (siteId: string) => `/api/websites/${siteId}/webhooks`;

describe('registering and managing webhooks', () => {
  it('registers with a generated secret shown once, lists, updates, deletes', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-crud.example.com');
    const created = await strict('POST', hooks(site.id), {
      token: owner.token,
      body: { url: 'https://hooks.example.com/in', events: ['goal.completed', 'event.tracked', 'goal.completed'] },
    });
    expect(created.status).toBe(201);
    const { webhook, secret } = created.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(webhook).toMatchObject({
      website_id: site.id,
      url: 'https://hooks.example.com/in',
      events: ['goal.completed', 'event.tracked'],
      event_names: null,
      is_active: true,
      failure_streak: 0,
      disabled_at: null,
    });
    const stored = await ctx.pool.query('SELECT secret FROM webhooks WHERE id = $1', [webhook.id]);
    expect(stored.rows[0].secret).toBe(secret);

    const list = await strict('GET', hooks(site.id), { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.webhooks).toEqual([webhook]);
    expect(list.text).not.toContain(secret);

    const changed = await strict('PATCH', `${hooks(site.id)}/${webhook.id}`, {
      token: owner.token,
      body: { events: ['event.tracked'], event_names: ['signup', ''], is_active: false },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.webhook).toMatchObject({
      events: ['event.tracked'],
      event_names: ['signup', ''],
      is_active: false,
      url: 'https://hooks.example.com/in',
    });
    const put = await strict('PUT', `${hooks(site.id)}/${webhook.id}`, {
      token: owner.token,
      body: { event_names: null },
    });
    expect(put.body.data.webhook).toMatchObject({ event_names: null, is_active: false, events: ['event.tracked'] });

    const gone = await strict('DELETE', `${hooks(site.id)}/${webhook.id}`, { token: owner.token });
    expect(gone.status).toBe(200);
    expect(gone.body.data).toEqual({ deleted: true });
    expect((await strict('DELETE', `${hooks(site.id)}/${webhook.id}`, { token: owner.token })).status).toBe(404);
    expect((await strict('GET', hooks(site.id), { token: owner.token })).body.data.webhooks).toEqual([]);
  });

  it('keeps a given secret and takes an event-name filter', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-secret.example.com');
    const res = await strict('POST', hooks(site.id), {
      token: owner.token,
      body: {
        url: 'https://hooks.example.com/x',
        events: ['event.tracked'],
        secret: 'my-own-secret-0123456',
        event_names: ['buy'],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.secret).toBe('my-own-secret-0123456');
    expect(res.body.data.webhook.event_names).toEqual(['buy']);
  });

  it('is for admins: an editor gets 403, another team 404', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-roles.example.com');
    const added = await strict('POST', `/api/websites/${site.id}/team-members`, {
      token: owner.token,
      body: { email: editor.email, role: 'editor' },
    });
    expect(added.status).toBe(201);
    const body = { url: 'https://hooks.example.com/in', events: ['goal.completed'] };
    expect((await strict('POST', hooks(site.id), { token: editor.token, body })).status).toBe(403);
    expect((await strict('GET', hooks(site.id), { token: editor.token })).status).toBe(403);
    const stranger = await registerUser(ctx, 'free', 'hooks-stranger');
    expect((await strict('GET', hooks(site.id), { token: stranger.token })).status).toBe(404);
    expect((await strict('GET', hooks(site.id))).status).toBe(401);
    const mine = await strict('POST', hooks(site.id), { token: owner.token, body });
    const other = await createWebsite(ctx, owner, 'hooks-roles-2.example.com');
    // Another website's webhook id answers 404 under this website.
    const cross = await strict('GET', `${hooks(other.id)}/${mine.body.data.webhook.id}/deliveries`, {
      token: owner.token,
    });
    expect(cross.status).toBe(404);
  });

  it.each([
    [{ events: ['goal.completed'] }, /^url: /],
    [{ url: 'https://hooks.example.com/in', events: [] }, /^events: must name at least one event/],
    [{ url: 'https://hooks.example.com/in', events: ['visitor.left'] }, /^events\.0: /],
    [
      { url: 'https://hooks.example.com/in', events: ['goal.completed'], secret: 'short' },
      /^secret: must be at least 16/,
    ],
    [{ url: 'not a url', events: ['goal.completed'] }, /^url: must be an absolute URL/],
    [{ url: 'ftp://hooks.example.com/in', events: ['goal.completed'] }, /^url: must be an http\(s\) URL/],
    [{ url: 'https://u:p@hooks.example.com/in', events: ['goal.completed'] }, /^url: must not contain a user name/],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const site = await createWebsite(ctx, owner, `hooks-bad-${Math.random().toString(36).slice(2)}.example.com`);
    const res = await strict('POST', hooks(site.id), { token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(message);
  });

  it('caps a website at 20 webhooks (409)', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-cap.example.com');
    const body = { url: 'https://hooks.example.com/in', events: ['goal.completed'] };
    for (let i = 0; i < 20; i++)
      expect((await strict('POST', hooks(site.id), { token: owner.token, body })).status).toBe(201);
    const over = await strict('POST', hooks(site.id), { token: owner.token, body });
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe('CONFLICT');
  });
});

describe('where a webhook may point', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://localhost/hook',
  ])('refuses %s at registration', async (url) => {
    const site = await createWebsite(ctx, owner, `ssrf-${Math.random().toString(36).slice(2)}.example.com`);
    const res = await strict('POST', hooks(site.id), { token: owner.token, body: { url, events: ['goal.completed'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('url: must point at a public host, not a private or local one');
  });

  it('refuses a public-looking name that resolves to a private address, and one that does not resolve', async () => {
    const site = await createWebsite(ctx, owner, 'ssrf-dns.example.com');
    for (const host of ['sneaky.example.com', 'mixed.example.com']) {
      const res = await strict('POST', hooks(site.id), {
        token: owner.token,
        body: { url: `https://${host}/hook`, events: ['goal.completed'] },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('url: the host resolves to a private, loopback or link-local address');
    }
    const nowhere = await strict('POST', hooks(site.id), {
      token: owner.token,
      body: { url: 'https://nowhere.example.com/hook', events: ['goal.completed'] },
    });
    expect(nowhere.body.error.message).toBe('url: the host name does not resolve');
    // A change of URL is judged the same way.
    const ok = await strict('POST', hooks(site.id), {
      token: owner.token,
      body: { url: 'https://hooks.example.com/hook', events: ['goal.completed'] },
    });
    const moved = await strict('PUT', `${hooks(site.id)}/${ok.body.data.webhook.id}`, {
      token: owner.token,
      body: { url: 'https://sneaky.example.com/hook' },
    });
    expect(moved.status).toBe(400);
  });

  it('lets loopback through with WEBHOOK_ALLOW_PRIVATE', async () => {
    const site = await createWebsite(ctx, owner, 'ssrf-allowed.example.com');
    const res = await open('POST', hooks(site.id), {
      token: owner.token,
      body: { url: receiver.url, events: ['goal.completed'] },
    });
    expect(res.status).toBe(201);
  });
});

describe('POST /:id/test and the deliveries log', () => {
  it('sends a signed test delivery the receiver can verify, and logs it', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-test.example.com');
    const created = await open('POST', hooks(site.id), {
      token: owner.token,
      body: { url: receiver.url, events: ['visitor.converted'] },
    });
    const { webhook, secret } = created.body.data;
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 204 });
    const res = await open('POST', `${hooks(site.id)}/${webhook.id}/test`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.delivery).toMatchObject({
      event: 'webhook.test',
      status: 'succeeded',
      attempts: 1,
      response_status: 204,
      last_error: null,
    });
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got.headers['x-tidemark-event']).toBe('webhook.test');
    expect(got.headers['x-tidemark-delivery']).toBe(res.body.data.delivery.id);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/^Tidemark-Webhooks\//);
    const signature = String(got.headers['x-tidemark-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature(secret, signature, got.body, now)).toBe(true);
    expect(verifySignature('whsec_another', signature, got.body, now)).toBe(false);
    expect(verifySignature(secret, signature, `${got.body} `, now)).toBe(false);
    expect(verifySignature(secret, signature, got.body, now + 600)).toBe(false); // outside the window
    // The README's snippet for receivers agrees.
    const readmeVerified = readmeVerifier();
    expect(readmeVerified(secret, signature, got.body)).toBe(true);
    expect(readmeVerified(secret, signature, got.body.replace('test', 'tesT'))).toBe(false);
    expect(readmeVerified(secret, signature.replace(/t=\d+/, `t=${now - 3600}`), got.body)).toBe(false);
    expect(JSON.parse(got.body)).toEqual({
      event: 'webhook.test',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { webhook_id: webhook.id, website_id: site.id, message: 'A test delivery from Tidemark.' },
    });

    const log = await open('GET', `${hooks(site.id)}/${webhook.id}/deliveries`, { token: owner.token });
    expect(log.status).toBe(200);
    expect(log.body.data).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(log.body.data.deliveries).toEqual([res.body.data.delivery]);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-redirect.example.com');
    const created = await open('POST', hooks(site.id), {
      token: owner.token,
      body: { url: receiver.url, events: ['goal.completed'] },
    });
    receiver.received.length = 0;
    receiver.answer = (r) =>
      r.headers['x-tidemark-event']
        ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
        : { status: 200 };
    const res = await open('POST', `${hooks(site.id)}/${created.body.data.webhook.id}/test`, { token: owner.token });
    receiver.answer = () => ({ status: 200 });
    expect(res.body.data.delivery).toMatchObject({
      status: 'failed',
      attempts: 1,
      response_status: 302,
      last_error: 'redirect (302) not followed',
    });
    expect(receiver.received).toHaveLength(1); // nothing fetched at the Location
    // A test does not count against the failure run.
    const list = await open('GET', hooks(site.id), { token: owner.token });
    expect(list.body.data.webhooks[0].failure_streak).toBe(0);
  });

  it('pages the log and refuses a bad page', async () => {
    const site = await createWebsite(ctx, owner, 'hooks-pages.example.com');
    const created = await open('POST', hooks(site.id), {
      token: owner.token,
      body: { url: receiver.url, events: ['goal.completed'] },
    });
    const id = created.body.data.webhook.id;
    for (let i = 0; i < 3; i++) await open('POST', `${hooks(site.id)}/${id}/test`, { token: owner.token });
    const page = await open('GET', `${hooks(site.id)}/${id}/deliveries?limit=2&offset=2`, { token: owner.token });
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(page.body.data.deliveries).toHaveLength(1);
    const bad = await open('GET', `${hooks(site.id)}/${id}/deliveries?limit=500`, { token: owner.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^limit: /);
  });
});

describe('the OpenAPI document', () => {
  it('describes what each event POSTs, in its webhooks section', async () => {
    const res = await strict('GET', '/api/openapi.json');
    const webhooks = res.body.webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([
      'event.tracked',
      'goal.completed',
      'visitor.converted',
      'visitor.high_value',
      'visitor.identified',
      'webhook.test',
    ]);
    const high = webhooks['visitor.high_value'].post;
    const body = high.requestBody.content['application/json'].schema;
    expect(body.required.sort()).toEqual(['data', 'event', 'timestamp']);
    expect(body.properties.event.const ?? body.properties.event.enum?.[0]).toBe('visitor.high_value');
    expect(body.properties.data.required.sort()).toEqual(['current_page', 'score', 'time_on_site', 'visitor_id']);
    expect(high.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual([
      'header:X-Tidemark-Delivery',
      'header:X-Tidemark-Event',
      'header:X-Tidemark-Signature',
    ]);
    expect(res.body.paths['/api/websites/{websiteId}/webhooks/{webhookId}/test'].post).toBeDefined();
  });
});
