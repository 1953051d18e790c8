// notifyWebhookDisabled: the owner and admins of the website's team are emailed (never viewers or editors), once
// per webhook and day, and the message names the host only (the URL may hold a token).
import { notifyWebhookDisabled } from '../../../../lib/notifications/webhookDisabled';
import { createWebsite, registerUser } from '../../../helpers/accounts';
import { createTestContext, type TestContext } from '../../../helpers/context';
import { type Mailbox, startMailbox } from '../../../helpers/mailbox';

let mailbox: Mailbox;
let ctx: TestContext;

beforeAll(async () => {
  mailbox = await startMailbox();
  ctx = await createTestContext({ SMTP_URL: mailbox.url });
});

afterAll(async () => {
  await ctx.close();
  await mailbox.close();
});

it('emails the owner and admins once per webhook and day', async () => {
  const owner = await registerUser(ctx, 'pro', 'owner');
  const site = (await createWebsite(ctx, owner, 'hooks.example.com')).id;
  const admin = await registerUser(ctx, 'pro', 'admin');
  const viewer = await registerUser(ctx, 'pro', 'viewer');
  await ctx.pool.query(
    `INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'admin'), ($1, $3, 'viewer')`,
    [owner.teamId, admin.id, viewer.id],
  );
  const url = 'https://receiver.example.net/hooks/secret-token-123';
  const reason = '20 deliveries in a row failed (last: HTTP 503)';
  const now = Date.parse('2026-11-25T10:00:00Z');
  expect(await notifyWebhookDisabled(ctx, site, url, reason, now)).toEqual({ sent: 2, failed: 0, email: 'on' });
  await mailbox.waitFor(2);
  expect(mailbox.to(viewer.email)).toHaveLength(0);
  for (const who of [owner, admin]) {
    const [mail] = mailbox.to(who.email);
    expect(mail.subject).toBe('A webhook of hooks.example.com was disabled');
    expect(mail.text).toContain(
      `the webhook at receiver.example.net for Site hooks.example.com (hooks.example.com): ${reason}`,
    );
    expect(mail.text).toContain(`${ctx.config.PUBLIC_URL}/sites/${site}/settings`);
    expect(mail.text).not.toContain('secret-token-123');
    expect(String(mail.html)).not.toContain('secret-token-123');
  }
  expect(await notifyWebhookDisabled(ctx, site, url, reason, now + 3600_000)).toEqual({
    sent: 0,
    failed: 0,
    email: 'on',
  });
  expect(await notifyWebhookDisabled(ctx, site, url, reason, now + 86_400_000)).toMatchObject({ sent: 2 });
  expect(mailbox.messages.length).toBe(4);
});
