// The anomaly-alerts job: a real SMTP server (smtp-server, messages parsed by mailparser) and a loopback HTTP
// server as the Slack-compatible receiver. Anomaly rows are written straight into PostgreSQL, as the hourly
// anomalies job writes them.
import { Worker } from 'bullmq';
import { anomalyAlerts } from '../../../jobs/anomalyAlerts';
import { SCHEDULED_JOB_OPTIONS, scheduledJobId } from '../../../jobs/clock';
import type { JobContext } from '../../../jobs/registry';
import { EMAIL_OFF } from '../../../lib/notifications/deliver';
import { postToSlack, publicOnlyLookup } from '../../../lib/notifications/slack';
import { createProducerQueue, QUEUE_NAMES } from '../../../lib/queue/queues';
import { bullPrefix, createRedis } from '../../../lib/redis';
import { jobsProcessor } from '../../../workers/jobsRunner';
import { createWebsite, registerUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';
import { type Mailbox, type SlackReceiver, startMailbox, startSlackReceiver } from '../../helpers/mailbox';

let mailbox: Mailbox;
let slack: SlackReceiver;
let ctx: TestContext;
let site: string;
const OPS = 'ops@example.com';
const NOW = Date.parse('2026-11-25T10:12:00Z');

async function anomaly(
  severity: string,
  metric: string,
  over: { expected: number; actual: number; deviation: number },
) {
  const { rows } = await ctx.pool.query<{ id: string }>(
    `INSERT INTO anomalies (website_id, metric_name, expected_value, actual_value, deviation_percentage, severity,
                            started_at, last_seen_at, detected_at)
     VALUES ($1, $2, $3, $4, $5, $6, '2026-11-25T09:00:00Z', '2026-11-25T09:00:00Z', '2026-11-25T10:07:00Z')
     RETURNING id`,
    [site, metric, over.expected, over.actual, over.deviation, severity],
  );
  return rows[0].id;
}

beforeAll(async () => {
  mailbox = await startMailbox();
  slack = await startSlackReceiver();
  ctx = await createTestContext({ SMTP_URL: mailbox.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
  const owner = await registerUser(ctx, 'pro', 'alerts');
  site = (await createWebsite(ctx, owner, 'alerts.example.com')).id;
  const prefs = await client(ctx.baseUrl)('PUT', `/api/websites/${site}/notifications`, {
    token: owner.token,
    body: {
      anomaly_alerts: true,
      anomaly_min_severity: 'warning',
      report_recipients: [OPS],
      slack_webhook_url: slack.url,
    },
  });
  expect(prefs.status).toBe(200);
});

afterAll(async () => {
  await ctx.close();
  await mailbox.close();
  await slack.close();
});

const run = (now = NOW) => anomalyAlerts(ctx, { websiteId: site }, now);
let warning: string;

describe('the anomaly-alerts job', () => {
  it('sends one alert per anomaly at or above the minimum severity, by email and to Slack', async () => {
    warning = await anomaly('warning', 'visitors', { expected: 100, actual: 250, deviation: 150 });
    await anomaly('info', 'pageviews', { expected: 400, actual: 300, deviation: -25 }); // below the minimum
    expect(await run()).toEqual({ websites: 1, alerts: 2, resolutions: 0, failed: 0, email: 'on' });
    await mailbox.waitFor(1);
    expect(mailbox.messages).toHaveLength(1);
    const [mail] = mailbox.to(OPS);
    expect(mail.subject).toBe('Warning anomaly on alerts.example.com: Visitors 150% above expected');
    expect(mail.text).toContain(
      'Visitors was 250 in the hour from 2026-11-25 09:00 UTC, against about 100 expected (150% above expected).',
    );
    expect(String(mail.html)).toContain('<h1 style="font-size:18px">Warning anomaly on alerts.example.com');
    expect(mail.text).toContain(`Dashboard: ${ctx.config.PUBLIC_URL}/sites/${site}`);
    expect(mail.text).toMatch(/Stop these emails: http:\/\/localhost:\d+\/unsubscribe\//);

    expect(slack.bodies).toHaveLength(1);
    expect(slack.bodies[0].text).toContain('Warning anomaly on alerts.example.com: Visitors 150% above expected');
    expect(slack.bodies[0].blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: expect.stringContaining('*Warning anomaly on') } },
    ]);
    expect(slack.bodies[0].text).not.toContain('unsubscribe');
  });

  it('sends nothing new when run again', async () => {
    expect(await run(NOW + 5 * 60_000)).toEqual({ websites: 1, alerts: 0, resolutions: 0, failed: 0, email: 'on' });
    expect(mailbox.messages).toHaveLength(1);
    expect(slack.bodies).toHaveLength(1);
  });

  it('tells of a resolution once, to whoever got the alert', async () => {
    // An anomaly that resolved before anyone was told of it (info, below the minimum): no resolution either.
    await ctx.pool.query(
      `UPDATE anomalies SET is_resolved = true, resolved_at = '2026-11-25T12:00:00Z' WHERE website_id = $1`,
      [site],
    );
    const later = Date.parse('2026-11-25T12:10:00Z');
    expect(await run(later)).toEqual({ websites: 1, alerts: 0, resolutions: 2, failed: 0, email: 'on' });
    await mailbox.waitFor(2);
    const resolved = mailbox.to(OPS)[1];
    expect(resolved.subject).toBe('Resolved on alerts.example.com: Visitors is back to normal');
    expect(resolved.text).toContain('Visitors has been back within its expected range since 2026-11-25 12:00 UTC.');
    expect(slack.bodies[1].text).toContain('Resolved on alerts.example.com: Visitors is back to normal');
    expect(await run(later + 5 * 60_000)).toMatchObject({ alerts: 0, resolutions: 0 });
    expect(mailbox.messages).toHaveLength(2);
    expect(slack.bodies).toHaveLength(2);
    const { rows } = await ctx.pool.query(
      'SELECT kind, recipient FROM notifications_sent WHERE subject = $1 ORDER BY kind, recipient',
      [warning],
    );
    expect(rows).toEqual([
      { kind: 'anomaly_alert', recipient: OPS },
      { kind: 'anomaly_alert', recipient: 'slack' },
      { kind: 'anomaly_resolved', recipient: OPS },
      { kind: 'anomaly_resolved', recipient: 'slack' },
    ]);
  });

  it('retries a message the receiver refused, and only that one', async () => {
    const critical = await anomaly('critical', 'bounce_rate', { expected: 40, actual: 80, deviation: 100 });
    slack.status = 500;
    await expect(run()).rejects.toThrow('anomaly-alerts: 1 message(s) failed');
    await mailbox.waitFor(3);
    expect(mailbox.to(OPS)[2].subject).toBe('Critical anomaly on alerts.example.com: Bounce rate 100% above expected');
    slack.status = 200;
    expect(await run()).toEqual({ websites: 1, alerts: 1, resolutions: 0, failed: 0, email: 'on' });
    expect(slack.bodies).toHaveLength(3);
    expect(slack.bodies[2].text).toContain('Critical anomaly');
    expect(mailbox.messages).toHaveLength(3);
    await ctx.pool.query('UPDATE anomalies SET is_resolved = true, resolved_at = now() WHERE id = $1', [critical]);
  });
});

describe('scheduled by the clock, sent by the worker', () => {
  it('a worker runs the enqueued job with the configuration and sends', async () => {
    await ctx.pool.query(
      `INSERT INTO anomalies (website_id, metric_name, expected_value, actual_value, deviation_percentage, severity,
                              started_at, last_seen_at, detected_at)
       VALUES ($1, 'error_rate', 1, 9, 800, 'critical', now(), now(), now())`,
      [site],
    );
    const connection = createRedis(ctx.config.REDIS_URL, 'worker', 'tidemark-test-worker');
    const jobCtx: JobContext = {
      pool: ctx.pool,
      clickhouse: ctx.clickhouse,
      redis: connection,
      redisPrefix: ctx.config.REDIS_PREFIX,
      logger: ctx.logger,
      config: ctx.config,
    };
    const worker = new Worker(QUEUE_NAMES.jobs, jobsProcessor(jobCtx), {
      connection,
      prefix: bullPrefix(ctx.config.REDIS_PREFIX),
    });
    const queue = createProducerQueue(QUEUE_NAMES.jobs, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
    try {
      // As the clock enqueues it: an empty scope, the deterministic id.
      const job = await queue.add(
        'anomaly-alerts',
        {},
        { ...SCHEDULED_JOB_OPTIONS, jobId: scheduledJobId('anomaly-alerts', new Date()) },
      );
      const until = Date.now() + 15_000;
      while (!(await job.isCompleted()) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      // The new error-rate anomaly to both targets, and the critical one resolved above to both.
      expect((await queue.getJob(job.id as string))?.returnvalue).toEqual({
        websites: 1,
        alerts: 2,
        resolutions: 2,
        failed: 0,
        email: 'on',
      });
      await mailbox.waitFor(5);
      expect(
        mailbox
          .to(OPS)
          .map((m) => m.subject)
          .slice(3),
      ).toEqual([
        'Resolved on alerts.example.com: Bounce rate is back to normal',
        'Critical anomaly on alerts.example.com: Error rate 800% above expected',
      ]);
      expect(slack.bodies).toHaveLength(5);
    } finally {
      await worker.close();
      await queue.close();
      connection.disconnect();
    }
  });
});

describe('the Slack sender', () => {
  it('refuses loopback, private and link-local addresses unless WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of [slack.url, 'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::1]/x']) {
      await expect(postToSlack(url, { text: 'x' }, { allowPrivate: false })).rejects.toThrow('Slack webhook refused');
    }
    // A public-looking name whose DNS answer is loopback (rebinding) is refused when connecting: the address is
    // judged, not the name.
    const port = new URL(slack.url).port;
    const rebinding = async () => [{ address: '127.0.0.1', family: 4 }];
    await expect(
      postToSlack(`https://hooks.example.com:${port}/x`, { text: 'x' }, { allowPrivate: false, resolver: rebinding }),
    ).rejects.toThrow('the webhook host resolves to a private address');
    expect(slack.bodies).toHaveLength(5);
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const http = await import('node:http');
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    await expect(
      postToSlack(`http://127.0.0.1:${port}/x`, { text: 'x' }, { allowPrivate: true, timeoutMs: 300 }),
    ).rejects.toThrow('did not answer in time');
    expect(Date.now() - started).toBeLessThan(2000);
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
  });
});

