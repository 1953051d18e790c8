// The email-reports job against a real SMTP server in the test (smtp-server), every message parsed (mailparser).
// The website (UTC) has two weeks of hand-made traffic; expected figures are worked out beside the data.
import { main } from '../../../cli/main';
import { emailReports } from '../../../jobs/emailReports';
import { SCHEDULED_JOBS } from '../../../jobs/registry';
import type { EventRow } from '../../../lib/ingest/job/rows';
import { EMAIL_OFF } from '../../../lib/notifications/deliver';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type Mailbox, startMailbox } from '../../helpers/mailbox';
import { eventRow, storeRows } from '../../helpers/statsFixture';

let mailbox: Mailbox;
let ctx: TestContext;
let owner: TestUser;
let site: string;
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

/**
 * Week 9–15 Nov 2026: p0–p3 view / and leave (Direct); p4 views / then /pricing and completes Signup.
 *   → 5 visitors, 6 pageviews, bounce 4/5 = 80 %, Direct / None 5, / 5, /pricing 1, Signup 1.
 * Week 16–22 Nov: g0–g2 come from Google, view / then /pricing, g0 and g1 complete Signup; d0–d2 view / (Direct).
 *   → 6 visitors (+20 %), 9 pageviews (+50 %), bounce 3/6 = 50 % (−30 pts), Google 3 (new), Direct / None 3
 *     (−40 %), / 6 (+20 %), /pricing 3 (+200 %), Signup 2 (+100 %).
 */
function traffic(): EventRow[] {
  const rows: EventRow[] = [];
  const visit = (id: string, day: string, pages: string[], source = 'Direct / None', signup = false) => {
    const v = { visitor_id: id, session_id: `s-${id}`, source_name: source };
    pages.forEach((pathname, i) => {
      rows.push(eventRow(site, { ...v, pathname, ts: `2026-11-${day}T10:0${i}:00Z` }));
    });
    if (signup) {
      rows.push(
        eventRow(site, {
          ...v,
          type: 'event',
          name: 'Signup',
          pathname: '',
          source_name: '',
          ts: `2026-11-${day}T10:09:00Z`,
        }),
      );
    }
  };
  for (let i = 0; i < 4; i++) visit(`p${i}`, `1${i + 1}`, ['/']);
  visit('p4', '14', ['/', '/pricing'], 'Direct / None', true);
  for (let i = 0; i < 3; i++) visit(`g${i}`, String(16 + i), ['/', '/pricing'], 'Google', i < 2);
  for (let i = 0; i < 3; i++) visit(`d${i}`, String(19 + i), ['/']);
  return rows;
}

beforeAll(async () => {
  mailbox = await startMailbox();
  ctx = await createTestContext({ SMTP_URL: mailbox.url, MAIL_FROM: 'Tidemark <reports@tidemark.test>' });
  owner = await registerUser(ctx, 'pro', 'reports');
  site = (await createWebsite(ctx, owner, 'shop.example.com')).id;
  const api = client(ctx.baseUrl);
  expect(
    (await api('POST', `/api/websites/${site}/goals`, { token: owner.token, body: { name: 'Signup' } })).status,
  ).toBe(201);
  const prefs = await api('PUT', `/api/websites/${site}/notifications`, {
    token: owner.token,
    body: { weekly_report: true, report_recipients: [ALICE, BOB] },
  });
  expect(prefs.status).toBe(200);
  await storeRows(ctx.clickhouse, traffic());
});

afterAll(async () => {
  await ctx.close();
  await mailbox.close();
});

const run = (date?: string, now?: number) => emailReports(ctx, { websiteId: site, ...(date ? { date } : {}) }, now);

