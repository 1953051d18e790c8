// Website settings of issue 23: /notifications, /revenue and /domains, their roles, their bad input, and
// domain verification by browser ingestion.

import { randomUUID } from 'node:crypto';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { CHROME } from '../../helpers/ingest';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let owner: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  owner = await registerUser(ctx, 'enterprise', 'settings-owner');
});
afterAll(() => ctx.close());

const path = (siteId: string, what: string) => `/api/websites/${siteId}/${what}`;

describe('GET/PUT /notifications', () => {
  it('answers only website_id while none are saved', async () => {
    const site = await createWebsite(ctx, owner, 'notify-none.example.com');
    const res = await call('GET', path(site.id, 'notifications'), { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ website_id: site.id });
  });

  it('upserts from the defaults, then merges only the given fields', async () => {
    const site = await createWebsite(ctx, owner, 'notify-merge.example.com');
    const first = await call('PUT', path(site.id, 'notifications'), {
      token: owner.token,
      body: { weekly_report: true, report_recipients: ['Ops@Example.com', 'ops@example.com', 'ceo@example.com'] },
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      website_id: site.id,
      weekly_report: true,
      monthly_report: false,
      report_recipients: ['ops@example.com', 'ceo@example.com'],
      anomaly_alerts: false,
      anomaly_min_severity: 'warning',
      slack_webhook_set: false,
      slack_webhook_host: null,
    });
    const webhook = 'https://hooks.slack.com/services/T000/B000/SECRETPART';
    const second = await call('PUT', path(site.id, 'notifications'), {
      token: owner.token,
      body: { anomaly_alerts: true, anomaly_min_severity: 'critical', slack_webhook_url: webhook },
    });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({
      weekly_report: true, // kept
      report_recipients: ['ops@example.com', 'ceo@example.com'], // kept
      anomaly_alerts: true,
      anomaly_min_severity: 'critical',
      slack_webhook_set: true,
      slack_webhook_host: 'hooks.slack.com',
    });
    expect(second.text).not.toContain('SECRETPART');
    expect(second.body.data.created_at).toBe(first.body.data.created_at);
    const read = await call('GET', path(site.id, 'notifications'), { token: owner.token });
    expect(read.body.data).toEqual(second.body.data);
    expect(read.text).not.toContain('SECRETPART');
    const stored = await ctx.pool.query('SELECT slack_webhook_url FROM website_notifications WHERE website_id = $1', [
      site.id,
    ]);
    expect(stored.rows[0].slack_webhook_url).toBe(webhook);

    // null removes the webhook; alerts still have the recipients to go to.
    const cleared = await call('PUT', path(site.id, 'notifications'), {
      token: owner.token,
      body: { slack_webhook_url: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({
      slack_webhook_set: false,
      slack_webhook_host: null,
      anomaly_alerts: true,
    });
  });

  it('concurrent saves of different fields all land (the first included)', async () => {
    const site = await createWebsite(ctx, owner, 'notify-race.example.com');
    const saves = [
      { weekly_report: false },
      { monthly_report: false },
      { anomaly_min_severity: 'info' },
      { report_recipients: ['race@example.com'] },
      { slack_webhook_url: 'https://hooks.example.com/race' },
    ];
    const answers = await Promise.all(
      saves.map((body) => call('PUT', path(site.id, 'notifications'), { token: owner.token, body })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const read = await call('GET', path(site.id, 'notifications'), { token: owner.token });
    expect(read.body.data).toMatchObject({
      anomaly_min_severity: 'info',
      report_recipients: ['race@example.com'],
      slack_webhook_set: true,
      slack_webhook_host: 'hooks.example.com',
    });
  });

  it('refuses preferences that could never be delivered', async () => {
    const site = await createWebsite(ctx, owner, 'notify-undeliverable.example.com');
    const reports = await call('PUT', path(site.id, 'notifications'), {
      token: owner.token,
      body: { monthly_report: true },
    });
    expect(reports.status).toBe(400);
    expect(reports.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/recipients/),
    });
    const alerts = await call('PUT', path(site.id, 'notifications'), {
      token: owner.token,
      body: { anomaly_alerts: true },
    });
    expect(alerts.status).toBe(400);
    // A refused first save stores nothing.
    expect((await call('GET', path(site.id, 'notifications'), { token: owner.token })).body.data).toEqual({
      website_id: site.id,
    });
  });

  it.each([
    ['recipients not an array', { report_recipients: 'ops@example.com' }, /report_recipients/],
    ['a bad email', { report_recipients: ['not-an-email'] }, /report_recipients\.0/],
    [
      'too many recipients',
      { report_recipients: Array.from({ length: 21 }, (_, i) => `r${i}@example.com`) },
      /at most 20/,
    ],
    ['an unknown severity', { anomaly_min_severity: 'fatal' }, /anomaly_min_severity/],
    ['a non-boolean switch', { weekly_report: 'yes' }, /weekly_report/],
    ['an http webhook', { slack_webhook_url: 'http://hooks.slack.com/services/x' }, /https/],
    ['a loopback webhook', { slack_webhook_url: 'https://127.0.0.1/hook' }, /public host/],
    ['a private webhook', { slack_webhook_url: 'https://10.0.0.7/hook' }, /public host/],
    ['a localhost webhook', { slack_webhook_url: 'https://localhost:8080/hook' }, /public host/],
    ['a webhook that is no URL', { slack_webhook_url: 'hooks slack' }, /absolute URL/],
    ['a webhook of 3000 characters', { slack_webhook_url: `https://hooks.slack.com/${'a'.repeat(3000)}` }, /slack/],
  ])('400 for %s, never echoing a webhook URL', async (_what, body, message) => {
    const site = await createWebsite(ctx, owner, `notify-bad-${randomUUID().slice(0, 8)}.example.com`);
    const res = await call('PUT', path(site.id, 'notifications'), { token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(message);
    expect(res.body.error.message).not.toMatch(/127\.0\.0\.1|10\.0\.0\.7|localhost:8080/);
  });

  it('400 for a body that is not an object', async () => {
    const site = await createWebsite(ctx, owner, 'notify-array.example.com');
    const res = await call('PUT', path(site.id, 'notifications'), { token: owner.token, body: [1] });
    expect(res.status).toBe(400);
  });
});

describe('PUT /revenue', () => {
  it('sets provider and currency, each alone too, and returns id, both fields and updated_at', async () => {
    const site = await createWebsite(ctx, owner, 'revenue.example.com');
    const both = await call('PUT', path(site.id, 'revenue'), {
      token: owner.token,
      body: { revenue_provider: 'stripe', revenue_currency: 'eur' },
    });
    expect(both.status).toBe(200);
    expect(both.body.data).toEqual({
      id: site.id,
      revenue_provider: 'stripe',
      revenue_currency: 'EUR',
      updated_at: expect.any(String),
    });
    const provider = await call('PUT', path(site.id, 'revenue'), {
      token: owner.token,
      body: { revenue_provider: 'lemonsqueezy' },
    });
    expect(provider.body.data).toMatchObject({ revenue_provider: 'lemonsqueezy', revenue_currency: 'EUR' });
    const currency = await call('PUT', path(site.id, 'revenue'), {
      token: owner.token,
      body: { revenue_currency: 'JPY' },
    });
    expect(currency.body.data).toMatchObject({ revenue_provider: 'lemonsqueezy', revenue_currency: 'JPY' });
    const cleared = await call('PUT', path(site.id, 'revenue'), {
      token: owner.token,
      body: { revenue_provider: null },
    });
    expect(cleared.body.data).toMatchObject({ revenue_provider: null, revenue_currency: 'JPY' });
    // What the stats report revenue in.
    const { rows } = await ctx.pool.query('SELECT revenue_currency FROM websites WHERE id = $1', [site.id]);
    expect(rows[0].revenue_currency).toBe('JPY');
  });

  it.each([
    ['an unknown provider', { revenue_provider: 'paypal' }, /revenue_provider/],
    ['a made-up currency', { revenue_currency: 'XYZ' }, /ISO 4217/],
    ['a currency name', { revenue_currency: 'EURO' }, /ISO 4217/],
    ['a numeric currency', { revenue_currency: 978 }, /revenue_currency/],
  ])('400 for %s', async (_what, body, message) => {
    const site = await createWebsite(ctx, owner, `revenue-bad-${randomUUID().slice(0, 8)}.example.com`);
    const res = await call('PUT', path(site.id, 'revenue'), { token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
  });
});

describe('GET/PUT /domains', () => {
  it('reads and changes the primary and allowed domains', async () => {
    const site = await createWebsite(ctx, owner, 'domains.example.com');
    const read = await call('GET', path(site.id, 'domains'), { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      website_id: site.id,
      primary_domain: 'domains.example.com',
      allowed_domains: [],
      verification_status: 'unverified',
      verified_at: null,
      updated_at: expect.any(String),
    });
    const allowed = await call('PUT', path(site.id, 'domains'), {
      token: owner.token,
      body: { allowed_domains: ['Shop.Example.net', 'shop.example.net', 'domains.example.com'] },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toMatchObject({
      primary_domain: 'domains.example.com',
      allowed_domains: ['shop.example.net', 'domains.example.com'],
    });
    const moved = await call('PUT', path(site.id, 'domains'), {
      token: owner.token,
      body: { domain: 'new.example.com' },
    });
    expect(moved.body.data).toMatchObject({
      primary_domain: 'new.example.com',
      allowed_domains: ['shop.example.net', 'domains.example.com'],
    });
    // The website resource agrees.
    const website = await call('GET', `/api/websites/${site.id}`, { token: owner.token });
    expect(website.body.data.website).toMatchObject({ domain: 'new.example.com' });
    // An empty list means every host is accepted again.
    const emptied = await call('PUT', path(site.id, 'domains'), { token: owner.token, body: { allowed_domains: [] } });
    expect(emptied.body.data.allowed_domains).toEqual([]);
  });

  it.each([
    ['allowed_domains as a string', { allowed_domains: 'example.com' }, /allowed_domains/],
    ['allowed_domains as an object', { allowed_domains: { a: 'example.com' } }, /allowed_domains/],
    ['allowed_domains as null', { allowed_domains: null }, /allowed_domains/],
    ['a hostname with a space', { allowed_domains: ['bad host.com'] }, /allowed_domains\.0/],
    ['a URL instead of a host', { allowed_domains: ['https://example.com/'] }, /allowed_domains\.0/],
    ['too many hosts', { allowed_domains: Array.from({ length: 101 }, (_, i) => `h${i}.example.com`) }, /at most 100/],
    ['a bad primary domain', { domain: 'not a domain' }, /domain/],
    ['a numeric primary domain', { domain: 42 }, /domain/],
  ])('400 for %s', async (_what, body, message) => {
    const site = await createWebsite(ctx, owner, `domains-bad-${randomUUID().slice(0, 8)}.example.com`);
    const res = await call('PUT', path(site.id, 'domains'), { token: owner.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
  });
});

describe('domain verification by the browser tracker', () => {
  const browserEvent = (code: string, url: string) =>
    call('POST', `/api/events/${code}`, {
      headers: { 'user-agent': CHROME, 'content-type': 'text/plain' }, // sendBeacon's content type
      rawBody: JSON.stringify({
        event_type: 'pageview',
        session_id: `sess-${randomUUID()}`,
        url,
        referrer: '',
        device_type: 'desktop',
        browser: 'Chrome',
        os: 'macOS',
        user_agent: CHROME,
      }),
    });
  const status = async (siteId: string) =>
    (await call('GET', path(siteId, 'domains'), { token: owner.token })).body.data as {
      verification_status: string;
      verified_at: string | null;
    };
  /** The mark is written after the 200, without being awaited: poll a little. */
  async function settled(siteId: string, want: string, ms = 3000): Promise<string> {
    const until = Date.now() + ms;
    let seen = (await status(siteId)).verification_status;
    while (seen !== want && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      seen = (await status(siteId)).verification_status;
    }
    return seen;
  }

  it('stays unverified for events from elsewhere and becomes verified from an allowed domain', async () => {
    const site = await createWebsite(ctx, owner, 'verify.example.com');
    // No allowed domains yet: events from any host are recorded, but only the website's own verify it.
    const elsewhere = await browserEvent(site.tracking_code, 'https://elsewhere.example.org/page');
    expect(elsewhere.body.data.type).toBe('event_recorded');
    // A relative URL resolves against the primary domain: it says nothing about where the tracker runs.
    const relative = await browserEvent(site.tracking_code, '/page');
    expect(relative.body.data.type).toBe('event_recorded');
    expect(await settled(site.id, 'verified', 1000)).toBe('unverified');

    await call('PUT', path(site.id, 'domains'), {
      token: owner.token,
      body: { allowed_domains: ['shop.example.net'] },
    });
    const foreign = await browserEvent(site.tracking_code, 'https://elsewhere.example.org/page');
    expect(foreign.body.data).toMatchObject({ type: 'event_ignored', reason: 'domain_not_allowed' });
    expect(await settled(site.id, 'verified', 1000)).toBe('unverified');

    const allowed = await browserEvent(site.tracking_code, 'https://www.shop.example.net/checkout');
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.type).toBe('event_recorded');
    expect(await settled(site.id, 'verified')).toBe('verified');
    const verified = await status(site.id);
    expect(Date.parse(verified.verified_at ?? '')).toBeGreaterThan(Date.now() - 60_000);

    // Set once: later events leave the time alone.
    await browserEvent(site.tracking_code, 'https://verify.example.com/');
    await new Promise((r) => setTimeout(r, 200));
    expect((await status(site.id)).verified_at).toBe(verified.verified_at);

    // Changing allowed domains or saving the same primary domain keeps it; a new primary domain starts over.
    await call('PUT', path(site.id, 'domains'), { token: owner.token, body: { allowed_domains: [] } });
    await call('PUT', `/api/websites/${site.id}/general`, {
      token: owner.token,
      body: { domain: 'verify.example.com' },
    });
    expect((await status(site.id)).verification_status).toBe('verified');
    const moved = await call('PUT', path(site.id, 'domains'), {
      token: owner.token,
      body: { domain: 'moved.example.com' },
    });
    expect(moved.body.data).toMatchObject({ verification_status: 'unverified', verified_at: null });
    // The old domain no longer verifies it, the new one does.
    await browserEvent(site.tracking_code, 'https://verify.example.com/');
    expect(await settled(site.id, 'verified', 1000)).toBe('unverified');
    await browserEvent(site.tracking_code, 'https://moved.example.com/');
    expect(await settled(site.id, 'verified')).toBe('verified');
  });

  it('verifies from the primary domain, and PUT /general resets it too', async () => {
    const site = await createWebsite(ctx, owner, 'primary-verify.example.com');
    await browserEvent(site.tracking_code, 'https://primary-verify.example.com/');
    expect(await settled(site.id, 'verified')).toBe('verified');
    await call('PUT', `/api/websites/${site.id}/general`, {
      token: owner.token,
      body: { domain: 'other.example.com' },
    });
    expect((await status(site.id)).verification_status).toBe('unverified');
  });
});

describe('access', () => {
  type Who = 'viewer' | 'editor' | 'admin' | 'owner' | 'nonMember' | 'otherTeam';
  const users = {} as Record<Who, TestUser>;
  let siteId: string;
  let otherSiteId: string;

  beforeAll(async () => {
    users.owner = owner;
    const site = await createWebsite(ctx, owner, 'matrix.example.com');
    siteId = site.id;
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      users[role] = await registerUser(ctx, 'free', `settings-${role}`);
      const added = await call('POST', path(siteId, 'team-members'), {
        token: owner.token,
        body: { email: users[role].email, role },
      });
      expect(added.status).toBe(201);
    }
    users.nonMember = await registerUser(ctx, 'free', 'settings-stranger');
    users.otherTeam = await registerUser(ctx, 'pro', 'settings-other');
    otherSiteId = (await createWebsite(ctx, users.otherTeam, 'other-team.example.com')).id;
  });

  const ROUTES: [method: string, what: string, minimum: Who, body?: unknown][] = [
    ['GET', 'notifications', 'viewer'],
    ['PUT', 'notifications', 'editor', { anomaly_min_severity: 'info' }],
    ['PUT', 'revenue', 'admin', { revenue_currency: 'GBP' }],
    ['GET', 'domains', 'viewer'],
    ['PUT', 'domains', 'admin', { allowed_domains: ['matrix.example.com'] }],
  ];
  const RANK: Record<Who, number> = { nonMember: -1, otherTeam: -1, viewer: 0, editor: 1, admin: 2, owner: 3 };
  const cases = ROUTES.flatMap(([method, what, minimum, body]) =>
    (Object.keys(RANK) as Who[]).map((who) => ({ method, what, minimum, body, who })),
  );

  it.each(cases)('$method /$what as $who', async ({ method, what, minimum, body, who }) => {
    const res = await call(method, path(siteId, what), { token: users[who].token, body });
    const expected = RANK[who] < 0 ? 404 : RANK[who] >= RANK[minimum] ? 200 : 403;
    expect(res.status).toBe(expected);
    if (expected !== 200) expect(res.body.success).toBe(false);
  });

  const routes = ROUTES.map(([method, what, , body]) => ({ method, what, body }));
  it.each(routes)(
    '$method /$what: 401 without a token; 404 for unknown, malformed and other teams’ ids',
    async ({ method, what, body }) => {
      expect((await call(method, path(siteId, what), { body })).status).toBe(401);
      expect((await call(method, path(randomUUID(), what), { token: owner.token, body })).status).toBe(404);
      expect((await call(method, path('not-a-uuid', what), { token: owner.token, body })).status).toBe(404);
      expect((await call(method, path(`${siteId}x`, what), { token: owner.token, body })).status).toBe(404);
      expect((await call(method, path(otherSiteId, what), { token: owner.token, body })).status).toBe(404);
    },
  );

  it('a refused write changes nothing', async () => {
    const before = await call('GET', path(siteId, 'domains'), { token: owner.token });
    await call('PUT', path(siteId, 'domains'), { token: users.editor.token, body: { domain: 'hijack.example.com' } });
    await call('PUT', path(siteId, 'domains'), {
      token: users.otherTeam.token,
      body: { domain: 'hijack.example.com' },
    });
    const after = await call('GET', path(siteId, 'domains'), { token: owner.token });
    expect(after.body.data.primary_domain).toBe(before.body.data.primary_domain);
  });
});