describe('the connection-time lookup', () => {
  const lookup = publicOnlyLookup(async () => [
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ]);
  const call = (options: object) =>
    new Promise<unknown[]>((resolve) => {
      (lookup as (h: string, o: object, cb: (...a: unknown[]) => void) => void)('hooks.example.com', options, (...a) =>
        resolve(a),
      );
    });

  it('answers public addresses in both of the shapes net.connect asks for', async () => {
    expect(await call({ all: true })).toEqual([
      null,
      [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    ]);
    expect(await call({ family: 6 })).toEqual([null, '2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6]);
  });

  it('refuses an answer with any private address among public ones', async () => {
    const mixed = publicOnlyLookup(async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);
    const [err] = await new Promise<unknown[]>((resolve) => {
      (mixed as (h: string, o: object, cb: (...a: unknown[]) => void) => void)('x.example.com', { all: true }, (...a) =>
        resolve(a),
      );
    });
    expect((err as Error).message).toBe('the webhook host resolves to a private address');
  });
});

describe('without SMTP_URL', () => {
  it('emails nothing, says so, and still posts to Slack', async () => {
    const quiet = await createTestContext({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const user = await registerUser(quiet, 'pro', 'no-smtp');
      const id = (await createWebsite(quiet, user, 'quiet.example.com')).id;
      await client(quiet.baseUrl)('PUT', `/api/websites/${id}/notifications`, {
        token: user.token,
        body: { anomaly_alerts: true, report_recipients: [OPS], slack_webhook_url: slack.url },
      });
      await quiet.pool.query(
        `INSERT INTO anomalies (website_id, metric_name, expected_value, actual_value, deviation_percentage, severity,
                                started_at, last_seen_at, detected_at)
         VALUES ($1, 'pageviews', 10, 40, 300, 'critical', now(), now(), now())`,
        [id],
      );
      const before = mailbox.messages.length;
      expect(await anomalyAlerts(quiet, {})).toEqual({
        websites: 1,
        alerts: 1,
        resolutions: 0,
        failed: 0,
        email: EMAIL_OFF,
      });
      expect(mailbox.messages.length).toBe(before);
      const { rows } = await quiet.pool.query('SELECT recipient FROM notifications_sent');
      expect(rows).toEqual([{ recipient: 'slack' }]);
    } finally {
      await quiet.close();
    }
  });
});