describe('the email-reports job', () => {
  it('is scheduled by the clock and run by the worker', () => {
    expect(SCHEDULED_JOBS.find((j) => j.name === 'email-reports')?.cron).toBe('25 * * * *');
    expect(SCHEDULED_JOBS.find((j) => j.name === 'anomaly-alerts')?.cron).toBe('*/5 * * * *');
  });

  it('sends nothing on a day that is neither a Monday nor a 1st', async () => {
    expect(await run('2026-11-24')).toEqual({ websites: 1, reports: 0, sent: 0, failed: 0, email: 'on' });
    expect(mailbox.messages).toHaveLength(0);
  });

  it("sends the week's report on Monday to each recipient, HTML and text, with the changes", async () => {
    // Monday 23 Nov 2026 at 07:00 UTC: the job run by the clock, no date in its scope.
    expect(await run(undefined, Date.parse('2026-11-23T07:00:00Z'))).toEqual({
      websites: 1,
      reports: 1,
      sent: 2,
      failed: 0,
      email: 'on',
    });
    await mailbox.waitFor(2);
    const [mail] = mailbox.to(ALICE);
    expect(mailbox.to(BOB)).toHaveLength(1);
    expect(mail.subject).toBe('Weekly report for Site shop.example.com: 16 Nov 2026 – 22 Nov 2026');
    expect(mail.from?.text).toBe('"Tidemark" <reports@tidemark.test>');
    const text = mail.text ?? '';
    expect(text).toContain('shop.example.com, against 9 Nov 2026 – 15 Nov 2026');
    expect(text).toContain('Visitors: 6 (+20%)');
    expect(text).toContain('Pageviews: 9 (+50%)');
    expect(text).toContain('Bounce rate: 50% (−30 pts)');
    expect(text).toContain('Top sources (visitors):\n  Direct / None: 3 (−40%)\n  Google: 3 (new)');
    expect(text).toContain('Top pages (pageviews):\n  /: 6 (+20%)\n  /pricing: 3 (+200%)');
    expect(text).toContain('Goals (completions):\n  Signup: 2 (+100%)');
    const html = String(mail.html);
    for (const cell of [
      '<td style="padding:4px 12px 4px 0;text-align:left">Visitors</td><td style="padding:4px 12px 4px 0;text-align:left">6</td><td style="padding:4px 12px 4px 0;text-align:left">+20%</td>',
    ]) {
      expect(html).toContain(cell);
    }
    expect(html).toContain('>50%<');
    expect(html).toContain('>−30 pts<');
    expect(html).toContain('>/pricing<');
    expect(html).toContain('>+200%<');
    // Mail clients can offer the unsubscribe themselves (RFC 8058).
    const header = (name: string) => mail.headerLines.find((h) => h.key === name)?.line;
    expect(header('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const link = /Stop these emails: (\S+)/.exec(text)?.[1];
    expect(header('list-unsubscribe')?.replace(/\s+/g, ' ')).toBe(`List-Unsubscribe: <${link}>`);
  });

  it('never sends a period twice to a recipient: re-runs, later hours and scope.date re-runs', async () => {
    expect(await run(undefined, Date.parse('2026-11-23T08:25:00Z'))).toMatchObject({ reports: 1, sent: 0 });
    expect(await run('2026-11-23')).toMatchObject({ reports: 1, sent: 0 });
    const io = captureIo();
    await main(['jobs', 'run', 'email-reports', '--website', site, '--date', '2026-11-23'], io, {
      ...cliEnv(ctx),
      SMTP_URL: mailbox.url,
    });
    expect(io.stdout.join('\n')).toContain('email-reports');
    expect(io.stdout.join('\n')).toContain('1 ok');
    expect(mailbox.messages).toHaveLength(2);
  });

  it('has an unsubscribe link that works without signing in and stops the next report', async () => {
    const text = mailbox.to(BOB)[0].text ?? '';
    const link = /Stop these emails: (\S+)/.exec(text)?.[1] ?? '';
    expect(link.startsWith(`${ctx.config.PUBLIC_URL}/unsubscribe/`)).toBe(true);
    expect(String(mailbox.to(BOB)[0].html)).toContain(`<a href="${link}">Unsubscribe</a>`);
    const path = new URL(link).pathname;
    const api = client(ctx.baseUrl);
    // Opening the link only asks (mail scanners open links); the form's POST unsubscribes.
    const asked = await api('GET', path);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('<form method="post">');
    expect(asked.text).toContain(BOB);
    const forged = await api('POST', `${path.slice(0, -2)}xx`);
    expect(forged.status).toBe(404);
    const done = await api('POST', path);
    expect(done.status).toBe(200);
    expect(done.text).toContain('will get no more reports or alerts');

    // The next Monday: Alice only (week 23–29 Nov, no traffic: 0 against 6).
    expect(await run('2026-11-30')).toMatchObject({ reports: 1, sent: 1 });
    await mailbox.waitFor(3);
    expect(mailbox.to(BOB)).toHaveLength(1);
    const next = mailbox.to(ALICE)[1];
    expect(next.subject).toBe('Weekly report for Site shop.example.com: 23 Nov 2026 – 29 Nov 2026');
    expect(next.text).toContain('Visitors: 0 (−100%)');
  });

  it('sends the monthly report on the 1st for the month that ended', async () => {
    const api = client(ctx.baseUrl);
    await api('PUT', `/api/websites/${site}/notifications`, { token: owner.token, body: { monthly_report: true } });
    // 1 Dec 2026 is a Tuesday: the monthly report only. November: 11 visitors, 15 pageviews; October: none.
    expect(await run('2026-12-01')).toMatchObject({ reports: 1, sent: 1 });
    await mailbox.waitFor(4);
    const mail = mailbox.to(ALICE)[2];
    expect(mail.subject).toBe('Monthly report for Site shop.example.com: November 2026');
    expect(mail.text).toContain('Visitors: 11 (new)');
    expect(mail.text).toContain('Pageviews: 15 (new)');
    expect(mail.text).toContain('against October 2026');
    expect(await run('2026-12-01')).toMatchObject({ sent: 0 });
  });
});

describe("a website's own time zone", () => {
  it('gets its Monday report once Monday has begun there, not on UTC Monday', async () => {
    const id = (await createWebsite(ctx, owner, 'ny.example.com')).id;
    await ctx.pool.query("UPDATE websites SET timezone = 'America/New_York' WHERE id = $1", [id]);
    await client(ctx.baseUrl)('PUT', `/api/websites/${id}/notifications`, {
      token: owner.token,
      body: { weekly_report: true, report_recipients: ['carol@example.com'] },
    });
    const ny = (iso: string) => emailReports(ctx, { websiteId: id }, Date.parse(iso));
    // 04:59 UTC on Monday 23 Nov is 23:59 on Sunday in New York (UTC−5): nothing yet.
    expect(await ny('2026-11-23T04:59:00Z')).toMatchObject({ reports: 0, sent: 0 });
    const before = mailbox.messages.length;
    expect(await ny('2026-11-23T05:25:00Z')).toMatchObject({ reports: 1, sent: 1 });
    await mailbox.waitFor(before + 1);
    const [mail] = mailbox.to('carol@example.com');
    expect(mail.subject).toBe('Weekly report for Site ny.example.com: 16 Nov 2026 – 22 Nov 2026');
    // 04:59 UTC on Tuesday is still Monday there: the same report, not sent again.
    expect(await ny('2026-11-24T04:59:00Z')).toMatchObject({ reports: 1, sent: 0 });
  });
});

describe('without SMTP_URL', () => {
  it('attempts nothing and says that email is off', async () => {
    const quiet = await createTestContext();
    try {
      const user = await registerUser(quiet, 'pro', 'no-smtp');
      const id = (await createWebsite(quiet, user, 'quiet.example.com')).id;
      await client(quiet.baseUrl)('PUT', `/api/websites/${id}/notifications`, {
        token: user.token,
        body: { weekly_report: true, report_recipients: [ALICE] },
      });
      const before = mailbox.messages.length;
      expect(await emailReports(quiet, { date: '2026-11-23' })).toEqual({
        websites: 0,
        reports: 0,
        sent: 0,
        failed: 0,
        email: EMAIL_OFF,
      });
      const { rowCount } = await quiet.pool.query('SELECT 1 FROM notifications_sent');
      expect(rowCount).toBe(0);
      expect(mailbox.messages.length).toBe(before);
    } finally {
      await quiet.close();
    }
  });
});
