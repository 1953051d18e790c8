// Invite links by email (DESIGN §5), through a real SMTP server in the test: the API sends after answering, the
// CLI after printing the link; a mail failure never fails the invite.
import { main } from '../../../cli/main';
import { registerUser, type TestUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type Mailbox, startMailbox } from '../../helpers/mailbox';

let mailbox: Mailbox;
let ctx: TestContext;
let admin: TestUser;

beforeAll(async () => {
  mailbox = await startMailbox();
  ctx = await createTestContext({ SMTP_URL: mailbox.url });
  admin = await registerUser(ctx, 'pro', 'inviter');
});

afterAll(async () => {
  await ctx.close();
  await mailbox.close();
});

describe('invite emails', () => {
  it('emails the link of an invite made through the API', async () => {
    const res = await client(ctx.baseUrl)('POST', `/api/teams/${admin.teamId}/invites`, {
      token: admin.token,
      body: { email: 'New.Person@example.com', role: 'editor' },
    });
    expect(res.status).toBe(201);
    await mailbox.waitFor(1);
    const [mail] = mailbox.to('new.person@example.com');
    expect(mail.subject).toBe(`You are invited to join ${res.body.data.team.name} on Tidemark`);
    expect(mail.text).toContain(`as editor.`);
    expect(mail.text).toContain(`valid until ${res.body.data.expires_at.slice(0, 10)}`);
    expect(mail.text).toContain(`\n${res.body.data.url}\n`);
    expect(String(mail.html)).toContain(`<a href="${res.body.data.url}">`);
  });

  it('emails the link of an invite made with `tidemark admin invite`', async () => {
    const io = captureIo();
    const env = { ...cliEnv(ctx), SMTP_URL: mailbox.url };
    expect(await main(['admin', 'invite', '--team', admin.teamId, '--email', 'cli@example.com'], io, env)).toBe(0);
    expect(io.stdout[2]).toBe('emailed to cli@example.com');
    await mailbox.waitFor(2);
    expect(mailbox.to('cli@example.com')[0].text).toContain(`\n${io.stdout[1]}\n`);
  });

  it('still makes the invite when the mail server is down, and says so', async () => {
    const io = captureIo();
    const env = { ...cliEnv(ctx), SMTP_URL: 'smtp://127.0.0.1:9' };
    expect(await main(['admin', 'invite', '--team', admin.teamId, '--email', 'down@example.com'], io, env)).toBe(0);
    expect(io.stdout[1]).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(io.stdout[2]).toMatch(/^not emailed \(.*\); send the link yourself$/);
    const off = captureIo();
    expect(
      await main(['admin', 'invite', '--team', admin.teamId, '--email', 'off@example.com'], off, cliEnv(ctx)),
    ).toBe(0);
    expect(off.stdout[2]).toBe('not emailed: email is off (SMTP_URL is not set); send the link yourself');
    expect(mailbox.messages).toHaveLength(2);
  });
});
